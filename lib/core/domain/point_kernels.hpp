// The kernels one launch of a bundled implementation runs (`run`'s kernel pass,
// lib/gpu/kernel_pass.hpp): the standard path's cuBLAS GEMMs and softmax, flash-v3 backward's
// prepare, main and dQ-conversion kernels, a split flash-decode's combine. Each in launch order,
// with its name, launch shape and resources as the GPU ran it, and its time from CUPTI's activity
// records (start to end, the median over the pass's launches). The launch's time less their sum
// is the time no kernel of it ran: the first kernel's launch latency and the gaps between kernels.
#pragma once

#include <array>
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

}  // namespace roofline
