// Issue 20, processes and options: `profile`'s options checked before the program starts, its
// environment faults (record directory removed, a FIFO in it) as input errors, one line per
// error, and termination signals forwarded to the program and the workers, their temporary
// directories and files removed, exit 128 + N.
#include <doctest/doctest.h>

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <functional>
#include <thread>

#include "app/fanout.hpp"
#include "app/options.hpp"
#include "app/process.hpp"
#include "lib/core/base/errors.hpp"
#include "lib/core/base/text.hpp"
#include "lib/profile/profile_protocol.hpp"
#include "tests/unit/helpers.hpp"

using namespace roofline;
namespace fs = std::filesystem;

namespace {

std::string script(const TempDir& dir, const std::string& name, const std::string& body) {
  const fs::path path = dir.path / name;
  write_text(path, "#!/bin/sh\n" + body + "\n");
  ::chmod(path.c_str(), 0755);
  return path.string();
}

CliResult profile(std::vector<std::string> args) {
  return profile_with_stand_in(std::move(args));
}

bool wait_for(const std::function<bool()>& condition) {
  for (int i = 0; i < 1000 && !condition(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  return condition();
}

bool names_like(const fs::path& dir, const std::string& prefix) {
  for (const auto& entry : fs::directory_iterator(dir))
    if (entry.path().filename().string().rfind(prefix, 0) == 0) return true;
  return false;
}

}  // namespace

TEST_CASE("profile: bad options are refused before the program runs") {
  TempDir dir;
  const std::string marker = (dir.path / "ran").string();
  const std::string program = script(dir, "p.sh", "touch " + marker);
  struct Case {
    std::vector<std::string> args;
    std::string message;
  } cases[] = {
      {{"--kernel-regex", "("}, "--kernel-regex \"(\": not a valid regular expression"},
      {{"--kernel-regex", "(a+)+$"}, "a repeated group that holds a repeat"},
      {{"--kernel-regex", "(x(a*)b)*"}, "a repeated group that holds a repeat"},
      {{"--kernel-regex", "(a)\\1"}, "backreferences are refused"},
      {{"--kernel-regex", "h|.**v"}, "a repeat of a repeat"},  // the fuzz finding
      {{"--kernel-regex", "a+{2,}"}, "a repeat of a repeat"},
      {{"--kernel-regex", "[]***]"}, "a repeat of a repeat"},  // a fuzz finding: [] is a class
      {{"--kernel-regex", ".*a.*b.*c.*d.*e.*f.*g"}, "more than 6 repeats"},
      {{"--kernel-regex", "a{5000}"}, "counts above 1000"},
      {{"--kernel-regex", "a{1,99999999999999999999}"}, "counts above 1000"},  // a fuzz finding
      {{"--launch-skip", "0x10"}, "must be a decimal integer from 0 to"},
      {{"--launch-skip", "99999999999999999999"}, "must be a decimal integer from 0 to"},
      {{"--launch-skip", "-1"}, "must be a decimal integer from 0 to"},
      {{"--launch-skip", "+-5"}, "must be a decimal integer from 0 to"},
      {{"--launch-skip", " 5"}, "must be a decimal integer from 0 to"},
      {{"--launch-count", "-2"}, "must be a decimal integer from -1 to"},
  };
  for (const Case& c : cases) {
    CAPTURE(join(c.args, " "));
    std::vector<std::string> args = c.args;
    args.insert(args.end(), {"--", program});
    expect_input_error(profile(args), c.message);
    CHECK_FALSE(fs::exists(marker));
  }
  // Patterns that only look alike are accepted (the program then runs: no CUDA, exit 2).
  for (const std::string pattern :
       {"flash.*fwd", "(ab)+", "[(a+)+]", "\\(a+\\)+", "(a+)?", "(?:fwd|bwd)_kernel", "a+?b"}) {
    CAPTURE(pattern);
    CHECK_NOTHROW(app::check_kernel_regex(pattern));
  }
  for (const std::string& injection :
       {std::string("/etc/passwd"), std::string("/bin/sh"), std::string("")}) {
    CAPTURE(injection);
    const CliResult r = cli({"profile", "--injection", injection, "--", program});
    expect_input_error(r, "--injection");
    CHECK_FALSE(fs::exists(marker));
  }
}

TEST_CASE("profile: the record directory removed, or a FIFO in it, is an input error") {
  TempDir dir;
  expect_input_error(
      profile({"--", script(dir, "rm.sh", "rm -rf \"$CUFLASH_ROOFLINE_PROFILE_DIR\"")}),
      "was it removed during the run?");
  const auto started = std::chrono::steady_clock::now();
  expect_input_error(
      profile({"--", script(dir, "fifo.sh", "mkfifo \"$CUFLASH_ROOFLINE_PROFILE_DIR/9.jsonl\"")}),
      "not a regular file");
  CHECK(std::chrono::steady_clock::now() - started < std::chrono::seconds(10));
}

TEST_CASE("profile: an error of the program's process is one line, not a warning and an error") {
  TempDir dir;
  write_text(dir.path / "records",
             process_record(1, 1, "app") + error_record(ProfileErrorKind::kNotPermitted,
                                                        "CUPTI_ERROR_INSUFFICIENT_PRIVILEGES"));
  const CliResult r = profile({"--", script(dir, "denied.sh",
                                            "cat " + (dir.path / "records").string() +
                                                " > \"$CUFLASH_ROOFLINE_PROFILE_DIR/$$.jsonl\"")});
  CHECK(r.code == 3);
  CHECK(r.err == "error: profile: CUPTI_ERROR_INSUFFICIENT_PRIVILEGES\n");
}

TEST_CASE("specs: a looping link or unreadable --specs-dir is exit 2, one line") {
  TempDir dir;
  fs::create_symlink(dir.path / "loop", dir.path / "loop");
  CliResult r = cli({"--specs-dir", (dir.path / "loop").string(), "specs", "list"});
  CHECK(r.code == 2);
  CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  fs::create_directory(dir.path / "specs");
  fs::create_symlink(dir.path / "specs" / "x.json", dir.path / "specs" / "x.json");
  r = cli({"--specs-dir", (dir.path / "specs").string(), "specs", "list"});
  expect_input_error(r, "x.json");
  if (::geteuid() != 0) {  // root reads any directory
    fs::remove(dir.path / "specs" / "x.json");
    ::chmod((dir.path / "specs").c_str(), 0);
    r = cli({"--specs-dir", (dir.path / "specs").string(), "specs", "list"});
    ::chmod((dir.path / "specs").c_str(), 0755);
    CHECK(r.code == 2);
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  }
}

TEST_CASE("signals: profile forwards SIGINT, SIGTERM and SIGHUP, cleans up, exits 128 + N") {
  for (int number : {SIGINT, SIGTERM, SIGHUP}) {
    CAPTURE(number);
    TempDir dir;
    fs::create_directory(dir.path / "tmp");
    const fs::path pid_file = dir.path / "pid";
    const std::string program =
        script(dir, "p.sh",
               "echo $$ > " + pid_file.string() + ".new; mv " + pid_file.string() + ".new " +
                   pid_file.string() + "; exec sleep 30");
    app::SpawnOptions options;
    options.argv = {ROOFLINE_BINARY,
                    "profile",
                    "--injection",
                    ROOFLINE_FAKE_INJECTION,
                    "--json",
                    (dir.path / "out.json").string(),
                    "--",
                    program};
    options.env = {"TMPDIR=" + (dir.path / "tmp").string()};
    options.stderr_path = dir.path / "stderr.txt";
    app::ChildProcess tool(options);
    REQUIRE(wait_for([&] { return fs::exists(pid_file); }));
    const pid_t program_pid = std::stoi(read_text(pid_file));
    CHECK(names_like(dir.path / "tmp", "cuflash-profile."));
    tool.signal(number);
    const app::ChildStatus status = tool.wait();
    CHECK(status.code() == 128 + number);
    CHECK(fs::is_empty(dir.path / "tmp"));
    CHECK_FALSE(fs::exists(dir.path / "out.json"));
    CHECK(::kill(program_pid, 0) != 0);  // ended, and reaped by the tool
    const std::string err = read_text(dir.path / "stderr.txt");
    CHECK(std::count(err.begin(), err.end(), '\n') == 1);
    CHECK(err.rfind("error: interrupted by signal " + std::to_string(number), 0) == 0);
  }
}

TEST_CASE("signals: the program's own children end with it, nothing left in the records") {
  // The program starts a child that writes into the run's record directory for ever; SIGTERM to
  // the tool reaches the program; its child, orphaned, is adopted, sent it too and reaped
  // before the directory is removed.
  TempDir dir;
  fs::create_directory(dir.path / "tmp");
  const fs::path pid_file = dir.path / "pid";
  const std::string program =
      script(dir, "p.sh",
             "(while true; do date >> \"$CUFLASH_ROOFLINE_PROFILE_DIR/late.txt\"; sleep 0.01; "
             "done) </dev/null >/dev/null 2>&1 & "
             "echo $! > " +
                 pid_file.string() + ".new; mv " + pid_file.string() + ".new " + pid_file.string() +
                 "; sleep 30");
  app::SpawnOptions options;
  options.argv = {ROOFLINE_BINARY,         "profile", "--injection",
                  ROOFLINE_FAKE_INJECTION, "--",      program};
  options.env = {"TMPDIR=" + (dir.path / "tmp").string()};
  options.stderr_path = dir.path / "stderr.txt";
  app::ChildProcess tool(options);
  REQUIRE(wait_for([&] { return fs::exists(pid_file); }));
  const pid_t grandchild = std::stoi(read_text(pid_file));
  tool.signal(SIGTERM);
  CHECK(tool.wait().code() == 128 + SIGTERM);
  CHECK(::kill(grandchild, 0) != 0);  // ended, and reaped by the tool
  CHECK(fs::is_empty(dir.path / "tmp"));
}

TEST_CASE("signals: a write killed mid-way leaves no temporary file") {
  // --json is staged (a temporary file beside it) while --csv waits for a reader of its FIFO.
  TempDir dir;
  const fs::path fifo = dir.path / "fifo";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  app::SpawnOptions options;
  options.argv = {ROOFLINE_BINARY, "model",      "--gpu",
                  "h100",          "--json",     (dir.path / "out.json").string(),
                  "--csv",         fifo.string()};
  options.stderr_path = "/dev/null";
  app::ChildProcess tool(options);
  REQUIRE(wait_for([&] { return names_like(dir.path, ".cfr."); }));
  tool.signal(SIGTERM);
  CHECK(tool.wait().code() == 128 + SIGTERM);
  CHECK_FALSE(names_like(dir.path, ".cfr."));
  CHECK_FALSE(fs::exists(dir.path / "out.json"));
}

TEST_CASE("signals: run --devices's workers get the signal, the pool reports it") {
  app::install_signal_handlers();
  TempDir dir;
  app::WorkerJob job;
  job.points = {0};
  job.report = dir.path / "w.json";
  job.log = dir.path / "w.log";
  job.argv = {"/bin/sh", "-c", "echo started >&2; exec sleep 30"};
  std::vector<app::WorkerJob> jobs = {job, job};
  jobs[1].log = dir.path / "w1.log";
  app::WorkerPool pool(jobs);
  REQUIRE(wait_for([&] {
    return read_text(jobs[0].log) == "started\n" && read_text(jobs[1].log) == "started\n";
  }));
  ::raise(SIGTERM);  // forwarded to both workers (they are registered children)
  bool interrupted = false;
  try {
    pool.wait({Row{}});
  } catch (const app::Interrupted& e) {
    interrupted = e.signal() == SIGTERM;
  }
  CHECK(interrupted);
  for (int number : {SIGINT, SIGTERM, SIGHUP}) ::signal(number, SIG_DFL);
  ::signal(SIGPIPE, SIG_DFL);
}
