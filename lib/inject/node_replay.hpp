// Counting a CUDA graph's kernel nodes one by one (--graph-nodes counted). A graph launch is one
// driver call and the range profiler cannot split it into its kernels (an auto-range pass
// around a graph launch fails in CUPTI 13.0, NOTES.md), so its nodes are replayed alone first,
// as Nsight Compute's node-level graph profiling does: the device memory is saved (CUPTI's
// checkpoint, checkpoint.hpp), every kernel, memcpy and memset node is run once on the launch's
// stream in an order its edges allow, each kernel as a range of the open batch, and the memory
// is restored before the graph launch itself runs. The program sees the graph run once.
//
// What a node needs to run alone is read when its graph is instantiated (the program may
// destroy the graph right after, as PyTorch does): the kernel's function, dimensions, launch
// attributes and a copy of its argument values; the copy's parameters; the memset's. A graph
// with a node that cannot run alone (a host function, a child graph, memory allocation,
// conditional or external-semaphore nodes), or an executable graph changed after its
// instantiation (cuGraphExec*SetParams, cuGraphExecUpdate, cuGraphNodeSetEnabled), is not
// replayed: its nodes are timed and their rows say why.
#pragma once

#include <cuda.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "lib/inject/driver.hpp"

namespace roofline::inject {

// One node as it runs alone.
struct ReplayNode {
  enum class Kind { kKernel, kMemcpy, kMemset };
  Kind kind = Kind::kKernel;
  std::uint64_t node_id = 0;  // the executable graph's node: its activity records' graphNodeId
  // A kernel node.
  CUfunction function = nullptr;
  std::array<unsigned, 3> grid{1, 1, 1};
  std::array<unsigned, 3> block{1, 1, 1};
  unsigned shared_bytes = 0;
  std::vector<CUlaunchAttribute> attributes;
  std::vector<std::byte> arguments;  // every parameter's value, at its offset
  std::vector<std::size_t> offsets;  // of parameter i in `arguments`
  bool packed = false;               // `arguments` is the launch's one argument buffer (`extra`)
  // A memcpy or memset node.
  CUDA_MEMCPY3D copy{};
  CUDA_MEMSET_NODE_PARAMS set{};
};

// An executable graph's nodes in an order that its edges allow; `why` non-empty: it cannot be
// replayed (and `nodes` is empty).
struct ReplayPlan {
  std::vector<ReplayNode> nodes;
  std::string why;
};

// Reads graph `graph`, just instantiated; `clone_of` gives the id of the executable graph's
// clone of a node of `graph` (GraphCatalog::latest_clone; 0: unknown).
ReplayPlan plan_replay(const Driver& driver, CUgraph graph,
                       const std::function<std::uint64_t(CUgraphNode)>& clone_of);

// Enqueues node `node` on `stream`; the driver's result.
CUresult replay_node(const Driver& driver, const ReplayNode& node, CUstream stream);

// The plans of the program's executable graphs, by executable-graph id. Thread-safe.
class ReplayPlans {
 public:
  void add(std::uint32_t exec, ReplayPlan plan);
  // The executable graph was changed after instantiation by `call`: it is not replayed.
  void changed(std::uint32_t exec, const std::string& call);
  // The plan of `exec`; a plan with `why` when none was made.
  std::shared_ptr<const ReplayPlan> find(std::uint32_t exec) const;

 private:
  mutable std::mutex mutex_;
  std::map<std::uint32_t, std::shared_ptr<const ReplayPlan>> plans_;
};

}  // namespace roofline::inject
