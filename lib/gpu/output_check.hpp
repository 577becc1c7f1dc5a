// Checks of one point's outputs on the device, after its first launch: every output element
// written (no NaN or Inf left of the poison), and --verify's comparison of each output with an
// FP32 reference and with a plain implementation in the workload's dtype, FP16 or BF16
// (flash-attention's rule, judged by lib/core/report/verification.hpp).
#pragma once

#include <array>
#include <cstddef>

#include <cuda_runtime_api.h>

#include "lib/core/report/report.hpp"
#include "lib/gpu/device_memory.hpp"
#include "lib/gpu/input_arena.hpp"

namespace roofline::gpu {

class OutputCheck {
 public:
  explicit OutputCheck(const Stream& stream);

  // Throws CudaError naming the first output (o; dq, dk, dv) with non-finite values.
  void require_written(const Workload& workload, const InputArena& arena, const PointSizes& sizes);
  // Runs both references into the arena's reference buffers (sized with `verify`) and judges.
  Verification verify(const Workload& workload, InputArena& arena, const PointSizes& sizes);

 private:
  int count_nonfinite(const DeviceBuffer& buffer, std::size_t bytes, kernels::DType dtype);
  // {max |error|, ‖error‖₂, ‖reference‖₂} of a test output (of `dtype`, or FP32 when test_16bit
  // is null) against an FP32 reference.
  std::array<double, 3> error_stats(const void* test_16bit, kernels::DType dtype,
                                    const float* test_float, const float* ref, std::size_t count);

  const Stream& stream_;
  DeviceBuffer stats_;      // 3 doubles: max error, error and reference norms
  DeviceBuffer nonfinite_;  // 1 int: count of NaN/Inf outputs
};

}  // namespace roofline::gpu
