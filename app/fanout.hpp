// `run --devices`: one worker process per GPU (CUPTI allows one profiler per process), each
// running its share of the sweep and writing a report; the parent gathers them into one.
// Nothing here touches CUDA: the workers are this same program, started with `run --device K
// --points I,J,...`, so the code is tested anywhere with stand-in worker commands.
#pragma once

#include <chrono>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "lib/core/report/report.hpp"

namespace roofline::app {

// "0,1,3" or "all" (then `available` devices 0..available−1). Throws InputError for anything
// else: empty, repeated, negative or non-numeric ordinals.
std::vector<int> parse_devices(const std::string& text, int available);

// The indices of "--points 0,5,7": ascending, distinct, each below `count`; InputError else.
std::vector<std::size_t> parse_points(const std::string& text, std::size_t count);
std::string points_text(const std::vector<std::size_t>& points);

// `args` (a `run` command line, global options included) without the options a worker must not
// inherit: the fan-out itself (--devices, --shard, --device, --points, --counters-after-round)
// and every output (--json, --csv, --svg, --plot, --save-counter-data, --export); both
// "--opt VALUE" and "--opt=VALUE" forms.
std::vector<std::string> worker_base_args(const std::vector<std::string>& args);

// Seconds since this process started (from /proc/self/stat, to the kernel's clock tick); NaN
// where /proc does not say. For -v's account of where a fan-out's time goes.
double seconds_since_process_start();

// The lines of the text file `path` (none when it cannot be read).
std::vector<std::string> read_lines(const std::filesystem::path& path);

// The environment variable through which a worker learns the descriptor on which to say "my
// report is written" (kWorkerDoneSignal, once), so that the parent need not wait for the rest
// of its exit (the CUDA driver's teardown of its context takes about 0.1 s).
inline constexpr const char* kWorkerDoneFdVariable = "CUFLASH_ROOFLINE_DONE_FD";
inline constexpr char kWorkerDoneSignal = 'R';

// In a worker: tells the parent, where it asked through kWorkerDoneFdVariable, that the report
// is written and complete. Nothing otherwise.
void signal_worker_done();

struct WorkerJob {
  int device = 0;
  std::vector<std::size_t> points;  // indices into the sweep, ascending
  std::vector<std::string> argv;    // the whole command, program first
  std::vector<std::string> env;     // "NAME=value" set for the worker over this process's own
  std::filesystem::path report;     // where the worker writes its JSON report
  std::filesystem::path log;        // where its stderr goes
};

struct WorkerResult {
  int exit_code = 0;             // the worker's, or 128 + signal
  std::optional<Report> report;  // read back when the worker succeeded and the report is sound
  std::string failure;           // why there is no report: one line
  double seconds = -1;           // from the start of all workers to this one's end; -1: not run
};

class Process;

// Worker processes started together: the constructor starts every job (stdout to /dev/null,
// stderr to job.log), so that the caller can do its own work while they run; wait() waits for
// all of them and reads each report back (see run_workers). A worker that says its report is
// written (signal_worker_done) counts as done with exit code 0 from then on; the pool leaves
// the rest of its exit to it (the system reaps it). Destroying a pool waits for the workers
// still running otherwise; terminate() asks them to stop first. A termination signal is
// forwarded to the workers (process.hpp); wait() then throws Interrupted once they have ended.
class WorkerPool {
 public:
  explicit WorkerPool(const std::vector<WorkerJob>& jobs);
  ~WorkerPool();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;
  void terminate();
  std::vector<WorkerResult> wait(const std::vector<Row>& sweep_rows);

 private:
  std::vector<WorkerJob> jobs_;
  std::vector<std::unique_ptr<Process>> processes_;
  std::vector<WorkerResult> results_;
  std::chrono::steady_clock::time_point start_;
};

// Starts every job at once (stdout to /dev/null, stderr to job.log), waits for all of them, and
// reads each report back. A job that cannot start, fails, or writes a report whose rows are not
// exactly its points (kernel and workload, in order) gets a failure line instead of a report.
// `sweep_rows` gives kernel and workload per sweep index.
std::vector<WorkerResult> run_workers(const std::vector<WorkerJob>& jobs,
                                      const std::vector<Row>& sweep_rows);

// One report from the workers' reports: merged (merge_reports), rows in sweep order, and for
// every point of a failed worker an `error` row (its row in `skeleton`: the sweep's rows as
// add_rows judged them, one per sweep index) whose message says which device failed and why.
// The report carries the skeleton's specs; its context is the skeleton's when no worker
// produced a report.
Report gather_workers(const std::vector<WorkerJob>& jobs, std::vector<WorkerResult> results,
                      const Report& skeleton);

}  // namespace roofline::app
