// Helpers shared by the kernel files: error propagation at the CUDA boundary, their scratch
// allocations, integer helpers, warp reductions and FP16/BF16 packing. Included only by .cu
// files.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "kernels/context_sms.hpp"

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

// f(std::integral_constant<int, kHeadDim>{}) for the head dims the prefill kernels are built for
// (32, 64, 128); cudaErrorInvalidValue for another.
template <typename F>
cudaError_t for_head_dim(int head_dim, F&& f) {
  switch (head_dim) {
    case 32:
      return f(std::integral_constant<int, 32>{});
    case 64:
      return f(std::integral_constant<int, 64>{});
    case 128:
      return f(std::integral_constant<int, 128>{});
    default:
      return cudaErrorInvalidValue;
  }
}

// A scratch allocation of the kernels' own (the reference backward's row statistics, the SM
// census's flags): cudaMalloc and cudaFree, or, given a stream, made and freed in its order
// (cudaMallocAsync, cudaFreeAsync). Freed when it goes out of scope, or by free(), which
// returns the free's status to a caller that reports it.
class Scratch {
 public:
  Scratch() = default;
  explicit Scratch(cudaStream_t stream) : stream_(stream), ordered_(true) {}
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  ~Scratch() { free(); }

  // cudaErrorInvalidValue when it holds an allocation already.
  cudaError_t allocate(std::size_t bytes) {
    if (data_ != nullptr) return cudaErrorInvalidValue;
    return ordered_ ? cudaMallocAsync(&data_, bytes, stream_) : cudaMalloc(&data_, bytes);
  }
  cudaError_t free() {
    if (data_ == nullptr) return cudaSuccess;
    const cudaError_t status = ordered_ ? cudaFreeAsync(data_, stream_) : cudaFree(data_);
    data_ = nullptr;
    return status;
  }
  template <typename T>
  T* as() const {
    return static_cast<T*>(data_);
  }

 private:
  cudaStream_t stream_ = nullptr;
  bool ordered_ = false;
  void* data_ = nullptr;
};

// CTAs of `kernel` resident on one SM of the current device, launched with `threads` threads and
// `smem_bytes` of dynamic shared memory (the attribute its launch sets, set here too).
template <typename Kernel>
cudaError_t resident_ctas(Kernel kernel, int threads, std::size_t smem_bytes, int* ctas) {
  ROOFLINE_RETURN_IF_ERROR(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                                static_cast<int>(smem_bytes)));
  return cudaOccupancyMaxActiveBlocksPerMultiprocessor(ctas, kernel, threads, smem_bytes);
}

// Workspace sub-buffers start on 256-byte boundaries so vector and cuBLAS accesses stay aligned.
constexpr std::size_t align_up(std::size_t bytes, std::size_t alignment = 256) {
  return (bytes + alignment - 1) / alignment * alignment;
}

// The current device's compute capability major (9: Hopper, whose launches may be programmatic
// dependents of the one before).
inline cudaError_t current_device_major(int* major) {
  int device = 0;
  const cudaError_t status = cudaGetDevice(&device);
  if (status != cudaSuccess) return status;
  return cudaDeviceGetAttribute(major, cudaDevAttrComputeCapabilityMajor, device);
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

// SplitMix64's finaliser: a well-mixed 64-bit function of `x`, for deterministic pseudo-random
// draws (the inputs' fill, the calibration kernels' operands).
__host__ __device__ __forceinline__ std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// The top 24 bits of `bits` as a float uniform in [-1, 1) (exactly: 24 bits fit its mantissa).
__host__ __device__ __forceinline__ float signed_unit(std::uint64_t bits) {
  return static_cast<float>(bits >> 40) * (2.f / 16777216.f) - 1.f;
}

__device__ __forceinline__ float round_to_half(float x) {
  return __half2float(__float2half_rn(x));
}

// Eight FP16 values held in one 16-byte vector, as loaded by a single uint4 access.
union Half8 {
  uint4 vec;
  __half2 h2[4];
};

// ---- element types ----------------------------------------------------------------------------
// The kernels are templates on their 16-bit element type T: __half (FP16) or __nv_bfloat16
// (BF16). Both are 2 bytes with the same register and shared-memory layouts, so only the
// conversions below and the MMA instruction's type suffix depend on T. The __half versions are
// the functions above, so the FP16 instantiations compile to what they did before templating.
template <typename T>
inline constexpr bool kIsBf16 = std::is_same_v<T, __nv_bfloat16>;

template <typename T>
__device__ __forceinline__ uint32_t pack2(float lo, float hi) {
  static_assert(std::is_same_v<T, __half> || kIsBf16<T>, "FP16 or BF16 elements");
  if constexpr (kIsBf16<T>) {
    __nv_bfloat162 h = __floats2bfloat162_rn(lo, hi);
    return *reinterpret_cast<uint32_t*>(&h);
  } else {
    return pack_half2(lo, hi);
  }
}

// The two values of a packed pair (lo in .x), as FP32.
template <typename T>
__device__ __forceinline__ float2 unpack2(uint32_t word) {
  if constexpr (kIsBf16<T>) {
    return __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(&word));
  } else {
    return __half22float2(*reinterpret_cast<const __half2*>(&word));
  }
}

template <typename T>
__device__ __forceinline__ float to_float(T x) {
  if constexpr (kIsBf16<T>) {
    return __bfloat162float(x);
  } else {
    return __half2float(x);
  }
}

template <typename T>
__device__ __forceinline__ T from_float(float x) {
  if constexpr (kIsBf16<T>) {
    return __float2bfloat16_rn(x);
  } else {
    return __float2half_rn(x);
  }
}

// x rounded to the nearest value of T (and back to FP32).
template <typename T>
__device__ __forceinline__ float round_to(float x) {
  return to_float<T>(from_float<T>(x));
}

// Eight 16-bit values in one 16-byte vector, as loaded by a single uint4 access (any element
// type): Half8 with a BF16 view beside the FP16 one.
union Pack8 {
  uint4 vec;
  uint32_t w[4];
  __half2 h2[4];
  __nv_bfloat162 b2[4];
};

// Pair i of a vector of T, as FP32, through the union member of T's own pair type (the FP16
// code reads `h2[i]` as it did with Half8).
template <typename T>
__device__ __forceinline__ float2 unpack_pair(const Pack8& v, int i) {
  if constexpr (kIsBf16<T>) {
    return __bfloat1622float2(v.b2[i]);
  } else {
    return __half22float2(v.h2[i]);
  }
}

}  // namespace roofline::kernels
