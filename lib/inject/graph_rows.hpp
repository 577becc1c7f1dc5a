// The rows of a CUDA graph launch: one per node (kernel, memcpy, memset) from the activity
// records of the launch, and the launch itself as their parent.
//
// A node row carries the node's kernel (name, grid, block, registers and shared memory from its
// record), its time on the GPU (its execution, start to end, as the graph ran it: nodes of
// parallel branches share the GPU), its id and place in the launch, and the NVTX ranges open
// when it was captured (graph_catalog.hpp; the launch's own ranges when the capture had none).
// A kernel node replayed alone before the launch (--graph-nodes counted, node_replay.hpp) has
// the replay's counters, its time still the graph's, and the replay's own time (submission to
// end, after the cold flush: as ncu times a node) as replay_time_seconds; other nodes are timed
// only, and their rows say why. The parent row keeps
// the launch's measure: its time (the span from its first node's start to its last node's end)
// and, when the launch was one range of a batch, the whole graph's counters.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <regex>
#include <string>

#include "lib/inject/graph_catalog.hpp"
#include "lib/inject/kernel_activity.hpp"
#include "lib/inject/recorder.hpp"
#include "lib/profile/profile_protocol.hpp"

namespace roofline::inject {

// How the launch as a whole was measured: the parent row's status, message and counters (its
// kGpuTime on entry: what was measured around the launch, kept as kRangeTime).
struct GraphParent {
  RowStatus status = RowStatus::kCountersUnavailable;
  std::string message;
  std::map<std::string, double> counters;
};

// A kernel node's counters from its replay alone: `counters` (the replay's range time as
// kGpuTime), or empty and `why`.
struct NodeCounters {
  std::map<std::string, double> counters;
  std::string why;
  // CUPTI timestamps around the replay: its kernel's activity record falls between them.
  std::uint64_t window_start = 0;
  std::uint64_t window_end = 0;
};

class GraphRows {
 public:
  // `filter`: --kernel-regex (nullptr: every node); nodes whose name it does not match get no
  // row.
  GraphRows(Recorder& recorder, const GraphCatalog& catalog, const std::regex* filter);

  // Writes the rows of graph launch `launch` from its `activity` (nullopt: no records; the
  // parent alone is written); each kernel node's row says `node_note`, unless `counted` holds
  // its counters (by node id).
  void record(const KernelLaunch& launch, const std::optional<LaunchActivity>& activity,
              GraphParent parent, const std::string& node_note,
              const std::map<std::uint64_t, NodeCounters>& counted = {});

 private:
  Recorder& recorder_;
  const GraphCatalog& catalog_;
  const std::regex* filter_;
};

}  // namespace roofline::inject
