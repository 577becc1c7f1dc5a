#include "app/profile_process.hpp"

#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "lib/core/base/errors.hpp"
#include "lib/core/base/text.hpp"

namespace roofline::app {
namespace {

constexpr const char* kInjectionName = "libcuflash_roofline_inject.so";

bool is_regular_file(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

}  // namespace

std::string resolve_program(const std::string& name) {
  if (name.empty()) throw InputError("profile: no program given");
  auto check = [&](const std::string& path) {
    if (!is_regular_file(path)) return false;
    if (::access(path.c_str(), X_OK) != 0) throw InputError(name + ": not executable");
    return true;
  };
  if (name.find('/') != std::string::npos) {
    if (!check(name)) throw InputError(name + ": not found");
    return name;
  }
  const char* path_variable = std::getenv("PATH");
  for (const std::string& dir :
       split(path_variable != nullptr ? path_variable : "/usr/bin:/bin", ':')) {
    const std::string candidate = (dir.empty() ? "." : dir) + "/" + name;
    if (is_regular_file(candidate) && ::access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  throw InputError(name + ": not found on PATH");
}

std::filesystem::path find_injection_library(const std::string& option) {
  namespace fs = std::filesystem;
  if (!option.empty()) {
    if (!is_regular_file(option)) throw InputError("--injection " + option + ": no such file");
    return fs::absolute(option);
  }
  std::error_code error;
  const fs::path self = fs::read_symlink("/proc/self/exe", error);
  std::vector<fs::path> candidates;
  if (!error) {
    candidates.push_back(self.parent_path() / kInjectionName);
    candidates.push_back(self.parent_path().parent_path() / "lib" / kInjectionName);
  }
  for (const fs::path& candidate : candidates)
    if (is_regular_file(candidate.string())) return candidate;
  std::string looked;
  for (const fs::path& candidate : candidates)
    looked += (looked.empty() ? "" : ", ") + candidate.string();
  throw InputError(std::string(kInjectionName) + " not found (looked in " + looked +
                   "; a build without CUDA has none): pass --injection PATH");
}

TempDir::TempDir() {
  const char* base = std::getenv("TMPDIR");
  std::string pattern =
      std::string(base != nullptr && *base != '\0' ? base : "/tmp") + "/cuflash-profile.XXXXXX";
  if (::mkdtemp(pattern.data()) == nullptr)
    throw InputError("cannot create a directory like " + pattern + ": " + std::strerror(errno));
  path_ = pattern;
}

TempDir::~TempDir() {
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

std::string ChildStatus::describe() const {
  if (exited) return "exited with status " + std::to_string(exit_code);
  const char* name = sigabbrev_np(signal);
  return "was killed by signal " + std::to_string(signal) +
         (name != nullptr ? std::string(" (SIG") + name + ")" : std::string());
}

ChildStatus run_program(const std::string& program, const std::vector<std::string>& argv,
                        const std::map<std::string, std::string>& environment) {
  std::vector<char*> args;
  for (const std::string& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
  args.push_back(nullptr);
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
  if (pid == 0) {
    for (const auto& [name, value] : environment) ::setenv(name.c_str(), value.c_str(), 1);
    ::execv(program.c_str(), args.data());
    const std::string message = "error: cannot run " + program + ": " + std::strerror(errno) + "\n";
    (void)!::write(STDERR_FILENO, message.data(), message.size());
    ::_exit(127);
  }
  struct sigaction ignore {
  }, old_int{}, old_quit{};
  ignore.sa_handler = SIG_IGN;
  ::sigaction(SIGINT, &ignore, &old_int);
  ::sigaction(SIGQUIT, &ignore, &old_quit);
  int status = 0;
  pid_t done = 0;
  do {
    done = ::waitpid(pid, &status, 0);
  } while (done < 0 && errno == EINTR);
  ::sigaction(SIGINT, &old_int, nullptr);
  ::sigaction(SIGQUIT, &old_quit, nullptr);
  if (done < 0) throw std::runtime_error(std::string("waitpid: ") + std::strerror(errno));
  ChildStatus out;
  out.exited = WIFEXITED(status);
  out.exit_code = out.exited ? WEXITSTATUS(status) : 0;
  out.signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
  return out;
}

}  // namespace roofline::app
