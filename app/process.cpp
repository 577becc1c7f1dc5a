#include "app/process.hpp"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string_view>
#include <thread>

#include "lib/core/base/output.hpp"

extern char** environ;

namespace roofline::app {
namespace {

constexpr int kTerminationSignals[] = {SIGINT, SIGTERM, SIGHUP};

// The children to forward to (0: a free slot), what was received, how many holds.
constexpr std::size_t kMaxChildren = 256;
std::atomic<pid_t> children[kMaxChildren];
std::atomic<int> received{0};
std::atomic<int> deferred{0};
static_assert(std::atomic<pid_t>::is_always_lock_free && std::atomic<int>::is_always_lock_free);

void on_termination(int number, siginfo_t* info, void* /*context*/) {
  // A signal from the terminal (Ctrl-C, a hangup) went to the whole foreground process group,
  // the children included: they are not sent it twice.
  const bool from_terminal = info != nullptr && info->si_code == SI_KERNEL;
  bool forwarded = false;
  for (std::atomic<pid_t>& child : children)
    if (const pid_t pid = child.load(); pid > 0) {
      if (!from_terminal) ::kill(pid, number);
      forwarded = true;
    }
  if (!forwarded && deferred.load() == 0) {
    remove_staged_files();
    ::_exit(128 + number);
  }
  received.store(number);
}

// Blocks the termination signals while alive (a child is started and registered as one step).
class BlockTermination {
 public:
  BlockTermination() {
    sigset_t set;
    sigemptyset(&set);
    for (int number : kTerminationSignals) sigaddset(&set, number);
    ::pthread_sigmask(SIG_BLOCK, &set, &old_);
  }
  ~BlockTermination() { ::pthread_sigmask(SIG_SETMASK, &old_, nullptr); }
  BlockTermination(const BlockTermination&) = delete;
  BlockTermination& operator=(const BlockTermination&) = delete;

 private:
  sigset_t old_;
};

// posix_spawn's argument lists, owning nothing: pointers into `strings`.
std::vector<char*> pointers(std::vector<std::string>& strings) {
  std::vector<char*> out;
  for (std::string& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

// This process's environment with `entries` set over it.
std::vector<std::string> environment_with(const std::vector<std::string>& entries) {
  std::vector<std::string> out;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string_view entry(*e);
    const std::string_view name = entry.substr(0, entry.find('='));
    const bool replaced = std::any_of(entries.begin(), entries.end(), [&](const std::string& s) {
      return std::string_view(s).substr(0, s.find('=')) == name;
    });
    if (!replaced) out.emplace_back(entry);
  }
  out.insert(out.end(), entries.begin(), entries.end());
  return out;
}

}  // namespace

void install_signal_handlers() {
  struct sigaction action {};
  action.sa_sigaction = on_termination;
  sigemptyset(&action.sa_mask);
  for (int number : kTerminationSignals) sigaddset(&action.sa_mask, number);
  action.sa_flags = SA_RESTART | SA_SIGINFO;
  for (int number : kTerminationSignals) ::sigaction(number, &action, nullptr);
  ::signal(SIGPIPE, SIG_IGN);
}

int pending_signal() {
  return received.load();
}

int take_pending_signal() {
  return received.exchange(0);
}

void throw_if_interrupted() {
  if (const int number = received.exchange(0)) throw Interrupted(number);
}

DeferSignals::DeferSignals() {
  deferred.fetch_add(1);
}
DeferSignals::~DeferSignals() {
  deferred.fetch_sub(1);
}

std::string ChildStatus::describe() const {
  if (exited) return "exited with status " + std::to_string(exit_code);
  const char* name = sigabbrev_np(signal);
  return "was killed by signal " + std::to_string(signal) +
         (name != nullptr ? std::string(" (SIG") + name + ")" : std::string());
}

ChildProcess::ChildProcess(const SpawnOptions& options) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  if (!options.stdin_path.empty())
    posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, options.stdin_path.c_str(), O_RDONLY,
                                     0);
  if (!options.stdout_path.empty())
    posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, options.stdout_path.c_str(), O_WRONLY,
                                     0);
  if (!options.stderr_path.empty())
    posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, options.stderr_path.c_str(),
                                     O_WRONLY | O_CREAT | O_TRUNC, 0600);
  if (options.pass_fd >= 0)
    posix_spawn_file_actions_adddup2(&actions, options.pass_fd, options.pass_fd_as);
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  sigset_t none, defaults;
  sigemptyset(&none);
  sigemptyset(&defaults);
  for (int number : kTerminationSignals) sigaddset(&defaults, number);
  sigaddset(&defaults, SIGPIPE);
  sigaddset(&defaults, SIGQUIT);
  posix_spawnattr_setsigmask(&attributes, &none);
  posix_spawnattr_setsigdefault(&attributes, &defaults);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);

  std::vector<std::string> argv = options.argv;
  std::vector<std::string> env = environment_with(options.env);
  const std::vector<char*> argv_pointers = pointers(argv);
  const std::vector<char*> env_pointers = pointers(env);
  int status = 0;
  {
    const BlockTermination blocked;  // a signal now finds the child registered
    status = posix_spawn(&pid_, argv.at(0).c_str(), &actions, &attributes, argv_pointers.data(),
                         env_pointers.data());
    if (status == 0)
      for (std::size_t i = 0; i < kMaxChildren && slot_ < 0; ++i) {
        pid_t expected = 0;
        if (children[i].compare_exchange_strong(expected, pid_)) slot_ = static_cast<int>(i);
      }
  }
  posix_spawnattr_destroy(&attributes);
  posix_spawn_file_actions_destroy(&actions);
  if (status != 0) {
    pid_ = -1;
    throw std::runtime_error("cannot start " + options.argv[0] + ": " + std::strerror(status));
  }
}

ChildProcess::~ChildProcess() {
  if (pid_ > 0) wait();
}

ChildStatus ChildProcess::wait() {
  return *wait_for(0);
}

std::optional<ChildStatus> ChildProcess::poll() {
  return wait_for(WNOHANG);
}

std::optional<ChildStatus> ChildProcess::wait_for(int options) {
  ChildStatus out;
  if (pid_ <= 0) return out;
  int status = 0;
  pid_t got = 0;
  while ((got = ::waitpid(pid_, &status, options)) < 0 && errno == EINTR) {
  }
  if (got == 0) return std::nullopt;
  release();
  out.exited = got > 0 && WIFEXITED(status);
  out.exit_code = out.exited ? WEXITSTATUS(status) : 0;
  out.signal = got > 0 && WIFSIGNALED(status) ? WTERMSIG(status) : 0;
  if (!out.exited && out.signal == 0) out.signal = SIGKILL;  // lost (waitpid failed)
  return out;
}

void ChildProcess::signal(int number) const {
  if (pid_ > 0) ::kill(pid_, number);
}

void ChildProcess::release() {
  if (slot_ >= 0) children[slot_].store(0);
  slot_ = -1;
  pid_ = -1;
}

namespace {

// The pids whose parent is this process, from /proc (field 4 of /proc/PID/stat, after the
// command name in parentheses, which may hold spaces and parentheses itself).
std::vector<pid_t> own_children() {
  std::vector<pid_t> out;
  const pid_t self = ::getpid();
  std::error_code error;
  for (std::filesystem::directory_iterator it("/proc", error), end; !error && it != end;
       it.increment(error)) {
    const std::string name = it->path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream stat(it->path() / "stat");
    std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
    const std::size_t close = text.rfind(')');
    if (close == std::string::npos) continue;
    char state = 0;
    long parent = 0;
    if (std::sscanf(text.c_str() + close + 1, " %c %ld", &state, &parent) == 2 && parent == self)
      out.push_back(static_cast<pid_t>(std::stol(name)));
  }
  return out;
}

}  // namespace

void adopt_orphans() {
  ::prctl(PR_SET_CHILD_SUBREAPER, 1);
}

int end_adopted(int signal, std::chrono::milliseconds grace) {
  const std::vector<pid_t> left = own_children();
  for (pid_t pid : left) ::kill(pid, signal);
  const auto deadline = std::chrono::steady_clock::now() + grace;
  std::size_t reaped = 0;
  while (reaped < left.size()) {
    int status = 0;
    const pid_t got = ::waitpid(-1, &status, WNOHANG);
    if (got > 0) {
      ++reaped;
      continue;
    }
    if (got < 0 && errno != EINTR) break;  // no child left
    if (std::chrono::steady_clock::now() >= deadline) {
      for (pid_t pid : own_children()) ::kill(pid, SIGKILL);
      while (::waitpid(-1, &status, 0) > 0 || errno == EINTR) {
      }
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return static_cast<int>(left.size());
}

}  // namespace roofline::app
