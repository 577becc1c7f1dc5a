// Running the program under test for `profile`: finding it, finding the injection library,
// starting it with the profiling environment, and waiting for it.
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace roofline::app {

// The path execv will run: NAME with a '/' as given, else the first match on $PATH. Throws
// InputError "PROGRAM: not found" or "PROGRAM: not executable".
std::string resolve_program(const std::string& name);

// libcuflash_roofline_inject.so: `option` when given (must exist), else next to this
// executable, else in ../lib (an install). Throws InputError naming where it looked.
std::filesystem::path find_injection_library(const std::string& option);

// A directory of its own under $TMPDIR (or /tmp), removed with everything in it.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

struct ChildStatus {
  bool exited = false;  // exited through exit(); otherwise killed by `signal`
  int exit_code = 0;
  int signal = 0;
  bool ok() const { return exited && exit_code == 0; }
  std::string describe() const;  // "exited with status 3", "was killed by signal 11 (SIGSEGV)"
};

// Runs `program` (resolved) with argv (argv[0] included) and these variables added to the
// environment, and waits for it. While it runs, SIGINT and SIGQUIT are ignored here (the
// terminal sends them to the program too), so that its rows are still written.
ChildStatus run_program(const std::string& program, const std::vector<std::string>& argv,
                        const std::map<std::string, std::string>& environment);

}  // namespace roofline::app
