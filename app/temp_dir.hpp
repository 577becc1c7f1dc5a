// A temporary directory of the tool's own: created under $TMPDIR (else /tmp), removed with
// everything in it. While one exists, termination signals are held back (process.hpp), so that
// the directory is removed before the tool exits.
#pragma once

#include <filesystem>
#include <string>

#include "app/process.hpp"

namespace roofline::app {

class TempDir {
 public:
  // `prefix` names the directory ("cuflash-profile" gives /tmp/cuflash-profile.XXXXXX).
  // Throws InputError when it cannot be created.
  explicit TempDir(const std::string& prefix);
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  DeferSignals deferred_;
  std::filesystem::path path_;
};

}  // namespace roofline::app
