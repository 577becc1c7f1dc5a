// Where each node of the program's CUDA graphs came from. A graph launch is one driver call;
// what ran inside it is known from its nodes' activity records (kernel_activity.hpp) by node
// id. This catalogue carries to those ids what only the capture knew: the NVTX ranges open on
// the capturing thread when the node was made, and the kernel launched into the capture. CUPTI's
// resource callbacks report each node as it is created (inside the launch call that captures
// it) and each clone of it (graph instantiation clones every node into the executable graph,
// whose ids the activity records carry), so an origin follows a node from capture to every
// replay. Per executable graph it keeps the names of its kernel nodes, which let --kernel-regex
// choose graph launches before they run.
//
// Thread-safe: callbacks come from any thread. Its mutex is a leaf of the library's lock order.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace roofline::inject {

struct NodeOrigin {
  std::string nvtx_range;  // the capturing thread's NVTX ranges, joined with " / "
  std::string kernel;      // the demangled name of the kernel captured into it; "" if none
};

// An executable graph's kernel nodes, as its instantiation cloned them: their demangled names
// as the capture knew them ("" unknown).
struct GraphExecNodes {
  std::vector<std::string> kernels;
};

class GraphCatalog {
 public:
  // A node created (GRAPHNODE_CREATED): `origin` is what the creating thread knew. A node
  // already known (a clone reported first) keeps what it has.
  void created(std::uint64_t node, NodeOrigin origin);
  // A node cloned from `original` (GRAPHNODE_CLONED); `kernel_node`: of kernel type. While the
  // calling thread instantiates an executable graph (between exec_starting and exec_created),
  // the clone joins that graph's node list.
  void cloned(std::uint64_t node, std::uint64_t original, bool kernel_node);
  // Instantiation of an executable graph begins / ends on the calling thread (GRAPHEXEC_
  // CREATE_STARTING, GRAPHEXEC_CREATED with its id).
  void exec_starting();
  void exec_created(std::uint32_t exec);

  // The origin of node `node`, if the capture or a clone reported it.
  std::optional<NodeOrigin> origin(std::uint64_t node) const;
  // The nodes of executable graph `exec`, if its instantiation was seen.
  std::optional<GraphExecNodes> exec_nodes(std::uint32_t exec) const;
  // The id of the latest clone of node `node`, following clones of clones (instantiation may
  // clone a node more than once before the executable graph's node, the one activity records
  // carry, is made); 0 when it was never cloned.
  std::uint64_t latest_clone(std::uint64_t node) const;

 private:
  mutable std::mutex mutex_;
  std::map<std::uint64_t, NodeOrigin> origins_;  // bounded by kMaxOrigins
  std::map<std::uint32_t, GraphExecNodes> execs_;
  std::map<std::uint64_t, std::uint64_t> clones_;  // original to its latest clone; bounded
};

}  // namespace roofline::inject
