// Device-side helpers shared by the kernel files: error propagation at the CUDA boundary,
// integer helpers, warp reductions and FP16 packing. Included only by .cu files.
#pragma once

#include <cstddef>
#include <cstdint>

#include <cuda_fp16.h>
#include <cuda_runtime.h>

// Returns the first failing cudaError_t of `expr` from the enclosing function.
#define ROOFLINE_RETURN_IF_ERROR(expr)           \
  do {                                           \
    const cudaError_t roofline_status_ = (expr); \
    if (roofline_status_ != cudaSuccess) {       \
      return roofline_status_;                   \
    }                                            \
  } while (0)

// After a <<<>>> launch: configuration errors only show up in cudaGetLastError.
#define ROOFLINE_RETURN_IF_LAUNCH_FAILED() ROOFLINE_RETURN_IF_ERROR(cudaGetLastError())

namespace roofline::kernels {

constexpr float kLog2e = 1.4426950408889634f;
constexpr unsigned kFullMask = 0xffffffffu;

__host__ __device__ constexpr int ceil_div(int a, int b) {
  return (a + b - 1) / b;
}

// Workspace sub-buffers start on 256-byte boundaries so vector and cuBLAS accesses stay aligned.
constexpr std::size_t align_up(std::size_t bytes, std::size_t alignment = 256) {
  return (bytes + alignment - 1) / alignment * alignment;
}

__device__ __forceinline__ float warp_max(float x) {
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1) {
    x = fmaxf(x, __shfl_xor_sync(kFullMask, x, offset));
  }
  return x;
}

__device__ __forceinline__ float warp_sum(float x) {
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1) {
    x += __shfl_xor_sync(kFullMask, x, offset);
  }
  return x;
}

// Reductions over the `kWidth` consecutive lanes that share a row (kWidth a power of two <= 32).
template <int kWidth>
__device__ __forceinline__ float group_max(float x) {
#pragma unroll
  for (int offset = kWidth / 2; offset > 0; offset >>= 1) {
    x = fmaxf(x, __shfl_xor_sync(kFullMask, x, offset));
  }
  return x;
}

template <int kWidth>
__device__ __forceinline__ float group_sum(float x) {
#pragma unroll
  for (int offset = kWidth / 2; offset > 0; offset >>= 1) {
    x += __shfl_xor_sync(kFullMask, x, offset);
  }
  return x;
}

// Two floats rounded to FP16 and packed as one 32-bit register (lo in the low half).
__device__ __forceinline__ uint32_t pack_half2(float lo, float hi) {
  __half2 h = __floats2half2_rn(lo, hi);
  return *reinterpret_cast<uint32_t*>(&h);
}

__device__ __forceinline__ float round_to_half(float x) {
  return __half2float(__float2half_rn(x));
}

// Eight FP16 values held in one 16-byte vector, as loaded by a single uint4 access.
union Half8 {
  uint4 vec;
  __half2 h2[4];
};

}  // namespace roofline::kernels
