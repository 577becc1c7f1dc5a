// A kernel launch of another program, as `profile` saw it: which kernel, its launch shape and
// resources, where in the program it ran. Rows of a profiled launch carry one; rows of the
// bundled kernels (run, model) do not.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace roofline {

struct KernelLaunch {
  std::string mangled_name;    // as the driver reports it ("_Z9vectorAddPKfS0_Pfi")
  std::string demangled_name;  // full signature, templates included; = mangled when not C++
  std::string nvtx_range;      // innermost-last NVTX ranges pushed on the launching thread,
                               // joined with " / "; empty when none
  std::array<int, 3> grid{1, 1, 1};
  std::array<int, 3> block{1, 1, 1};
  int registers_per_thread = 0;
  std::int64_t static_shared_bytes = 0;
  std::int64_t dynamic_shared_bytes = 0;
  std::int64_t index = 0;      // order among every kernel launch of its process, from 0
  std::int64_t stream_id = 0;  // the driver's stream id; 0 for the legacy default stream
  int process_id = 0;          // the process that launched it (children get their own)
  std::string process;         // that process's command name ("python3")
  bool graph = false;          // a CUDA graph launch: the parent of its node rows, if any
  // True when Row::workload was read from the NVTX range name (a Workload label such as
  // "B1 H8 N4096 d64 causal fwd"); otherwise the row has no attention workload.
  bool workload_known = false;

  // Inside CUDA graphs. A graph launch's row (`graph`) is the parent of `graph_nodes` node rows
  // that share its `index`. A node row has `node_kind` "kernel", "memcpy" or "memset", its
  // node's id (CUPTI's graphNodeId, unique in the process) and its place among the launch's
  // nodes in the order they started on the GPU; `graph_id` is CUPTI's id of the graph that ran
  // (parent and nodes). A memcpy or memset node moved `node_bytes`.
  std::int64_t graph_nodes = 0;
  std::string node_kind;
  std::uint64_t graph_node_id = 0;
  int node_position = 0;
  std::uint32_t graph_id = 0;
  std::int64_t node_bytes = 0;
  // When it ran on the GPU: CUPTI timestamps (ns) of its first kernel's start and its last
  // kernel's end; 0 when unknown. One clock for every process of the machine.
  std::int64_t gpu_start_ns = 0;
  std::int64_t gpu_end_ns = 0;

  bool is_graph_node() const { return !node_kind.empty(); }

  // "grid 128x1x1 block 256x1x1 #12"; a graph node's adds its place: "... #12.3"
  std::string shape_label() const;

  friend bool operator==(const KernelLaunch&, const KernelLaunch&) = default;
};

// A mangled name demangled (the C++ ABI's); the name itself when it does not demangle, "" for
// nullptr.
std::string demangle(const char* name);

// The name rows use: the demangled name without return type, template arguments and
// parameters ("void ns::k<int, 4>(float*)" -> "ns::k"); the input when it is not demangled.
std::string short_kernel_name(std::string_view demangled);

// "128x1x1": a grid or block as the tables print it.
std::string dims_text(const std::array<int, 3>& d);

// Same kernel shape: grid and block (what distinguishes launches of one kernel in a program).
bool same_launch_shape(const KernelLaunch& a, const KernelLaunch& b);

}  // namespace roofline
