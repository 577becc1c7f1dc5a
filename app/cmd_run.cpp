// `cuflash-roofline run`: measure the bundled kernels on the GPU present and judge them
// against a spec (the device's own, or --gpu NAME as a projection).
#include <algorithm>
#include <iostream>
#include <limits>
#include <map>
#include <memory>
#include <optional>

#include <spdlog/spdlog.h>

#include "app/commands.hpp"
#include "lib/core/errors.hpp"
#include "lib/core/model.hpp"
#include "lib/core/output.hpp"
#include "lib/core/text.hpp"
#include "lib/gpu/counter_data_file.hpp"
#include "lib/gpu/device.hpp"
#include "lib/gpu/runner.hpp"

namespace roofline::app {
namespace {

struct RunCommandOptions {
  std::string gpu;
  SweepOptions sweep;
  OutputOptions output;
  CeilingOptions ceilings;
  int device = 0;
  int reps = 20;
  int rounds = 5;
  int counter_repeats = 3;
  int warmup = 3;
  std::vector<std::string> test_slowdown;  // KERNEL=PCT
  std::vector<std::string> test_extra_bytes;
  bool verify = false;
  bool no_counters = false;
  bool counters = false;
  std::uint64_t seed = 20240607;
  std::string save_counter_data;
  std::string counter_set = "roofline";
};

// "\r[3/24] ..." on a tty, nothing otherwise; the line is cleared when the sweep ends.
class ProgressLine {
 public:
  explicit ProgressLine(bool enabled) : enabled_(enabled) {}
  ~ProgressLine() {
    if (enabled_ && shown_) std::cerr << "\r\033[K" << std::flush;
  }
  void operator()(const std::string& text) {
    if (!enabled_) return;
    std::cerr << "\r\033[K" << text.substr(0, 110) << std::flush;
    shown_ = true;
  }

 private:
  bool enabled_;
  bool shown_ = false;
};

// "flash-v2=5" -> {"flash-v2", 0.05}, for the test aids; the kernel must be one this run
// measures.
std::map<std::string, double> parse_test_aid(const std::vector<std::string>& values,
                                             const std::vector<std::string>& kernels,
                                             const char* option) {
  std::map<std::string, double> out;
  for (const std::string& value : values) {
    const std::size_t eq = value.find('=');
    const std::string kernel = value.substr(0, eq);
    const std::string pct = eq == std::string::npos ? "" : value.substr(eq + 1);
    std::size_t used = 0;
    double percent = std::numeric_limits<double>::quiet_NaN();
    try {
      percent = std::stod(pct, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (eq == std::string::npos || used == 0 || used != pct.size() || !(percent > 0) ||
        !(percent <= 100))
      throw InputError(std::string(option) + " takes KERNEL=PCT with 0 < PCT <= 100 (got \"" +
                       value + "\")");
    if (std::find(kernels.begin(), kernels.end(), kernel) == kernels.end())
      throw InputError(std::string(option) + ": kernel \"" + kernel +
                       "\" is not measured in this run");
    out[kernel] = percent / 100;
  }
  return out;
}

// "no point of the sweep could run: 3 too_large (standard B100000 H64 N4096 d64 causal fwd:
// needs ...)": the statuses counted, the first row's reason.
std::string nothing_ran(const std::vector<Row>& rows) {
  std::map<std::string, int> by_status;
  for (const Row& row : rows) ++by_status[std::string(to_string(row.status))];
  std::vector<std::string> counts;
  for (const auto& [status, count] : by_status)
    counts.push_back(std::to_string(count) + " " + status);
  const Row& first = rows.front();
  return "no point of the sweep could run: " + join(counts, ", ") + " (first: " + first.kernel +
         " " + first.workload.label() + ": " + first_line(first.message) + ")";
}

int run_run(const RunCommandOptions& options, const GlobalOptions& global) {
  std::vector<std::string> inputs = global.specs.files;  // never overwritten by an output
  inputs.insert(inputs.end(), options.ceilings.calibrations.begin(),
                options.ceilings.calibrations.end());
  options.output.check(inputs);
  if (!options.save_counter_data.empty())
    check_output_path(options.save_counter_data + "/fixture.json");
  const SpecRegistry registry = global.specs.load();
  const std::vector<CalibrationOverlay> calibrations = options.ceilings.load();
  const std::vector<Workload> workloads = options.sweep.workloads();
  const std::vector<std::string> kernels = options.sweep.kernel_names();
  const auto slowdown = parse_test_aid(options.test_slowdown, kernels, "--test-slowdown");
  const auto extra_bytes = parse_test_aid(options.test_extra_bytes, kernels, "--test-extra-bytes");
  std::optional<std::string> requested;
  if (!options.gpu.empty()) {
    registry.find(options.gpu);  // unknown names fail before the GPU is touched
    requested = options.gpu;
  }

  std::vector<gpu::SweepPoint> points;
  for (const Workload& workload : workloads)
    for (const std::string& kernel : kernels) points.push_back({kernel, workload});

  gpu::RunOptions run;
  run.device = options.device;
  run.reps = options.reps;
  run.rounds = options.rounds;
  run.counter_repeats = options.counter_repeats;
  run.test_slowdown = slowdown;
  run.test_extra_bytes = extra_bytes;
  run.warmup = options.warmup;
  run.verify = options.verify;
  run.seed = options.seed;
  run.counter_set = options.counter_set == "full" ? CounterSet::kFull : CounterSet::kRoofline;
  run.counters = options.no_counters ? gpu::CounterMode::kOff
                 : options.counters  ? gpu::CounterMode::kRequired
                                     : gpu::CounterMode::kAuto;
  auto progress = std::make_shared<ProgressLine>(stderr_is_tty() && !global.quiet);
  run.progress = [progress](const std::string& text) { (*progress)(text); };

  const DeviceInfo device = gpu::detect_device(options.device);
  gpu::SpecChoice choice = gpu::choose_spec(registry, device, options.device, requested);
  if (!choice.note.empty()) spdlog::warn("{}", choice.note);

  gpu::RunResult result = gpu::run_sweep(points, run, device);
  progress.reset();
  if (!result.rows.empty() && std::none_of(result.rows.begin(), result.rows.end(),
                                           [](const Row& row) { return row.timing.has_value(); }))
    throw InputError(nothing_ran(result.rows));

  Report report;
  report.context = make_context("run");
  report.context.device = result.device;
  report.context.projection = choice.projection;
  report.context.counters = result.counters;
  report.context.metrics = result.metrics;
  report.context.counter_passes = result.counter_passes;
  report.specs.push_back(choice.spec);
  if (choice.projection) {
    // The GPU measured on: what a projection scales from (analysis.hpp).
    report.context.measured_spec = choice.measured.key;
    if (choice.measured.key != choice.spec.key) report.specs.push_back(choice.measured);
  }
  for (Row& row : result.rows) {
    row.spec_key = choice.spec.key;
    // The model's DRAM bytes for the GPU the kernels ran on (its L2 and SMs): what the counters
    // should see, and the base a projection scales from.
    row.prediction = predict(find_kernel_model(row.kernel), row.workload, choice.measured);
    report.rows.push_back(std::move(row));
  }
  options.ceilings.apply(report, calibrations);
  options.output.emit(report);
  if (!options.save_counter_data.empty()) {
    if (result.counter_data_image.empty())
      throw GpuUnavailableError("--save-counter-data: no counters were collected");
    gpu::save_counter_data(options.save_counter_data,
                           {result.device.chip, result.counter_set, result.metrics,
                            result.counter_data_image, result.range_rows, result.counter_passes});
  }
  return 0;
}

}  // namespace

void setup_run(CLI::App& root, const GlobalOptions& global, int* exit_code) {
  auto options = std::make_shared<RunCommandOptions>();
  CLI::App* sub = root.add_subcommand(
      "run", "Measure the bundled kernels on the GPU present and place them on the roofline");
  sub->add_option("--gpu", options->gpu,
                  "Judge against this GPU's spec (default: the device's own; another GPU makes "
                  "the verdict a projection)")
      ->type_name("NAME");
  options->sweep.add_to(*sub);
  options->output.add_to(*sub, true);
  options->ceilings.add_to(*sub, false);
  sub->add_option("--device", options->device, "CUDA device ordinal")->capture_default_str();
  sub->add_option("--reps", options->reps,
                  "Timed repetitions per point, over all rounds (every sample kept)")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  sub->add_option("--rounds", options->rounds,
                  "Time the sweep in this many interleaved rounds (at most --reps), so that the "
                  "samples span the run's drift (compare judges time on round medians)")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  sub->add_option("--counter-repeats", options->counter_repeats,
                  "Count each point this many times in each counter pass (median kept; the "
                  "spread is the report's own noise for compare)")
      ->check(CLI::Range(1, 100))
      ->capture_default_str();
  sub->add_option("--warmup", options->warmup, "Untimed launches before timing")
      ->check(CLI::Range(0, 1000))
      ->capture_default_str();
  sub->add_flag("--verify", options->verify,
                "Check each kernel once against an FP32 reference (error at most 2x that of a "
                "plain FP16 implementation)");
  auto* off = sub->add_flag("--no-counters", options->no_counters,
                            "Do not use CUPTI: timing and model only (lets ncu profile this run)");
  auto* on = sub->add_flag("--counters", options->counters,
                           "Require hardware counters: exit 3 when none can be read");
  off->excludes(on);
  sub->add_option("--counter-set", options->counter_set,
                  "roofline: bytes at every level, tensor FLOPs, time and clocks, one pass, no "
                  "instrumentation; full: adds CUDA-core FP32/FP16 FLOPs and shared-memory bytes "
                  "(SASS-instrumented, 3 passes, kernels run slower while counted)")
      ->check(CLI::IsMember({"roofline", "full"}))
      ->capture_default_str();
  sub->add_option("--seed", options->seed, "Seed of the random inputs")->capture_default_str();
  sub->add_option("--test-slowdown", options->test_slowdown,
                  "Test aid for the CI gate: make KERNEL's timed launches PCT% slower (a "
                  "busy-wait after each, inside the timed region)")
      ->delimiter(',')
      ->type_name("KERNEL=PCT")
      ->group("Test aids (scripts/gate_check.sh)");
  sub->add_option("--test-extra-bytes", options->test_extra_bytes,
                  "Test aid for the CI gate: each counted range of KERNEL also reads PCT% of its "
                  "model DRAM bytes from outside L2 (timed launches unchanged)")
      ->delimiter(',')
      ->type_name("KERNEL=PCT")
      ->group("Test aids (scripts/gate_check.sh)");
  sub->add_option("--save-counter-data", options->save_counter_data,
                  "Write the raw counter-data image and its metric list to DIR (test fixtures)")
      ->type_name("DIR");
  sub->callback([options, &global, exit_code] { *exit_code = run_run(*options, global); });
}

}  // namespace roofline::app
