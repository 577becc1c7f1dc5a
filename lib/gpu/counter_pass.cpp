#include "lib/gpu/counter_pass.hpp"

#include <algorithm>
#include <chrono>
#include <map>
#include <string>
#include <vector>

#include <spdlog/spdlog.h>

#include "kernels/attention.hpp"
#include "lib/core/base/errors.hpp"
#include "lib/core/base/statistics.hpp"
#include "lib/core/base/text.hpp"
#include "lib/core/domain/metric_catalog.hpp"
#include "lib/core/model/model.hpp"
#include "lib/gpu/cuda_check.hpp"
#include "lib/gpu/range_profiler.hpp"

namespace roofline::gpu {
namespace {

using Clock = std::chrono::steady_clock;

void mark_unavailable(RunResult& result, const RunOptions& options, const std::string& message) {
  result.counters = "none: " + message;
  for (Row& row : result.rows)
    if (row.status == RowStatus::kOk) {
      row.status = RowStatus::kCountersUnavailable;
      row.message = message;
    }
  if (options.counters == CounterMode::kRequired) throw GpuUnavailableError(message);
  spdlog::warn("{}; timing and model still reported", message);
}

// Every pass over the `measured` points (indices into the launcher's points), then the arena
// freed; returns each pass's seconds.
std::vector<double> run_passes(RangeProfiler& profiler, PointLauncher& launcher,
                               const RunOptions& options, const std::vector<std::size_t>& measured,
                               int repeats) {
  std::vector<double> pass_seconds;
  DeviceBuffer extra_buffer;  // test aid: extra bytes read in counted ranges
  int pass = 0;
  do {
    ++pass;
    const auto t_pass = Clock::now();
    launcher.arena().forget_inputs();
    profiler.begin_pass();
    for (std::size_t n = 0; n < measured.size(); ++n) {
      const std::size_t i = measured[n];
      if (options.progress)
        options.progress("counters: pass " + std::to_string(pass) + "/" +
                         std::to_string(profiler.num_passes()) + ", point " +
                         std::to_string(n + 1) + "/" + std::to_string(measured.size()));
      launcher.prepare_again(i);
      const std::size_t extra = test_extra_bytes(launcher.points()[i], options);
      if (extra > 0) extra_buffer.ensure(extra);
      // Range names are "point:repeat"; the point's row is measured[point].
      for (int repeat = 0; repeat < repeats; ++repeat) {
        launcher.flush_l2();
        profiler.push_range(std::to_string(n) + ":" + std::to_string(repeat));
        if (extra > 0)
          ROOFLINE_CUDA_CALL(kernels::flush_l2(extra_buffer.get(), extra, launcher.stream().get()));
        launcher.launch(i);
        profiler.pop_range();
      }
    }
    const bool done = profiler.end_pass();
    pass_seconds.push_back(std::chrono::duration<double>(Clock::now() - t_pass).count());
    if (done) break;
  } while (true);
  launcher.arena().release();
  extra_buffer.reset();
  return pass_seconds;
}

}  // namespace

std::size_t test_extra_bytes(const SweepPoint& point, const RunOptions& options) {
  const auto it = options.test_extra_bytes.find(point.kernel);
  if (it == options.test_extra_bytes.end()) return 0;
  const double model = predict(find_kernel_model(point.kernel), point.workload).model_dram_bytes;
  return static_cast<std::size_t>(std::max(0.0, it->second * model));
}

void collect_counters(RunResult& result, PointLauncher& launcher, const RunOptions& options) {
  std::vector<std::size_t> measured;
  for (std::size_t i = 0; i < result.rows.size(); ++i)
    if (result.rows[i].status == RowStatus::kOk) measured.push_back(i);
  if (measured.empty()) {
    result.counters = "none: no point ran";
    return;
  }
  if (result.device.cc_major * 10 + result.device.cc_minor < 75) {
    mark_unavailable(result, options,
                     "compute capability " + result.device.compute_capability +
                         " is below 7.5, which the CUPTI range profiler needs");
    return;
  }
  try {
    result.device.chip = device_chip_name(options.device);
    if (!has_catalogue(result.device.chip)) {
      mark_unavailable(result, options,
                       "no metric catalogue for chip " + result.device.chip +
                           " yet (catalogued: " + join(catalogued_chips(), ", ") + ")");
      return;
    }
    result.counter_set = options.counter_set;
    result.metrics = catalogue_metrics(result.device.chip, options.counter_set);
    const auto t_setup = Clock::now();
    const int repeats = std::max(options.counter_repeats, 1);
    RangeProfiler profiler(options.device, result.metrics,
                           static_cast<int>(measured.size()) * repeats);
    result.counter_passes = profiler.num_passes();
    const auto t_passes = Clock::now();
    const std::vector<double> pass_seconds =
        run_passes(profiler, launcher, options, measured, repeats);
    const auto t_decode = Clock::now();
    const std::vector<RangeValues> ranges = profiler.decode_and_evaluate();
    const auto t_end = Clock::now();
    auto since = [](Clock::time_point a, Clock::time_point b) {
      return format_fixed(std::chrono::duration<double>(b - a).count(), 2) + " s";
    };
    std::vector<std::string> per_pass;
    for (double seconds : pass_seconds) per_pass.push_back(format_fixed(seconds, 2));
    const std::string timing = "profiler setup " + since(t_setup, t_passes) + ", passes " +
                               join(per_pass, " + ") + " s, decode and evaluate " +
                               since(t_decode, t_end);
    // The report's header prints the same timing; the log line is for -v.
    spdlog::debug("counters: {} ranges in {} passes: {}", measured.size(), pass_seconds.size(),
                  timing);
    if (ranges.size() != measured.size() * static_cast<std::size_t>(repeats))
      throw ProfilerError(ProfilerErrorKind::kOther,
                          "expected " + std::to_string(measured.size() * repeats) +
                              " ranges, decoded " + std::to_string(ranges.size()));
    std::vector<std::map<std::string, std::vector<double>>> counted(measured.size());
    for (const RangeValues& range : ranges)
      for (const auto& [key, value] :
           combine_metrics(result.device.chip, options.counter_set, result.metrics, range.values))
        counted[std::stoul(range.name)][key].push_back(value);
    for (std::size_t n = 0; n < measured.size(); ++n) {
      Row& row = result.rows[measured[n]];
      for (auto& [key, values] : counted[n]) {
        row.counters[key] = median(values);
        if (repeats > 1) row.counter_samples[key] = std::move(values);
      }
      if (row.counters.size() <
          catalogue_quantities(result.device.chip, options.counter_set).size()) {
        row.status = RowStatus::kCountersUnavailable;
        row.message = "some counters evaluated to NaN (not collected)";
      }
    }
    result.counters_measured = true;
    result.counter_data_image = profiler.counter_data_image();
    for (const RangeValues& range : ranges)
      result.range_rows.push_back(measured[std::stoul(range.name)]);
    result.counters =
        "CUPTI range profiler, counter set " + std::string(to_string(options.counter_set)) +
        ", user ranges, user replay with an L2 flush before each measured launch; " +
        std::to_string(repeats) + (repeats == 1 ? " range" : " ranges (median kept)") +
        " per point; " + std::to_string(result.counter_passes) +
        " passes for the whole sweep; chip " + result.device.chip + "; " + timing +
        tensor_paths_note(result.device.chip, options.counter_set);
  } catch (const ProfilerError& error) {
    launcher.arena().release();
    result.counters_held_elsewhere = error.kind() == ProfilerErrorKind::kMultipleSubscribers;
    mark_unavailable(result, options,
                     std::string("counters unavailable: ") + first_line(error.what()));
  }
}

}  // namespace roofline::gpu
