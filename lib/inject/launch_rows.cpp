#include "lib/inject/launch_rows.hpp"

#include <cmath>
#include <utility>

#include "lib/core/base/text.hpp"
#include "lib/core/domain/metric_catalog.hpp"
#include "lib/inject/launch_site.hpp"

namespace roofline::inject {

LaunchRows::LaunchRows(const Driver& driver, Recorder& recorder, CounterSet set,
                       std::string no_activity)
    : driver_(driver), recorder_(recorder), set_(set), no_activity_(std::move(no_activity)) {}

void LaunchRows::expect_activity(std::uint32_t correlation) {
  if (no_activity_.empty()) KernelActivity::instance().expect(correlation);
}

std::vector<gpu::RangeValues> LaunchRows::read_counters(gpu::KernelRangeProfiler& counters) {
  Clock::time_point t = Clock::now();
  counters.stop();
  recorder_.add_phase("stop", seconds_since(t));
  t = Clock::now();
  counters.decode();
  recorder_.add_phase("decode", seconds_since(t));
  t = Clock::now();
  std::vector<gpu::RangeValues> ranges = counters.evaluate();
  recorder_.add_phase("evaluate", seconds_since(t));
  return ranges;
}

void LaunchRows::record_ranges(const Session& session, const KernelLaunch& launch,
                               const std::vector<gpu::RangeValues>& ranges,
                               const std::optional<LaunchGpuTime>& time, Around around) {
  // In a batch the context is idle when a kernel launch is submitted (synchronised before
  // its range opens): from its submission to its end is the GPU's time for it.
  const bool from_submission = around == Around::kUserRange && !launch.graph;
  if (ranges.empty()) {
    recorder_.record(launch_record(launch, RowStatus::kError,
                                   "the range profiler recorded no range for this launch", {}));
    return;
  }
  for (std::size_t i = 0; i < ranges.size(); ++i) {
    KernelLaunch row = launch;
    std::string message;
    if (launch.graph) {
      message = ranges.size() == 1 ? "a CUDA graph launch, measured as a whole"
                                   : "kernel node " + std::to_string(i + 1) + " of " +
                                         std::to_string(ranges.size()) + " of a CUDA graph launch";
      // Auto-range names are the launch order ("0", "1", ...) unless CUPTI names the kernel.
      const std::string& name = ranges[i].name;
      if (name.find_first_not_of("0123456789") != std::string::npos) {
        row.mangled_name = name;
        row.demangled_name = demangle(name.c_str());
      }
    }
    if (!session.catalogued) {
      std::map<std::string, double> counters;
      if (!ranges[i].values.empty() && ranges[i].values[0] == ranges[i].values[0])
        counters[quantity::kGpuTime] = ranges[i].values[0] * 1e-9;
      std::string note = "no metric catalogue for chip " + session.chip + ": kernel time only";
      if (ranges.size() == 1) apply_gpu_time(counters, time, note, around, from_submission);
      recorder_.record(launch_record(row, RowStatus::kCountersUnavailable, note, counters));
      continue;
    }
    std::map<std::string, double> counters =
        combine_metrics(session.chip, set_, session.metrics, ranges[i].values);
    if (counters.empty()) {  // a range without values: never an `ok` row without counters
      recorder_.record(
          launch_record(row, RowStatus::kError,
                        "the range profiler returned no counter values for this launch", {}));
      continue;
    }
    // A graph launch back per kernel node (not done today: graphs are only batched) keeps
    // each node's range time.
    if (ranges.size() == 1) apply_gpu_time(counters, time, message, around, from_submission);
    recorder_.record(launch_record(row, RowStatus::kOk, message, std::move(counters)));
  }
}

void LaunchRows::flush_activity() {
  if (!no_activity_.empty()) return;
  const Clock::time_point t = Clock::now();
  KernelActivity::instance().flush();
  recorder_.add_phase("activity", seconds_since(t));
}

std::optional<LaunchGpuTime> LaunchRows::gpu_time(const KernelLaunch& launch,
                                                  std::uint32_t correlation,
                                                  std::uint64_t window_start) {
  if (!no_activity_.empty()) return std::nullopt;
  synchronize_context(driver_);
  const std::uint64_t window_end = KernelActivity::now_ns();
  flush_activity();
  return take_gpu_time(launch, correlation, window_start, window_end);
}

std::optional<LaunchGpuTime> LaunchRows::take_gpu_time(const KernelLaunch& launch,
                                                       std::uint32_t correlation,
                                                       std::uint64_t start, std::uint64_t end) {
  if (!no_activity_.empty()) return std::nullopt;
  std::optional<LaunchGpuTime> time = KernelActivity::instance().take(
      correlation, launch.graph ? std::string() : launch.mangled_name, start, end);
  recorder_.add_phase(!time             ? "activity missing"
                      : time->by_window ? "activity by window"
                                        : "activity by correlation",
                      1);
  return time;
}

void LaunchRows::apply_gpu_time(std::map<std::string, double>& counters,
                                const std::optional<LaunchGpuTime>& time, std::string& message,
                                Around around, bool from_submission) const {
  auto note = [&message](const std::string& text) {
    message += (message.empty() ? "" : "; ") + text;
  };
  const auto measured = counters.find(quantity::kGpuTime);
  const double around_seconds = measured != counters.end() ? measured->second : std::nan("");
  if (!std::isnan(around_seconds)) counters[quantity::kRangeTime] = around_seconds;
  if (!time) {
    if (around != Around::kAutoRange)
      note(std::string("kernel time from ") +
           (around == Around::kEvents ? "CUDA events" : "the range") +
           " around the launch (launch latency included): " +
           (no_activity_.empty() ? "CUPTI gave no kernel activity record for it" : no_activity_));
    return;
  }
  counters[quantity::kKernelExecution] = time->seconds;
  counters[quantity::kKernelCount] = time->kernels;
  counters[quantity::kGpuTime] = from_submission && std::isfinite(time->seconds_from_submission)
                                     ? time->seconds_from_submission
                                     : time->seconds;
  // A kernel cannot outlast what was measured around it: if it seems to, one source is wrong.
  if (around_seconds > 0 && time->seconds > around_seconds * 1.05 + 2e-6)
    note("the kernel's activity time (" + format_fixed(time->seconds * 1e6, 1) +
         " us) exceeds the time measured around it (" + format_fixed(around_seconds * 1e6, 1) +
         " us)");
}

}  // namespace roofline::inject
