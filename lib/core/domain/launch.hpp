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
  bool graph = false;          // a CUDA graph launch, measured as a whole
  // True when Row::workload was read from the NVTX range name (a Workload label such as
  // "B1 H8 N4096 d64 causal fwd"); otherwise the row has no attention workload.
  bool workload_known = false;

  // "grid 128x1x1 block 256x1x1 #12"
  std::string shape_label() const;

  friend bool operator==(const KernelLaunch&, const KernelLaunch&) = default;
};

// The name rows use: the demangled name without return type, template arguments and
// parameters ("void ns::k<int, 4>(float*)" -> "ns::k"); the input when it is not demangled.
std::string short_kernel_name(std::string_view demangled);

// Same kernel shape: grid and block (what distinguishes launches of one kernel in a program).
bool same_launch_shape(const KernelLaunch& a, const KernelLaunch& b);

}  // namespace roofline
