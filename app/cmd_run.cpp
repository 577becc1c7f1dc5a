// `cuflash-roofline run`: measure the bundled kernels on the GPU present and judge them
// against a spec (the device's own, or --gpu NAME as a projection).
#include <algorithm>
#include <charconv>
#include <chrono>
#include <filesystem>
#include <iostream>
#include <limits>
#include <map>
#include <memory>
#include <optional>

#include <spdlog/spdlog.h>

#include "app/commands.hpp"
#include "app/fanout.hpp"
#include "app/help.hpp"
#include "app/options.hpp"
#include "app/run_devices.hpp"
#include "app/run_options.hpp"
#include "lib/core/base/errors.hpp"
#include "lib/core/base/limits.hpp"
#include "lib/core/base/output.hpp"
#include "lib/core/base/text.hpp"
#include "lib/core/domain/sm_share.hpp"
#include "lib/core/model/model.hpp"
#include "lib/core/verdict/assemble.hpp"
#include "lib/core/verdict/partition.hpp"
#include "lib/gpu/counter_data_file.hpp"
#include "lib/gpu/device.hpp"
#include "lib/gpu/runner.hpp"

namespace roofline::app {
namespace {

// The sweep points to measure: the whole sweep, this shard's points (partitioned by the model's
// cost on a fixed spec, the same on every machine), or a worker's --points.
std::vector<std::size_t> selected_points(const RunCommandOptions& options,
                                         const std::vector<gpu::SweepPoint>& sweep,
                                         const SpecRegistry& registry) {
  std::vector<std::size_t> selected;
  if (!options.points.empty()) return parse_points(options.points, sweep.size());
  if (options.shard.empty()) {
    for (std::size_t i = 0; i < sweep.size(); ++i) selected.push_back(i);
    return selected;
  }
  const Shard shard = parse_shard(options.shard);
  const GpuSpec& reference = registry.find(kShardCostSpec);
  std::vector<double> costs;
  for (const gpu::SweepPoint& p : sweep)
    costs.push_back(
        estimated_point_seconds(p.kernel, p.workload, reference, launches_per_point(options)));
  const std::vector<std::size_t> bins = balance_costs(costs, static_cast<std::size_t>(shard.count));
  for (std::size_t i = 0; i < sweep.size(); ++i)
    if (bins[i] == static_cast<std::size_t>(shard.index)) selected.push_back(i);
  return selected;
}

// --counters-after-round: a timing round, 0 to 1000; -1 (after the last) when not given.
int parse_counters_after_round(const std::string& text) {
  if (text.empty()) return -1;
  int round = -1;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), round);
  if (error != std::errc() || end != text.data() + text.size() || round < 0 || round > 1000)
    throw InputError("--counters-after-round must be a whole number from 0 to 1000 (got \"" +
                     text.substr(0, 40) + "\")");
  return round;
}

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
  options.output.check(inputs, global.specs);
  // Checked here, with or without --devices (a worker's own options, but never passed on).
  const int counters_after_round = parse_counters_after_round(options.counters_after_round);
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

  std::vector<gpu::SweepPoint> sweep;
  for (const Workload& workload : workloads)
    for (const std::string& kernel : kernels) sweep.push_back({kernel, workload});
  const std::vector<std::size_t> selected = selected_points(options, sweep, registry);
  if (!options.devices.empty()) return run_devices(options, global, registry, sweep, selected);
  std::vector<gpu::SweepPoint> points;
  for (std::size_t i : selected) points.push_back(sweep[i]);

  gpu::RunOptions run;
  run.device = options.device;
  run.sms = options.sms;
  run.reps = options.reps;
  run.rounds = options.rounds;
  run.counter_repeats = options.counter_repeats;
  run.counters_after_round = counters_after_round;
  run.test_slowdown = slowdown;
  run.test_extra_bytes = extra_bytes;
  run.warmup = options.warmup;
  run.settle_seconds = options.settle;
  run.verify = options.verify;
  run.seed = options.seed;
  run.counter_set = options.counter_set == "full" ? CounterSet::kFull : CounterSet::kRoofline;
  run.energy = options.energy;
  run.stalls = !options.no_counters && (options.stalls || options.counter_set == "full");
  run.stall_samples = options.stall_samples;
  run.counters = options.no_counters ? gpu::CounterMode::kOff
                 : options.counters  ? gpu::CounterMode::kRequired
                                     : gpu::CounterMode::kAuto;
  auto progress = std::make_shared<ProgressLine>(stderr_is_tty() && !global.quiet);
  run.progress = [progress](const std::string& text) { (*progress)(text); };

  using Clock = std::chrono::steady_clock;
  const auto seconds = [](Clock::time_point a, Clock::time_point b) {
    return std::chrono::duration<double>(b - a).count();
  };
  const Clock::time_point started = Clock::now();
  const DeviceInfo device = gpu::detect_device(options.device);
  const Clock::time_point detected = Clock::now();
  gpu::SpecChoice choice = gpu::choose_spec(registry, device, options.device, requested);
  if (!choice.note.empty()) spdlog::warn("{}", choice.note);
  // --sms against the GPU and the spec it is judged on, before any work: a count above either
  // is an input error (the green context's own rounding is checked when it is made).
  if (options.sms > device.sm_count)
    throw InputError("--sms " + std::to_string(options.sms) + ": " + device.name + " has " +
                     std::to_string(device.sm_count) + " SMs");
  if (options.sms > 0) {
    try {
      on_sm_share(choice, options.sms);
    } catch (const InputError& error) {
      throw InputError(std::string("--sms: ") + error.what());
    }
  }

  gpu::RunResult result;
  if (points.empty()) {  // a shard with no points: an empty report, the GPU left alone
    result.device = device;
    result.counters = "none: no point in this shard";
  } else {
    result = gpu::run_sweep(points, run, device);
  }
  const Clock::time_point swept = Clock::now();
  progress.reset();
  if (!result.rows.empty() && std::none_of(result.rows.begin(), result.rows.end(),
                                           [](const Row& row) { return row.timing.has_value(); }))
    throw InputError(nothing_ran(result.rows));

  Report report;
  report.context = make_context("run");
  report.context.command_line = global.command_line();
  report.context.device = result.device;
  if (result.green_context_sms > 0) {
    // Judged on the share of the GPU the launches had (sm_share.hpp), and saying so.
    report.context.green_context_sms = result.green_context_sms;
    choice = on_sm_share(std::move(choice), result.green_context_sms);
  }
  report.context.counters = result.counters;
  report.context.metrics = result.metrics;
  report.context.counter_passes = result.counter_passes;
  add_rows(report, choice, std::move(result.rows));
  options.ceilings.apply(report, calibrations);
  options.output.emit(report);
  // Where a worker's time goes (run --devices compares a worker's wall time with its share).
  spdlog::debug(
      "run on device {}: start {:.2f} s, CUDA and device detection {:.2f} s, sweep {:.2f} s, "
      "report {:.2f} s",
      options.device, seconds_since_process_start() - seconds(started, Clock::now()),
      seconds(started, detected), seconds(detected, swept), seconds(swept, Clock::now()));
  if (!options.save_counter_data.empty()) {
    if (result.counter_data_image.empty())
      throw GpuUnavailableError("--save-counter-data: no counters were collected");
    gpu::save_counter_data(options.save_counter_data,
                           {result.device.chip, result.counter_set, result.metrics,
                            result.counter_data_image, result.range_rows, result.counter_passes});
  }
  signal_worker_done();  // a --devices worker: the parent may go on (its report is written)
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
  options->output.add_export_to(*sub);
  options->ceilings.add_to(*sub, false);
  auto* device = sub->add_option("--device", options->device, "CUDA device ordinal")
                     ->check(decimal_in(0, 1023))
                     ->capture_default_str();
  auto* sms = sub->add_option("--sms", options->sms,
                              "Run every launch (timing, counters, energy) in a CUDA green "
                              "context of N of the GPU's SMs, judged against the spec on that "
                              "share: the driver rounds N up to its granularity (a multiple of "
                              "8 on Hopper), and the report says how many it got")
                  ->type_name("N")
                  ->check(decimal_in(1, kMaxSmCount));
  sub->add_option("--devices", options->devices,
                  "Spread the sweep over these GPUs, one worker process each, one report "
                  "(ordinals such as 0,1, or all)")
      ->type_name("LIST|all")
      ->check(kNonEmpty)
      ->excludes(device)
      ->excludes(sms);
  auto* shard = sub->add_option("--shard", options->shard,
                                "Measure only shard I of N (0 <= I < N) of the sweep, the same "
                                "split on every machine; `merge` joins the shards' reports")
                    ->type_name("I/N")
                    ->check(kNonEmpty);
  // Checked here, not by a validator: CLI11's message would lose a hidden option's name.
  sub->add_option_function<std::string>(
         "--points",
         [options](const std::string& text) {
           if (text.empty()) throw CLI::ValidationError("--points", "must not be empty");
           options->points = text;
         },
         "A --devices worker's share of the sweep")
      ->group("")
      ->excludes(shard);
  sub->add_option("--counters-after-round", options->counters_after_round,
                  "A --devices worker's turn to profile: after this timing round (0-based)")
      ->group("");
  sub->add_option("--reps", options->reps,
                  "Timed repetitions per point, over all rounds (every sample kept)")
      ->check(decimal_in(1, 100000))
      ->capture_default_str();
  sub->add_option("--rounds", options->rounds,
                  "Time the sweep in this many interleaved rounds (at most --reps), so that the "
                  "samples span the run's drift (compare judges time on round medians)")
      ->check(decimal_in(1, 1000))
      ->capture_default_str();
  sub->add_option("--counter-repeats", options->counter_repeats,
                  "Count each point this many times in each counter pass (median kept; the "
                  "spread is the report's own noise for compare)")
      ->check(decimal_in(1, 100))
      ->capture_default_str();
  sub->add_option("--warmup", options->warmup, "Untimed launches before timing")
      ->check(decimal_in(0, 1000))
      ->capture_default_str();
  sub->add_option("--settle", options->settle,
                  "Seconds each point runs as timed before each of its timing rounds, so that "
                  "it is timed in the power and clock state it sets itself (a GPU at its power "
                  "cap clocks down under a heavy kernel, within a fraction of a second)")
      ->check(seconds_in(0, 60))
      ->capture_default_str();
  sub->add_flag("--verify", options->verify,
                "Check each kernel once against an FP32 reference (error at most 2x that of a "
                "plain FP16 implementation)");
  auto* off = sub->add_flag("--no-counters", options->no_counters,
                            "Do not use CUPTI: timing and model only (lets ncu profile this run)");
  auto* on = sub->add_flag("--counters", options->counters,
                           "Require hardware counters: exit 3 when none can be read");
  off->excludes(on);
  auto* stalls = sub->add_flag(
      "--stalls", options->stalls,
      "Sample each point's warps once more (CUPTI PC sampling): why it stalls, by reason, "
      "SASS instruction and source line (on with --counter-set full)");
  off->excludes(stalls);
  sub->add_option("--stall-samples", options->stall_samples,
                  "Warp samples each sampled launch aims for (the sampling period follows from "
                  "its measured time): more give tighter shares and take longer to read")
      ->check(decimal_in(1000, 10000000))
      ->capture_default_str();
  sub->add_flag("--energy", options->energy,
                "Measure each point's energy per launch: NVML's energy counter over 1.2 s of "
                "back-to-back launches (about 1.5 s a point); joules, watts and FLOP/J per row");
  sub->add_option("--counter-set", options->counter_set,
                  "roofline: bytes at every level, tensor FLOPs, time and clocks, one pass, no "
                  "instrumentation; full: adds CUDA-core FP32/FP16 FLOPs and shared-memory bytes "
                  "(SASS-instrumented, 3 passes, kernels run slower while counted) and the warp "
                  "stalls (--stalls)")
      ->check(CLI::IsMember({"roofline", "full"}))
      ->capture_default_str();
  sub->add_option("--seed", options->seed, "Seed of the random inputs")
      ->check(kDecimalUint64)
      ->capture_default_str();
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
  set_command_help(
      *sub,
      {"run --json report.json", "run --kernel flash-v2 --seq 4096,8192 --pass fwd,bwd --plot",
       "run --devices all --rounds 5 --json report.json", "run --kernel flash-v3 --wide",
       "run --sms 66 --json share.json"},
      {kExitOk,
       kExitUsage,
       {"3",
        "no usable GPU, --counters and hardware counters not permitted, or --sms and the "
        "driver has no green context to give"},
       kExitInternal,
       kExitSignal});
  sub->callback([options, &global, exit_code] { *exit_code = run_run(*options, global); });
}

}  // namespace roofline::app
