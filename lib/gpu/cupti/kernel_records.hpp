// The kernels that a stretch of this process's host code launched, as the GPU ran them: CUPTI's
// activity records of kernel execution (CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, the records Nsight
// Systems reads), each with the kernel's name, launch shape, resources, and its start and end on
// the GPU. `run` reads them for one launch of a point at a time (kernel_pass.hpp): which kernels a
// bundled implementation runs (cuBLAS's among them), for how long each, and for how long none
// ran between them.
//
// CUPTI delivers activity buffers to one pair of callbacks per process: one KernelRecords may
// exist at a time.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace roofline::gpu {

struct KernelRecord {
  std::string name;  // demangled where the driver's name is a C++ one (cuBLAS's are not)
  std::array<int, 3> grid{1, 1, 1};
  std::array<int, 3> block{1, 1, 1};
  int registers_per_thread = 0;
  std::int64_t shared_bytes = 0;  // static and dynamic, per CTA
  std::uint64_t start_ns = 0;     // CUPTI timestamps
  std::uint64_t end_ns = 0;
};

class KernelRecords {
 public:
  // Enables the records; throws ProfilerError (a std::runtime_error) with CUPTI's message
  // (another profiler attached, no CUPTI activity support), std::runtime_error when another
  // KernelRecords exists.
  KernelRecords();
  // Disables them; records not taken are dropped.
  ~KernelRecords();
  KernelRecords(const KernelRecords&) = delete;
  KernelRecords& operator=(const KernelRecords&) = delete;

  // Every kernel that ended since the records were enabled or last taken, by start time. The
  // caller synchronises the work first. Throws ProfilerError when the flush fails,
  // std::runtime_error when CUPTI dropped records.
  std::vector<KernelRecord> take();
};

}  // namespace roofline::gpu
