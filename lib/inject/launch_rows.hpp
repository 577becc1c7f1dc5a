// A measured launch's records (profile_protocol.hpp) from the values of its ranges and the
// activity records of its kernels.
//
// A launch's time is not its range's: a user range holds the launch latency and, for a first
// launch, the module's lazy loading (up to 1,900x a kernel's time on the H200). CUPTI's kernel
// activity records (kernel_activity.hpp) give each kernel's submission, start and end on the
// GPU; a batched launch is timed from submission to end (as ncu's gpu__time_duration), a graph
// launch by its kernel nodes' execution, and a kernel-replayed one by its auto range (kernel
// replay's records have no duration).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "lib/gpu/range_profiler.hpp"
#include "lib/inject/driver.hpp"
#include "lib/inject/graph_rows.hpp"
#include "lib/inject/kernel_activity.hpp"
#include "lib/inject/recorder.hpp"
#include "lib/inject/session.hpp"
#include "lib/profile/profile_protocol.hpp"

namespace roofline::inject {

// What a launch's time was measured with around it, before the activity records replace it.
enum class Around {
  kUserRange,  // a range of a batch: launch latency and the range's own cost included
  kAutoRange,  // an auto range of kernel replay: the kernel alone
  kEvents,     // CUDA events on its stream
};

// Waits for the current context's work. An error here (a kernel fault) is the program's to
// see at its next call; the launch's own row reports its launch result.
inline void synchronize_context(const Driver& driver) {
  driver.ctx_synchronize();
}

class LaunchRows {
 public:
  // `no_activity`: why kernel activity records are unavailable; empty: they work. `graphs`
  // writes the rows of graph launches, unless `graph_nodes` is kOff (then a graph launch is
  // one row, as a kernel launch is).
  LaunchRows(const Driver& driver, Recorder& recorder, CounterSet set, std::string no_activity,
             GraphRows& graphs, GraphNodes graph_nodes);

  // A measured launch whose activity records are wanted, by the correlation id of its call.
  void expect_activity(std::uint32_t correlation);

  // Stops the pass of `counters`, decodes and evaluates its ranges (each phase timed); throws
  // gpu::ProfilerError.
  std::vector<gpu::RangeValues> read_counters(gpu::KernelRangeProfiler& counters);

  // Rows of one launch from its ranges (one for a kernel or a graph launch measured as a
  // whole) and its activity records: a graph launch's nodes get rows of their own
  // (graph_rows.hpp), unless --graph-nodes is off.
  void record_ranges(const Session& session, const KernelLaunch& launch,
                     const std::vector<gpu::RangeValues>& ranges,
                     const std::optional<LaunchActivity>& activity, Around around);
  // The rows of a graph launch timed with CUDA events (`seconds`) and its activity records.
  void record_timed_graph(const KernelLaunch& launch, double seconds,
                          const std::optional<LaunchActivity>& activity, const std::string& why);

  // The activity records CUPTI holds, delivered (the launches read next have finished).
  void flush_activity();
  // The activity records of a launch that has just finished: its context synchronised,
  // records flushed.
  std::optional<LaunchActivity> activity_of(const KernelLaunch& launch, std::uint32_t correlation,
                                            std::uint64_t window_start);
  // A graph launch's records are its nodes'; a kernel launch's, those of its kernel's name.
  std::optional<LaunchActivity> take_activity(const KernelLaunch& launch, std::uint32_t correlation,
                                              std::uint64_t start, std::uint64_t end);

  // The row's time (kGpuTime) from the activity records: with `from_submission`, from the
  // submission of the launch to the GPU to the kernel's end, the GPU's launch processing
  // included as in ncu's gpu__time_duration (on the H200 the two agreed within 0.4 us at the
  // median over 1,314 PyTorch launches, where the execution alone read 1.1 us less); else the
  // kernels' execution (kKernelExecution, kept beside it either way). `counters`' kGpuTime on
  // entry is what was measured around the launch (`around`), kept as kRangeTime; without a
  // record it stays the row's time and, unless it is an auto range (the kernel alone, as ncu
  // measures it), `message` says so. A graph launch (`graph`) takes its nodes' span, the
  // first one's start to the last one's end, as counted and timed graph launches do: its
  // kernels' execution summed would count overlapping branches twice and leave out its memcpy
  // and memset nodes and the time between nodes.
  void apply_gpu_time(std::map<std::string, double>& counters,
                      const std::optional<LaunchGpuTime>& time, std::string& message, Around around,
                      bool from_submission, bool graph = false) const;

  // True when graph launches get node rows (--graph-nodes counted or timed).
  bool graph_nodes() const { return graph_nodes_ != GraphNodes::kOff; }
  // True when graph launches' kernel nodes are replayed and counted (--graph-nodes counted).
  bool counts_nodes() const { return graph_nodes_ == GraphNodes::kCounted; }

  // The range of a kernel node's replay (node_replay.hpp; nullptr: lost, see `why`), kept for
  // the rows of graph launch `index`, which are written after it.
  // `window_start`, `window_end`: CUPTI timestamps around the replay.
  void keep_node_counters(const Session& session, std::int64_t index, std::uint64_t node,
                          const gpu::RangeValues* range, const std::string& why,
                          std::uint64_t window_start = 0, std::uint64_t window_end = 0);
  // The nodes of graph launch `index` were not replayed: its kernel nodes' rows say `why`.
  void nodes_not_replayed(std::int64_t index, const std::string& why);

 private:
  const Driver& driver_;
  Recorder& recorder_;
  CounterSet set_;
  std::string no_activity_;  // why kernel activity records are unavailable; empty: they work
  GraphRows& graphs_;
  GraphNodes graph_nodes_;
  // By graph launch index, until its rows are written: its replayed nodes' counters, or why
  // its nodes were not replayed.
  std::map<std::int64_t, std::map<std::uint64_t, NodeCounters>> node_counters_;
  std::map<std::int64_t, std::string> not_replayed_;
};

// The GPU time of a launch from its activity records (nullopt without any).
std::optional<LaunchGpuTime> gpu_time_of(const std::optional<LaunchActivity>& activity);

// `launch`'s GPU start and end from its records, when they hold a kernel: a graph launch's span
// over every node (memcpy and memset nodes too), any other launch's over its kernels.
void set_gpu_span(KernelLaunch& launch, const std::optional<LaunchGpuTime>& time);

}  // namespace roofline::inject
