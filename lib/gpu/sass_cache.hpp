// nvdisasm's listings kept on disk between runs: disassembling a large cubin takes nvdisasm one
// to two seconds, most of what a stall pass of one point costs, and a build's cubins do not
// change between runs. A listing is filed under a hash of the cubin's bytes, the function and
// the nvdisasm that wrote it, so a rebuilt kernel or another toolkit never reads a stale one.
//
// The directory: $ROOFLINE_SASS_CACHE ("off" or empty: no cache), else
// $XDG_CACHE_HOME/cuflash-roofline/sass, else $HOME/.cache/cuflash-roofline/sass. Best effort:
// a directory that cannot be made or written leaves every lookup a miss, never an error, and a
// listing is written to a temporary name and renamed, so a reader never sees half of one.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

namespace roofline::gpu {

class SassListingCache {
 public:
  // The directory from the environment (see above); disabled when it names none.
  SassListingCache();
  explicit SassListingCache(std::filesystem::path directory);  // empty: disabled

  bool enabled() const { return !directory_.empty(); }
  const std::filesystem::path& directory() const { return directory_; }

  // The file name of the listing of `function` in `cubin` by the nvdisasm at `nvdisasm`.
  static std::string key(const std::string& cubin, const std::string& function,
                         const std::string& nvdisasm);
  std::optional<std::string> find(const std::string& key) const;
  void store(const std::string& key, const std::string& listing) const;

 private:
  std::filesystem::path directory_;
};

}  // namespace roofline::gpu
