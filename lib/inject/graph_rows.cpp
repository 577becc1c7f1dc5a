#include "lib/inject/graph_rows.hpp"

#include <algorithm>
#include <utility>

#include "lib/core/base/text.hpp"
#include "lib/core/domain/metric_catalog.hpp"
#include "lib/core/report/report.hpp"
#include "lib/inject/launch_site.hpp"

namespace roofline::inject {
namespace {

double seconds_between(std::uint64_t start, std::uint64_t end) {
  return end > start ? static_cast<double>(end - start) * 1e-9 : 0.0;
}

// The node's own launch: the parent's process, index and stream, the node's kernel and place.
KernelLaunch node_launch(const KernelLaunch& parent, const KernelExecution& e, int position,
                         const GraphCatalog& catalog) {
  KernelLaunch node = parent;
  node.graph = false;
  node.graph_nodes = 0;
  node.graph_node_id = e.graph_node;
  node.node_position = position;
  node.graph_id = e.graph_id;
  node.gpu_start_ns = static_cast<std::int64_t>(e.start_ns);
  node.gpu_end_ns = static_cast<std::int64_t>(std::max(e.start_ns, e.end_ns));
  node.grid = {1, 1, 1};
  node.block = {1, 1, 1};
  node.registers_per_thread = 0;
  node.static_shared_bytes = 0;
  node.dynamic_shared_bytes = 0;
  switch (e.kind) {
    case ExecutionKind::kKernel:
      node.node_kind = "kernel";
      node.mangled_name = e.name;
      node.demangled_name = demangle(e.name.c_str());
      node.grid = e.grid;
      node.block = e.block;
      node.registers_per_thread = e.registers_per_thread;
      node.static_shared_bytes = e.static_shared_bytes;
      node.dynamic_shared_bytes = e.dynamic_shared_bytes;
      break;
    case ExecutionKind::kMemcpy:
      node.node_kind = "memcpy";
      node.mangled_name.clear();
      node.demangled_name = e.copy_kind.empty() ? "memcpy" : "memcpy " + e.copy_kind;
      node.node_bytes = e.bytes;
      break;
    case ExecutionKind::kMemset:
      node.node_kind = "memset";
      node.mangled_name.clear();
      node.demangled_name = "memset";
      node.node_bytes = e.bytes;
      break;
  }
  if (const std::optional<NodeOrigin> origin = catalog.origin(e.graph_node);
      origin && !origin->nvtx_range.empty())
    node.nvtx_range = origin->nvtx_range;
  return node;
}

// The time of node `e`'s replay alone: its record among the launch's replays, inside the
// replay's window. The context was idle when it was submitted (synchronised before its range),
// so from submission to end holds the GPU's launch processing, as for a launch in a batch.
std::optional<double> replay_seconds(const std::optional<LaunchActivity>& activity,
                                     const KernelExecution& e, const NodeCounters& counted) {
  if (!activity || counted.window_end <= counted.window_start) return std::nullopt;
  for (const KernelExecution& r : activity->replays) {
    if (r.name != e.name || r.start_ns < counted.window_start || r.end_ns > counted.window_end ||
        r.end_ns <= r.start_ns)
      continue;
    const bool submitted = r.submitted_ns >= counted.window_start && r.submitted_ns <= r.start_ns;
    return seconds_between(submitted ? r.submitted_ns : r.start_ns, r.end_ns);
  }
  return std::nullopt;
}

// Time inside a graph launch when none of its nodes ran (nodes in start order): the GPU waiting
// between dependent nodes, which no node's own time holds. The largest gap and the position of
// the node after it are kept for the parent's message.
struct Idle {
  double seconds = 0;
  double largest = 0;
  std::size_t before = 0;  // the node after the largest gap
};

Idle idle_between(const std::vector<KernelExecution>& nodes) {
  Idle idle;
  std::uint64_t busy_until = 0;
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    const KernelExecution& e = nodes[i];
    if (e.end_ns <= e.start_ns) continue;
    if (busy_until != 0 && e.start_ns > busy_until) {
      const double gap = seconds_between(busy_until, e.start_ns);
      idle.seconds += gap;
      if (gap > idle.largest) {
        idle.largest = gap;
        idle.before = i;
      }
    }
    busy_until = std::max(busy_until, e.end_ns);
  }
  return idle;
}

// The part of kernel node i's time during which another kernel node of the launch ran (a
// parallel branch, or the next node starting under its last CTAs): the others' intervals
// clipped to its own, merged. `nodes` are in start order.
double shared_seconds(const std::vector<KernelExecution>& nodes, std::size_t i) {
  const KernelExecution& self = nodes[i];
  std::uint64_t covered_until = self.start_ns;
  double shared = 0;
  for (std::size_t j = 0; j < nodes.size() && nodes[j].start_ns < self.end_ns; ++j) {
    const KernelExecution& other = nodes[j];
    if (j == i || other.kind != ExecutionKind::kKernel || other.end_ns <= other.start_ns) continue;
    const std::uint64_t from = std::max(other.start_ns, covered_until);
    const std::uint64_t to = std::min(other.end_ns, self.end_ns);
    if (to > from) {
      shared += seconds_between(from, to);
      covered_until = to;
    }
  }
  return shared;
}

}  // namespace

GraphRows::GraphRows(Recorder& recorder, const GraphCatalog& catalog, const std::regex* filter)
    : recorder_(recorder), catalog_(catalog), filter_(filter) {}

void GraphRows::record(const KernelLaunch& launch, const std::optional<LaunchActivity>& activity,
                       GraphParent parent, const std::string& node_note,
                       const std::map<std::uint64_t, NodeCounters>& counted) {
  const std::vector<KernelExecution> nodes =
      activity ? nodes_in_order(*activity) : std::vector<KernelExecution>{};
  std::vector<std::string> lines;
  std::size_t kernel_nodes = 0;
  double node_seconds = 0;
  std::uint64_t first = 0, last = 0;
  int written = 0;
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    const KernelExecution& e = nodes[i];
    const bool kernel = e.kind == ExecutionKind::kKernel;
    const double seconds = seconds_between(e.start_ns, e.end_ns);
    if (kernel) {
      ++kernel_nodes;
      node_seconds += seconds;
    }
    if (e.end_ns > e.start_ns) {
      if (first == 0 || e.start_ns < first) first = e.start_ns;
      last = std::max(last, e.end_ns);
    }
    KernelLaunch node = node_launch(launch, e, static_cast<int>(i), catalog_);
    if (filter_ != nullptr && !std::regex_search(node.demangled_name, *filter_)) continue;
    std::map<std::string, double> counters;
    RowStatus status = RowStatus::kCountersUnavailable;
    std::string message = kernel ? node_note
                                 : "a " + node.node_kind + " node of " + std::to_string(e.bytes) +
                                       " bytes: time only";
    if (const auto c = kernel ? counted.find(e.graph_node) : counted.end(); c != counted.end()) {
      if (!c->second.counters.empty()) {
        counters = c->second.counters;
        status = RowStatus::kOk;
        message =
            "a kernel node, counted in a replay of its own before the launch (device "
            "memory saved and restored); time: as the graph ran it";
        // The replay's range time is what was measured around it, not the node's time.
        if (auto t = counters.find(quantity::kGpuTime); t != counters.end()) {
          counters[quantity::kRangeTime] = t->second;
          counters.erase(t);
        }
        if (const std::optional<double> replay = replay_seconds(activity, e, c->second))
          counters[quantity::kReplayTime] = *replay;
      } else {
        message += "; not counted: " + c->second.why;
      }
    }
    if (seconds > 0) {
      counters[quantity::kGpuTime] = seconds;
      counters[quantity::kKernelExecution] = seconds;
      if (kernel) {
        const double shared = shared_seconds(nodes, i);
        counters[quantity::kGraphShared] = shared;
        // Its rates divide what it moved alone by a time it partly spent beside other nodes.
        if (shared > quantity::kGraphSharedNoted * seconds) {
          const auto alone = counters.find(quantity::kReplayTime);
          message += "; ran beside other nodes of its launch for " + format_fixed(shared * 1e6, 1) +
                     " of its " + format_fixed(seconds * 1e6, 1) +
                     " µs, so its rates are those of a shared GPU" +
                     (alone != counters.end() ? " (its replay alone took " +
                                                    format_fixed(alone->second * 1e6, 1) + " µs)"
                                              : std::string());
        }
      }
    } else {
      message += "; its activity record has no duration";
      if (status == RowStatus::kOk) status = RowStatus::kCountersUnavailable;
    }
    counters[quantity::kKernelCount] = kernel ? 1 : 0;
    lines.push_back(launch_record(node, status, message, counters));
    ++written;
  }

  KernelLaunch graph = launch;
  graph.graph = true;
  graph.graph_nodes = written;
  if (first != 0) {
    graph.gpu_start_ns = static_cast<std::int64_t>(first);
    graph.gpu_end_ns = static_cast<std::int64_t>(last);
  }
  std::map<std::string, double>& counters = parent.counters;
  if (auto t = counters.find(quantity::kGpuTime); t != counters.end())
    counters[quantity::kRangeTime] = t->second;
  auto note = [&parent](const std::string& text) {
    parent.message += (parent.message.empty() ? "" : "; ") + text;
  };
  if (kernel_nodes > 0) {
    counters[quantity::kKernelExecution] = node_seconds;
    counters[quantity::kKernelCount] = static_cast<double>(kernel_nodes);
    counters[quantity::kGpuTime] = seconds_between(first, last);
    const Idle idle = idle_between(nodes);
    counters[quantity::kGraphIdle] = idle.seconds;
    note(std::to_string(kernel_nodes) + " kernel node" + (kernel_nodes == 1 ? "" : "s") +
         (nodes.size() > kernel_nodes
              ? " and " + std::to_string(nodes.size() - kernel_nodes) + " other"
              : std::string()) +
         (written > 0 ? ", " + std::to_string(written) + " in rows of their own" : std::string()) +
         "; time: from the first node's start to the last one's end");
    if (idle.seconds > 0)
      note("no node ran for " + format_fixed(idle.seconds * 1e6, 1) +
           " µs of it (the largest gap " + format_fixed(idle.largest * 1e6, 1) +
           " µs, before node " + std::to_string(idle.before) + ")");
  } else {
    note(activity ? "no kernel node in its activity records"
                  : "CUPTI gave no activity record for its nodes: time measured around it");
  }
  // The parent first, then its nodes, so that a reader meets the graph before what it holds.
  recorder_.record(launch_record(graph, parent.status, parent.message, counters));
  for (const std::string& line : lines) recorder_.record(line);
}

}  // namespace roofline::inject
