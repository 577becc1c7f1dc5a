// `run --devices`: the fan-out of one sweep over several GPUs (fanout.hpp), the part of `run`
// that needs CUDA only to name and count the devices.
#include "app/run_devices.hpp"

#include <algorithm>
#include <filesystem>
#include <optional>

#include <spdlog/spdlog.h>

#include "app/fanout.hpp"
#include "app/temp_dir.hpp"
#include "lib/core/base/errors.hpp"
#include "lib/core/domain/spec_choice.hpp"
#include "lib/core/verdict/assemble.hpp"
#include "lib/core/verdict/partition.hpp"
#include "lib/gpu/device.hpp"

namespace roofline::app {
namespace {

// The CUDA_VISIBLE_DEVICES entry that shows a worker the device this process calls `ordinal`:
// the ordinal-th entry of this process's own list where it has one, else the ordinal.
std::string visible_entry(int ordinal) {
  const auto entries = gpu::visible_device_entries();
  if (entries && ordinal >= 0 && static_cast<std::size_t>(ordinal) < entries->size())
    return (*entries)[static_cast<std::size_t>(ordinal)];
  return std::to_string(ordinal);
}

}  // namespace

// --devices: one worker process per GPU, the selected points split so that they finish together
// (model cost estimates), one report at the end. A worker that fails leaves error rows naming its
// device and why; the report is written all the same. Exit code 0 when at least one worker
// succeeded, else the first worker's (4 for a signal).
// This process does not initialise CUDA where it can help it: the workers start at once, and its
// own exit, which comes after theirs, does not wait for the driver's teardown. The GPUs are named
// and counted by the driver's /proc files (gpu::host_gpu_name, gpu::visible_gpu_count): the
// split prices points on devices_cost_spec (partition.hpp), ordinals are checked against the count,
// and the rows of a failed worker are judged like the others. Only where the host's GPU has no spec
// file (or /proc says nothing) does it ask CUDA, after the workers have started. The workers take
// turns to profile
// (--counters-after-round): two processes collecting counters at once slow each other.
int run_devices(const RunCommandOptions& options, const GlobalOptions& global,
                const SpecRegistry& registry, const std::vector<gpu::SweepPoint>& sweep,
                const std::vector<std::size_t>& selected) {
  if (!options.save_counter_data.empty())
    throw InputError("--save-counter-data records one process's counters: not with --devices");
  const std::optional<int> visible = gpu::visible_gpu_count();
  const std::vector<int> devices = parse_devices(
      options.devices, options.devices == "all" ? (visible ? *visible : gpu::device_count()) : 0);
  if (visible)
    for (int device : devices)
      if (device >= *visible)
        throw InputError("--devices: device " + std::to_string(device) + " does not exist (" +
                         std::to_string(*visible) + " CUDA device" + (*visible == 1 ? "" : "s") +
                         ")");

  const std::optional<std::string> host_name = gpu::host_gpu_name();
  const GpuSpec* host_spec = host_name ? registry.find_for_device(*host_name) : nullptr;
  const GpuSpec& cost_spec = devices_cost_spec(registry, host_name, options.gpu);
  spdlog::debug("points priced on {}", cost_spec.key);
  std::vector<double> costs;
  for (std::size_t i : selected)
    costs.push_back(estimated_point_seconds(sweep[i].kernel, sweep[i].workload, cost_spec,
                                            launches_per_point(options)));
  const std::vector<std::size_t> bins = balance_costs(costs, devices.size());

  // The spec the rows are judged against (for a failed worker's rows): --gpu's or the host
  // GPU's; CUDA only where neither is known, or /proc could not vouch for the ordinals. Where
  // /proc says nothing, CUDA is asked before any worker starts: no GPU is one error, one line.
  DeviceInfo first;
  first.name = host_name.value_or("");
  gpu::SpecChoice choice;
  const auto ask_cuda = [&] {
    first = gpu::detect_device(devices.front());
    for (int device : devices) gpu::detect_device(device);
    std::optional<std::string> requested;
    if (!options.gpu.empty()) requested = options.gpu;
    choice = gpu::choose_spec(registry, first, devices.front(), requested);
  };
  if (!visible) ask_cuda();

  TempDir scratch("cuflash-roofline");
  const std::string self = std::filesystem::read_symlink("/proc/self/exe").string();
  const std::vector<std::string> base = worker_base_args(global.args);
  std::vector<WorkerJob> jobs;
  for (std::size_t d = 0; d < devices.size(); ++d) {
    WorkerJob job;
    job.device = devices[d];
    for (std::size_t k = 0; k < selected.size(); ++k)
      if (bins[k] == d) job.points.push_back(selected[k]);
    if (job.points.empty()) continue;
    const std::string name = "device-" + std::to_string(job.device);
    job.report = scratch.path() / (name + ".json");
    job.log = scratch.path() / (name + ".log");
    job.argv = {self};
    job.argv.insert(job.argv.end(), base.begin(), base.end());
    // The worker sees its own GPU only, as device 0: its CUDA initialises one device, not all.
    job.env = {"CUDA_VISIBLE_DEVICES=" + visible_entry(job.device)};
    for (const std::string& arg :
         {std::string("--device"), std::string("0"), std::string("--points"),
          points_text(job.points), std::string("--json"), job.report.string()})
      job.argv.push_back(arg);
    // Staggered counters: worker d of n profiles after round rounds−1 − d·(rounds−1)/(n−1), so
    // two workers profile at opposite ends of their timing rounds, never at once.
    if (devices.size() > 1) {
      const long long last = std::max(1, std::min(options.rounds, options.reps)) - 1;
      const long long turn = last - (static_cast<long long>(d) * last +
                                     static_cast<long long>(devices.size() - 1) / 2) /
                                        static_cast<long long>(devices.size() - 1);
      job.argv.push_back("--counters-after-round");
      job.argv.push_back(std::to_string(turn));
    }
    spdlog::info("device {}: {} of {} points", job.device, job.points.size(), selected.size());
    std::string command;
    for (const std::string& arg : job.argv) command += (command.empty() ? "" : " ") + arg;
    spdlog::debug("device {}: worker {}", job.device, command);
    jobs.push_back(std::move(job));
  }
  WorkerPool pool(jobs);
  spdlog::debug("workers started {:.2f} s after this process", seconds_since_process_start());

  if (host_spec != nullptr && visible) {
    // The host's GPU has a spec file: the rule needs no CUDA (nothing to derive).
    std::optional<std::string> requested;
    if (!options.gpu.empty()) requested = options.gpu;
    choice = choose_judging_spec(registry, *host_name, requested, nullptr);
  } else if (visible) {
    try {
      ask_cuda();
    } catch (...) {
      pool.terminate();
      throw;
    }
  }
  // The sweep's rows as the model gives them, judged as the workers' are: a failed worker's
  // points keep these, marked as errors.
  Report skeleton;
  skeleton.context = make_context("run");
  skeleton.context.device = first;
  skeleton.context.counters = "none: every worker failed";
  {
    std::vector<Row> rows;
    for (const gpu::SweepPoint& p : sweep) {
      Row row;
      row.kernel = p.kernel;
      row.workload = p.workload;
      rows.push_back(std::move(row));
    }
    add_rows(skeleton, choice, std::move(rows));
  }
  const std::vector<Row>& sweep_rows = skeleton.rows;
  std::vector<WorkerResult> results = pool.wait(sweep_rows);  // throws Interrupted
  spdlog::debug("workers done {:.2f} s after this process", seconds_since_process_start());
  for (const WorkerJob& job : jobs)
    for (const std::string& line : read_lines(job.log))
      spdlog::debug("device {}: worker said: {}", job.device, line);
  int exit_code = -1;
  for (std::size_t j = 0; j < jobs.size(); ++j) {
    if (results[j].seconds >= 0)
      spdlog::info("device {}: {} points in {:.2f} s", jobs[j].device, jobs[j].points.size(),
                   results[j].seconds);
    if (results[j].failure.empty()) {
      exit_code = 0;
    } else {
      spdlog::error("device {}: {}", jobs[j].device, results[j].failure);
      if (exit_code < 0)
        exit_code = results[j].exit_code > 0 && results[j].exit_code < 5
                        ? results[j].exit_code
                        : static_cast<int>(ExitCode::kInternal);
    }
  }
  Report report = gather_workers(jobs, std::move(results), skeleton);
  // The command line that reproduces the report is this one, not a worker's.
  report.context.command_line = global.command_line();
  // The workers applied --ceilings / --calibration themselves.
  options.output.emit(report);
  spdlog::debug("report written {:.2f} s after this process", seconds_since_process_start());
  return std::max(exit_code, 0);
}

}  // namespace roofline::app
