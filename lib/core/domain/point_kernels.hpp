// The kernels one launch of a bundled implementation runs (`run`'s kernel pass,
// lib/gpu/kernel_pass.hpp): the standard path's cuBLAS GEMMs and softmax, flash-v3 backward's
// prepare, main and dQ-conversion kernels, a split flash-decode's combine. Each in launch order,
// with its name, launch shape and resources as the GPU ran it, and its time from CUPTI's activity
// records (start to end, the median over the pass's launches). The launch's time less their sum
// is the time no kernel of it ran: the first kernel's launch latency and the gaps between kernels.
// Kernels may overlap: a programmatic dependent launch (a split flash-decode's combine on sm_90)
// starts while the kernel before it runs and waits for it on the device, so the time any kernel
// ran is the union of their intervals, not the sum of their times.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace roofline {

struct PointKernel {
  std::string name;  // demangled where C++ (cuBLAS's names are not)
  std::array<int, 3> grid{1, 1, 1};
  std::array<int, 3> block{1, 1, 1};
  int registers_per_thread = 0;
  std::int64_t shared_bytes = 0;  // static and dynamic, per CTA
  double seconds = 0;             // start to end on the GPU
  double start_seconds = 0;       // after the launch's first kernel started

  friend bool operator==(const PointKernel&, const PointKernel&) = default;
};

// The kernels' times summed.
double kernels_seconds(const std::vector<PointKernel>& kernels);

// The time at least one of the kernels ran: the union of their intervals (start_seconds to
// start_seconds + seconds).
double kernels_busy_seconds(const std::vector<PointKernel>& kernels);

// The part of kernel `k`'s interval during which a kernel launched before it (0 to k - 1) still
// ran: its time beside them, which kernels_busy_seconds counts once, in theirs.
double overlap_with_earlier_seconds(const std::vector<PointKernel>& kernels, std::size_t k);

}  // namespace roofline
