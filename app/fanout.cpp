#include "app/fanout.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <limits>
#include <map>
#include <memory>
#include <set>
#include <thread>

#include "app/process.hpp"
#include "lib/core/base/errors.hpp"
#include "lib/core/base/text.hpp"
#include "lib/core/report/merge.hpp"
#include "lib/core/report/report_read.hpp"

namespace roofline::app {

// A worker process (ChildProcess) and the read end of a pipe whose write end it holds as
// descriptor kDoneFd (named in kWorkerDoneFdVariable).
class Process {
 public:
  static constexpr int kDoneFd = 3;

  // Throws std::runtime_error with the reason when the program cannot be started.
  explicit Process(const WorkerJob& job) {
    int pipe_fds[2];
    if (::pipe2(pipe_fds, O_CLOEXEC) != 0)
      throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
    done_ = pipe_fds[0];
    ::fcntl(done_, F_SETFL, O_NONBLOCK);
    SpawnOptions options;
    options.argv = job.argv;
    options.env = job.env;
    options.env.push_back(std::string(kWorkerDoneFdVariable) + "=" + std::to_string(kDoneFd));
    options.stdin_path = "/dev/null";
    options.stdout_path = "/dev/null";
    options.stderr_path = job.log;
    options.pass_fd = pipe_fds[1];
    options.pass_fd_as = kDoneFd;
    try {
      child_ = std::make_unique<ChildProcess>(options);
    } catch (...) {
      ::close(pipe_fds[1]);
      ::close(done_);
      throw;
    }
    ::close(pipe_fds[1]);
  }
  Process(const Process&) = delete;
  Process& operator=(const Process&) = delete;
  ~Process() {
    child_.reset();  // waits for a worker that has not said it is done
    ::close(done_);
  }
  void signal(int number) const { child_->signal(number); }
  // True once the child has said its report is written (it then only has its exit left, which
  // is left to it).
  bool said_done() {
    if (said_done_) return true;
    char c = 0;
    while (true) {
      const ssize_t got = ::read(done_, &c, 1);
      if (got < 0 && errno == EINTR) continue;
      said_done_ = got == 1 && c == kWorkerDoneSignal;
      if (said_done_) child_->release();
      return said_done_;
    }
  }
  // The exit code (or 128 + signal) once the process has ended, nullopt while it runs.
  std::optional<int> poll() {
    const std::optional<ChildStatus> status = child_->poll();
    if (!status) return std::nullopt;
    return status->code();
  }

 private:
  std::unique_ptr<ChildProcess> child_;
  int done_ = -1;
  bool said_done_ = false;
};

void signal_worker_done() {
  const char* text = std::getenv(kWorkerDoneFdVariable);
  if (text == nullptr) return;
  const int fd = std::atoi(text);
  if (fd <= STDERR_FILENO) return;
  const char c = kWorkerDoneSignal;
  while (::write(fd, &c, 1) < 0 && errno == EINTR) {
  }
  ::close(fd);
}

namespace {

// A whole number of at most 9 digits; nullopt otherwise.
std::optional<long> whole_number(const std::string& text) {
  if (text.empty() || text.size() > 9 || text.find_first_not_of("0123456789") != std::string::npos)
    return std::nullopt;
  return std::stol(text);
}

// The last non-empty line of a worker's stderr, at most 300 bytes, control characters shown
// as '?' (it becomes part of a row's message).
std::string last_line(const std::filesystem::path& log) {
  std::ifstream in(log);
  std::string line, last;
  while (std::getline(in, line))
    if (line.find_first_not_of(" \t\r") != std::string::npos) last = line;
  if (last.size() > 300) last = last.substr(0, 300) + "...";
  for (char& c : last)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
  return last;
}

// Empty when the report holds exactly `points` of the sweep, in order; else why not.
std::string check_rows(const Report& report, const std::vector<std::size_t>& points,
                       const std::vector<Row>& sweep_rows) {
  if (report.rows.size() != points.size())
    return "its report has " + std::to_string(report.rows.size()) + " rows for " +
           std::to_string(points.size()) + " points";
  for (std::size_t i = 0; i < points.size(); ++i) {
    const Row& expected = sweep_rows[points[i]];
    const Row& got = report.rows[i];
    if (got.kernel != expected.kernel || !(got.workload == expected.workload))
      return "its report has " + got.kernel + " " + got.workload.label() + " where " +
             expected.kernel + " " + expected.workload.label() + " was asked for";
  }
  return "";
}

}  // namespace

std::vector<int> parse_devices(const std::string& text, int available) {
  std::vector<int> devices;
  if (text == "all") {
    for (int d = 0; d < available; ++d) devices.push_back(d);
    if (devices.empty()) throw InputError("--devices all: no CUDA device");
    return devices;
  }
  for (const std::string& part : split(text, ',')) {
    const auto ordinal = whole_number(part);
    if (!ordinal)
      throw InputError("--devices must be \"all\" or ordinals such as 0,1 (got \"" +
                       text.substr(0, 40) + "\")");
    if (std::find(devices.begin(), devices.end(), *ordinal) != devices.end())
      throw InputError("--devices names device " + part + " twice");
    devices.push_back(static_cast<int>(*ordinal));
  }
  return devices;
}

std::vector<std::size_t> parse_points(const std::string& text, std::size_t count) {
  std::vector<std::size_t> points;
  if (text.empty()) return points;
  for (const std::string& part : split(text, ',')) {
    const auto index = whole_number(part);
    if (!index || static_cast<std::size_t>(*index) >= count ||
        (!points.empty() && static_cast<std::size_t>(*index) <= points.back()))
      throw InputError("--points must be ascending sweep indices below " + std::to_string(count) +
                       " (got \"" + text.substr(0, 40) + "\")");
    points.push_back(static_cast<std::size_t>(*index));
  }
  return points;
}

std::string points_text(const std::vector<std::size_t>& points) {
  std::vector<std::string> parts;
  for (std::size_t p : points) parts.push_back(std::to_string(p));
  return join(parts, ",");
}

std::vector<std::string> worker_base_args(const std::vector<std::string>& args) {
  static const std::set<std::string> kWithValue = {"--devices",
                                                   "--shard",
                                                   "--device",
                                                   "--points",
                                                   "--counters-after-round",
                                                   "--json",
                                                   "--csv",
                                                   "--svg",
                                                   "--save-counter-data",
                                                   "--export"};
  static const std::set<std::string> kFlags = {"--plot"};
  std::vector<std::string> out;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    const std::string name = arg.substr(0, arg.find('='));
    if (kFlags.count(arg)) continue;
    if (kWithValue.count(name)) {
      if (name == arg) ++i;  // "--opt VALUE": skip the value too
      continue;
    }
    out.push_back(arg);
  }
  return out;
}

double seconds_since_process_start() {
  std::ifstream stat("/proc/self/stat");
  std::string text;
  std::getline(stat, text);
  // Field 22 (starttime, in clock ticks after boot) counts from the one after the ")" that
  // closes the command name, field 2.
  const std::size_t close = text.rfind(')');
  std::ifstream uptime_file("/proc/uptime");
  double uptime = 0;
  if (close == std::string::npos || !(uptime_file >> uptime))
    return std::numeric_limits<double>::quiet_NaN();
  const std::vector<std::string> fields = split(text.substr(close + 2), ' ');
  if (fields.size() < 20) return std::numeric_limits<double>::quiet_NaN();
  const double ticks = std::strtod(fields[19].c_str(), nullptr);
  return uptime - ticks / static_cast<double>(sysconf(_SC_CLK_TCK));
}

std::vector<std::string> read_lines(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

WorkerPool::WorkerPool(const std::vector<WorkerJob>& jobs)
    : jobs_(jobs),
      processes_(jobs.size()),
      results_(jobs.size()),
      start_(std::chrono::steady_clock::now()) {
  for (std::size_t j = 0; j < jobs_.size(); ++j) {
    try {
      processes_[j] = std::make_unique<Process>(jobs_[j]);
    } catch (const std::runtime_error& error) {
      results_[j].exit_code = static_cast<int>(ExitCode::kInternal);
      results_[j].failure = error.what();
    }
  }
}

WorkerPool::~WorkerPool() = default;  // Process waits for a worker still running

void WorkerPool::terminate() {
  for (const std::unique_ptr<Process>& process : processes_)
    if (process) process->signal(SIGTERM);
}

std::vector<WorkerResult> WorkerPool::wait(const std::vector<Row>& sweep_rows) {
  // Wait for every worker, noting when each one ends (how well the split balanced the GPUs).
  bool forwarded = false;
  for (std::size_t running = jobs_.size(); running > 0;) {
    // A signal that came before the workers started (held back by a TempDir) reaches them now.
    if (const int number = pending_signal(); number != 0 && !forwarded) {
      for (const std::unique_ptr<Process>& process : processes_)
        if (process) process->signal(number);
      forwarded = true;
    }
    running = 0;
    for (std::size_t j = 0; j < jobs_.size(); ++j) {
      if (!processes_[j] || results_[j].seconds >= 0) continue;
      // A worker that said its report is written is done (its exit, the driver's teardown,
      // goes on without us); else its exit ends it.
      std::optional<int> code;
      if (processes_[j]->said_done())
        code = 0;
      else
        code = processes_[j]->poll();
      if (code) {
        results_[j].exit_code = *code;
        results_[j].seconds =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
      } else {
        ++running;
      }
    }
    if (running > 0) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  throw_if_interrupted();  // forwarded to the workers: no report to read
  std::vector<WorkerResult> results = std::move(results_);
  for (std::size_t j = 0; j < jobs_.size(); ++j) {
    if (!processes_[j]) continue;
    WorkerResult& result = results[j];
    if (result.exit_code != 0) {
      const std::string line = last_line(jobs_[j].log);
      result.failure = "worker exited with code " + std::to_string(result.exit_code) +
                       (line.empty() ? "" : ": " + line);
      continue;
    }
    try {
      Report report = read_report_file(jobs_[j].report);
      const std::string wrong = check_rows(report, jobs_[j].points, sweep_rows);
      if (!wrong.empty()) {
        result.failure = "worker " + wrong;
        continue;
      }
      result.report = std::move(report);
    } catch (const InputError& error) {
      result.failure = "worker wrote no usable report (" + first_line(error.what()) + ")";
    }
  }
  return results;
}

std::vector<WorkerResult> run_workers(const std::vector<WorkerJob>& jobs,
                                      const std::vector<Row>& sweep_rows) {
  return WorkerPool(jobs).wait(sweep_rows);
}

Report gather_workers(const std::vector<WorkerJob>& jobs, std::vector<WorkerResult> results,
                      const Report& skeleton) {
  const std::vector<Row>& sweep_rows = skeleton.rows;
  std::vector<Report> reports;
  std::vector<std::string> names;
  for (std::size_t j = 0; j < jobs.size(); ++j)
    if (results[j].report) {
      reports.push_back(std::move(*results[j].report));
      names.push_back("device " + std::to_string(jobs[j].device));
    }
  Report gathered;
  if (reports.empty()) {
    gathered.context = skeleton.context;
  } else {
    gathered = merge_reports(reports, names);
  }
  for (const GpuSpec& spec : skeleton.specs)
    if (std::none_of(gathered.specs.begin(), gathered.specs.end(),
                     [&](const GpuSpec& s) { return s.key == spec.key; }))
      gathered.specs.push_back(spec);

  // Sweep order: each row's sweep index, by kernel and workload (unique within a sweep).
  std::vector<std::pair<std::size_t, Row>> ordered;
  for (Row& row : gathered.rows) {
    std::size_t index = 0;
    while (index < sweep_rows.size() &&
           !(sweep_rows[index].kernel == row.kernel && sweep_rows[index].workload == row.workload))
      ++index;
    ordered.emplace_back(index, std::move(row));
  }
  for (std::size_t j = 0; j < jobs.size(); ++j) {
    if (results[j].failure.empty()) continue;
    for (std::size_t point : jobs[j].points) {
      Row row = sweep_rows[point];
      row.status = RowStatus::kError;
      row.message = "device " + std::to_string(jobs[j].device) + ": " + results[j].failure;
      row.origin.reset();
      row.timing.reset();  // nothing was measured
      row.counters.clear();
      row.verification.reset();
      ordered.emplace_back(point, std::move(row));
    }
  }
  std::stable_sort(ordered.begin(), ordered.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  gathered.rows.clear();
  for (auto& [index, row] : ordered) gathered.rows.push_back(std::move(row));
  return gathered;
}

}  // namespace roofline::app
