// Child processes of the tool (the program under `profile`, the workers of `run --devices`) and
// what SIGINT, SIGTERM and SIGHUP do to it.
//
// Signals (install_signal_handlers, from main): while a child runs, the signal is forwarded to
// every child (unless it came from the terminal, which sent it to them too) and noted; the code
// waiting for them sees it (throw_if_interrupted) once they have ended and unwinds, removing its
// temporary directories, and the tool exits with 128 + the signal's number. While a TempDir exists
// the signal is noted in the same way (acted on at the next check, at the latest when the command
// returns). Otherwise the staged output files are removed (output.hpp) and the tool exits with 128
// + N at once.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <exception>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace roofline::app {

// The termination signals' handlers, and SIGPIPE ignored (a closed pipe is a failed write,
// exit 2, not a silent death).
void install_signal_handlers();

// The termination signal received and not yet acted on (0: none); take_: now taken, the
// caller acts on it.
int pending_signal();
int take_pending_signal();

// Thrown by throw_if_interrupted; run_cli maps it to exit code 128 + signal.
class Interrupted : public std::exception {
 public:
  explicit Interrupted(int signal) : signal_(signal) {}
  int signal() const { return signal_; }
  const char* what() const noexcept override { return "interrupted"; }

 private:
  int signal_;
};

// Throws Interrupted for a termination signal received and not yet acted on.
void throw_if_interrupted();

// Holds termination signals back while alive (see above); TempDir holds one.
class DeferSignals {
 public:
  DeferSignals();
  ~DeferSignals();
  DeferSignals(const DeferSignals&) = delete;
  DeferSignals& operator=(const DeferSignals&) = delete;
};

// The program's own children outlive it when a signal ends it (a forwarded SIGTERM reaches
// the program alone; its children run on as orphans). adopt_orphans() makes this process the
// reaper of its descendants' orphans (PR_SET_CHILD_SUBREAPER, Linux), so that they become its
// children; end_adopted(signal) then sends each child left the signal, waits for them up to
// `grace`, kills those still running (SIGKILL) and reaps them all: none is left to write into
// a directory that is about to be removed. Returns how many it found.
void adopt_orphans();
int end_adopted(int signal, std::chrono::milliseconds grace);

// How a child ended.
struct ChildStatus {
  bool exited = false;  // exited through exit(); otherwise killed by `signal`
  int exit_code = 0;
  int signal = 0;
  bool ok() const { return exited && exit_code == 0; }
  int code() const { return exited ? exit_code : 128 + signal; }  // as a shell shows it
  std::string describe() const;  // "exited with status 3", "was killed by signal 11 (SIGSEGV)"
};

struct SpawnOptions {
  std::vector<std::string> argv;      // argv[0] is the program: a path, not looked up on PATH
  std::vector<std::string> env;       // "NAME=value", set over this process's environment
  std::filesystem::path stdin_path;   // empty: inherited
  std::filesystem::path stdout_path;  // empty: inherited
  std::filesystem::path stderr_path;  // empty: inherited; else created (truncated), mode 0600
  int pass_fd = -1;                   // given to the child as descriptor `pass_fd_as`
  int pass_fd_as = -1;
};

// A child started with posix_spawn: signal dispositions and mask at their defaults (SIGPIPE
// too), registered for the forwarding of termination signals until it has been waited for.
class ChildProcess {
 public:
  // Throws std::runtime_error("cannot start PROGRAM: reason").
  explicit ChildProcess(const SpawnOptions& options);
  // Waits for a child still running (never a zombie), unless released.
  ~ChildProcess();
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  ChildStatus wait();
  // The status once the child has ended; nullopt while it runs.
  std::optional<ChildStatus> poll();
  void signal(int number) const;
  // Leaves the rest of the child's life to it: no more forwarding, no wait (the system reaps
  // it when this process ends).
  void release();

 private:
  std::optional<ChildStatus> wait_for(int options);
  pid_t pid_ = -1;
  int slot_ = -1;
};

}  // namespace roofline::app
