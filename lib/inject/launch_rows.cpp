#include "lib/inject/launch_rows.hpp"

#include <cmath>
#include <utility>

#include "lib/core/base/text.hpp"
#include "lib/core/domain/metric_catalog.hpp"
#include "lib/inject/launch_site.hpp"

namespace roofline::inject {

LaunchRows::LaunchRows(const Driver& driver, Recorder& recorder, CounterSet set,
                       std::string no_activity, GraphRows& graphs, GraphNodes graph_nodes)
    : driver_(driver),
      recorder_(recorder),
      set_(set),
      no_activity_(std::move(no_activity)),
      graphs_(graphs),
      graph_nodes_(graph_nodes) {}

std::optional<LaunchGpuTime> gpu_time_of(const std::optional<LaunchActivity>& activity) {
  if (!activity) return std::nullopt;
  return gpu_time_of(*activity);
}

void set_gpu_span(KernelLaunch& launch, const std::optional<LaunchGpuTime>& time) {
  if (!time || time->kernels <= 0) return;
  launch.gpu_start_ns =
      static_cast<std::int64_t>(launch.graph ? time->nodes_start_ns : time->first_start_ns);
  launch.gpu_end_ns =
      static_cast<std::int64_t>(launch.graph ? time->nodes_end_ns : time->last_end_ns);
}

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

void LaunchRows::record_timed_graph(const KernelLaunch& launch, double seconds,
                                    const std::optional<LaunchActivity>& activity,
                                    const std::string& why) {
  GraphParent parent;
  parent.counters[quantity::kGpuTime] = seconds;
  parent.message = why;
  node_counters_.erase(launch.index);
  not_replayed_.erase(launch.index);
  graphs_.record(launch, activity, std::move(parent), why);
}

void LaunchRows::keep_node_counters(const Session& session, std::int64_t index, std::uint64_t node,
                                    const gpu::RangeValues* range, const std::string& why,
                                    std::uint64_t window_start, std::uint64_t window_end) {
  NodeCounters& kept = node_counters_[index][node];
  kept.window_start = window_start;
  kept.window_end = window_end;
  if (range == nullptr) {
    kept.why = why;
  } else if (!session.catalogued) {
    kept.why = "no metric catalogue for chip " + session.chip;
  } else {
    kept.counters = combine_metrics(session.chip, set_, session.metrics, range->values);
    if (kept.counters.empty()) kept.why = "the range profiler returned no counter values";
  }
}

void LaunchRows::nodes_not_replayed(std::int64_t index, const std::string& why) {
  not_replayed_[index] = why;
}

void LaunchRows::record_ranges(const Session& session, const KernelLaunch& launch,
                               const std::vector<gpu::RangeValues>& ranges,
                               const std::optional<LaunchActivity>& activity, Around around) {
  // One range: a kernel launch, or a graph launch measured as a whole (a batch's range).
  if (ranges.size() != 1) {
    recorder_.record(
        launch_record(launch, RowStatus::kError,
                      ranges.empty() ? "the range profiler recorded no range for this launch"
                                     : "the range profiler recorded " +
                                           std::to_string(ranges.size()) + " ranges for one launch",
                      {}));
    return;
  }
  const std::vector<double>& values = ranges.front().values;
  const std::optional<LaunchGpuTime> time = gpu_time_of(activity);
  // In a batch the context is idle when a kernel launch is submitted (synchronised before
  // its range opens): from its submission to its end is the GPU's time for it.
  const bool from_submission = around == Around::kUserRange && !launch.graph;
  KernelLaunch row = launch;
  set_gpu_span(row, time);
  std::string message;
  if (!session.catalogued) {
    std::map<std::string, double> counters;
    if (!values.empty() && values[0] == values[0]) counters[quantity::kGpuTime] = values[0] * 1e-9;
    message = "no metric catalogue for chip " + session.chip + ": kernel time only";
    apply_gpu_time(counters, time, message, around, from_submission);
    recorder_.record(launch_record(row, RowStatus::kCountersUnavailable, message, counters));
    return;
  }
  std::map<std::string, double> counters =
      combine_metrics(session.chip, set_, session.metrics, values);
  if (counters.empty()) {  // a range without values: never an `ok` row without counters
    recorder_.record(launch_record(row, RowStatus::kError,
                                   "the range profiler returned no counter values for this launch",
                                   {}));
    return;
  }
  if (launch.graph && graph_nodes()) {
    // The whole graph in one range (a batch): its counters on the parent; its nodes counted in
    // replays of their own, or timed.
    GraphParent parent{RowStatus::kOk,
                       "a CUDA graph launch, counted as one range (the whole graph's bytes)",
                       std::move(counters)};
    std::string note = "a kernel node, timed: its graph launch was counted as one range";
    if (auto why = not_replayed_.find(launch.index); why != not_replayed_.end()) {
      note += "; not replayed alone: " + why->second;
      not_replayed_.erase(why);
    }
    std::map<std::uint64_t, NodeCounters> counted;
    if (auto kept = node_counters_.find(launch.index); kept != node_counters_.end()) {
      counted = std::move(kept->second);
      node_counters_.erase(kept);
    }
    graphs_.record(launch, activity, std::move(parent), note, counted);
    return;
  }
  if (launch.graph)
    message =
        "a CUDA graph launch, measured as a whole (--graph-nodes off); time: from its first "
        "node's start to its last one's end";
  apply_gpu_time(counters, time, message, around, from_submission, launch.graph);
  recorder_.record(launch_record(row, RowStatus::kOk, message, std::move(counters)));
}

void LaunchRows::flush_activity() {
  if (!no_activity_.empty()) return;
  const Clock::time_point t = Clock::now();
  KernelActivity::instance().flush();
  recorder_.add_phase("activity", seconds_since(t));
}

std::optional<LaunchActivity> LaunchRows::activity_of(const KernelLaunch& launch,
                                                      std::uint32_t correlation,
                                                      std::uint64_t window_start) {
  if (!no_activity_.empty()) return std::nullopt;
  synchronize_context(driver_);
  const std::uint64_t window_end = KernelActivity::now_ns();
  flush_activity();
  return take_activity(launch, correlation, window_start, window_end);
}

std::optional<LaunchActivity> LaunchRows::take_activity(const KernelLaunch& launch,
                                                        std::uint32_t correlation,
                                                        std::uint64_t start, std::uint64_t end) {
  if (!no_activity_.empty()) return std::nullopt;
  std::optional<LaunchActivity> activity = KernelActivity::instance().take(
      correlation, launch.graph ? std::string() : launch.mangled_name, start, end);
  recorder_.add_phase(!activity             ? "activity missing"
                      : activity->by_window ? "activity by window"
                                            : "activity by correlation",
                      1);
  return activity;
}

void LaunchRows::apply_gpu_time(std::map<std::string, double>& counters,
                                const std::optional<LaunchGpuTime>& time, std::string& message,
                                Around around, bool from_submission, bool graph) const {
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
  const double span = time->kernels > 0 && time->nodes_end_ns > time->nodes_start_ns
                          ? static_cast<double>(time->nodes_end_ns - time->nodes_start_ns) * 1e-9
                          : time->seconds;
  const double own = graph ? span : time->seconds;
  counters[quantity::kGpuTime] =
      !graph && from_submission && std::isfinite(time->seconds_from_submission)
          ? time->seconds_from_submission
          : own;
  // A kernel cannot outlast what was measured around it: if it seems to, one source is wrong.
  if (around_seconds > 0 && own > around_seconds * 1.05 + 2e-6)
    note("the kernel's activity time (" + format_fixed(own * 1e6, 1) +
         " µs) exceeds the time measured around it (" + format_fixed(around_seconds * 1e6, 1) +
         " µs)");
}

}  // namespace roofline::inject
