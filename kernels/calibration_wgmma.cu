// The wgmma micro-kernel for `calibrate` (see calibration.hpp): the Hopper tensor-core peak.
//
// wgmma.mma_async (a warpgroup of 128 threads issues one 64×256×16 FP16 MMA with FP32
// accumulators, both operands read from shared memory through matrix descriptors) exists only
// in the sm_90a feature set, so this file is built for sm_90a alone (its own CMake target); in
// any other build the kernel body is empty and the host side reports it unavailable.
// Each warpgroup keeps one 64×256 accumulator (128 registers per thread) and issues
// kWgmmaPerTrip MMAs into it per commit group, then waits: the operands stay in shared memory,
// so the tensor pipe, not memory, sets the rate. They hold FP16 values uniform in [-1, 1) (the
// bundled kernels' inputs), in two tile pairs that consecutive MMAs alternate between, so the
// pipe's inputs change from one MMA to the next as a real kernel's do (a constant operand draws
// less power: `calibrate --energy` would price the FLOP too low).
#include <cstdint>

#include "kernels/calibration.hpp"
#include "kernels/clock_probe.cuh"
#include "kernels/common.cuh"
#include "kernels/hopper/sm90.cuh"
#include "kernels/hopper/sm90_available.hpp"

namespace roofline::kernels {
namespace {

constexpr int kWarpgroups = 2;  // per block: one block per SM, two warpgroups in flight
constexpr int kThreads = 128 * kWarpgroups;
constexpr int kWgmmaPerTrip = 16;
constexpr double kWgmmaFlops = 2.0 * 64 * 256 * 16;
// A: 64×16 FP16 (2 KiB), B: 256×16 FP16 (8 KiB), per warpgroup.
constexpr int kABytes = 64 * 16 * 2;
constexpr int kBBytes = 256 * 16 * 2;
constexpr int kTilePairs = 2;  // per warpgroup; consecutive MMAs alternate between them
constexpr int kPairBytes = kABytes + kBBytes;
constexpr int kSharedBytes = kWarpgroups * kTilePairs * kPairBytes;

#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define ROOFLINE_HAS_WGMMA 1
#endif

#ifdef ROOFLINE_HAS_WGMMA
// Shared-memory matrix descriptor, no swizzle: start address, leading-dimension byte offset
// (between core matrices along K) and stride byte offset (between 8-row groups), all in units
// of 16 bytes. A core matrix is 8 rows × 16 bytes, stored contiguously (128 bytes).
__device__ __forceinline__ std::uint64_t matrix_descriptor(std::uint32_t address) {
  constexpr std::uint64_t kLeadingBytes = 128;  // the second 8-element K half of each row group
  constexpr std::uint64_t kStrideBytes = 256;   // the next 8-row group
  return (static_cast<std::uint64_t>(address & 0x3FFFF) >> 4) | ((kLeadingBytes >> 4) << 16) |
         ((kStrideBytes >> 4) << 32);
}

#endif

__global__ void __launch_bounds__(kThreads, 1)
    wgmma_kernel(long long trips, unsigned long long* clock, unsigned int* sink) {
#ifdef ROOFLINE_HAS_WGMMA
  extern __shared__ __align__(128) unsigned char shared[];
  for (int i = threadIdx.x; i < kSharedBytes / 2; i += blockDim.x)
    reinterpret_cast<__half*>(shared)[i] = __float2half_rn(signed_unit(splitmix64(i)));
  // Generic-proxy stores must be visible to the async proxy that wgmma reads through.
  sm90::fence_proxy_async();
  __syncthreads();

  ClockProbe probe;
  probe.start();
  const int group = threadIdx.x / 128;
  const std::uint32_t base = static_cast<std::uint32_t>(__cvta_generic_to_shared(shared)) +
                             group * kTilePairs * kPairBytes;
  std::uint64_t a[kTilePairs], b[kTilePairs];
#pragma unroll
  for (int p = 0; p < kTilePairs; ++p) {
    a[p] = matrix_descriptor(base + p * kPairBytes);
    b[p] = matrix_descriptor(base + p * kPairBytes + kABytes);
  }
  float d[128];
#pragma unroll
  for (int i = 0; i < 128; ++i) d[i] = 0.f;
  for (long long trip = 0; trip < trips; ++trip) {
    sm90::wgmma_fence();
#pragma unroll
    for (int k = 0; k < kWgmmaPerTrip; ++k)
      sm90::Wgmma<256, __half>::ss<0, 0>(d, a[k % kTilePairs], b[k % kTilePairs], true);
    sm90::wgmma_commit();
    sm90::wgmma_wait<0>();
  }
  probe.stop(clock);
  float sum = 0;
#pragma unroll
  for (int i = 0; i < 128; ++i) sum += d[i];
  if (sum == -1.2345f && sink != nullptr) *sink = __float_as_uint(sum);
#else
  (void)trips;
  (void)clock;
  (void)sink;
#endif
}

}  // namespace

int wgmma_micro_kernel_threads() {
  return kThreads;
}

cudaError_t wgmma_micro_kernel_blocks_per_sm(int* blocks) {
  return sm90a_blocks_per_sm(wgmma_kernel, kThreads, kSharedBytes, blocks);
}

double wgmma_micro_kernel_flops(const MicroKernelArgs& args) {
  return static_cast<double>(args.blocks) * kWarpgroups * static_cast<double>(args.iterations) *
         kWgmmaPerTrip * kWgmmaFlops;
}

cudaError_t launch_wgmma_micro_kernel(const MicroKernelArgs& args, cudaStream_t stream) {
  ROOFLINE_RETURN_IF_ERROR(sm90a_prepare_launch(wgmma_kernel, kSharedBytes));
  wgmma_kernel<<<args.blocks, kThreads, kSharedBytes, stream>>>(args.iterations, args.clock,
                                                                args.sink);
  ROOFLINE_RETURN_IF_LAUNCH_FAILED();
  return cudaSuccess;
}

}  // namespace roofline::kernels
