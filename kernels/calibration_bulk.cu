// The bulk-copy DRAM micro-kernel for `calibrate` (see calibration.hpp): DRAM read bandwidth
// as a TMA stream reaches it, beside dram_read's 16-byte loads.
//
// Hopper's bulk copy (cp.async.bulk, the non-tensor TMA) moves a whole chunk from global to
// shared memory in one instruction and signals an mbarrier when its bytes have landed, so a
// single thread per CTA keeps kStages chunks in flight with no register or load-queue limit;
// kernels that stream through TMA (cuDNN's decode attention, flash-v3) reach more of the DRAM
// bandwidth than 16-byte loads do, and a roof both kinds of kernel are judged against must be
// the higher of the two (calibrate keeps the higher rate of the kernels of one target). One CTA
// per SM, thread 0 the only one at work: CTA b copies chunks b, b + grid, b + 2·grid, ... of the
// buffer, `passes` times over, and throws them away (the copy is the work). Built for sm_90a
// with the other Hopper kernels; elsewhere the kernel body is empty and the host side reports
// it unavailable.
#include <cstddef>
#include <cstdint>

#include "kernels/calibration.hpp"
#include "kernels/clock_probe.cuh"
#include "kernels/common.cuh"
#include "kernels/hopper/sm90.cuh"
#include "kernels/hopper/sm90_available.hpp"

namespace roofline::kernels {
namespace {

constexpr int kThreads = 32;                  // one warp; its lane 0 issues every copy
constexpr int kStages = 4;                    // chunks in flight per SM
constexpr std::uint32_t kChunkBytes = 32768;  // one bulk copy: 128 KB in flight per SM
constexpr int kSharedBytes = kStages * static_cast<int>(kChunkBytes);

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
#define ROOFLINE_HAS_BULK_COPY 1
#endif

__global__ void __launch_bounds__(kThreads, 1)
    bulk_read_kernel(const unsigned char* src, std::size_t chunks, long long passes,
                     unsigned long long* clock) {
#ifdef ROOFLINE_HAS_BULK_COPY
  extern __shared__ __align__(128) unsigned char stage[];
  __shared__ std::uint64_t full[kStages];
  if (threadIdx.x != 0) return;
  for (int s = 0; s < kStages; ++s) sm90::mbarrier_init(&full[s], 1);
  sm90::fence_barrier_init();
  ClockProbe probe;
  probe.start();
  // This CTA's copies: items blockIdx.x, blockIdx.x + grid, ... of chunks × passes, item i being
  // chunk i % chunks. Copy k goes to stage k % kStages once that stage's copy k - kStages has
  // landed (the j-th use of a stage completes its barrier's phase j: parity j & 1).
  const std::size_t items = chunks * static_cast<std::size_t>(passes);
  const std::size_t mine =
      blockIdx.x < items ? (items - blockIdx.x + gridDim.x - 1) / gridDim.x : 0;
  const std::uint32_t base = sm90::smem_u32(stage);
  for (std::size_t k = 0; k < mine + kStages; ++k) {
    const int s = static_cast<int>(k % kStages);
    if (k >= kStages)
      sm90::mbarrier_wait(&full[s], static_cast<std::uint32_t>((k / kStages - 1) & 1));
    if (k < mine) {
      const std::size_t chunk = (blockIdx.x + k * gridDim.x) % chunks;
      sm90::mbarrier_arrive_expect_tx(&full[s], kChunkBytes);
      sm90::bulk_load(base + s * kChunkBytes, src + chunk * kChunkBytes, kChunkBytes,
                      sm90::smem_u32(&full[s]));
    }
  }
  probe.stop(clock);
#else
  (void)src;
  (void)chunks;
  (void)passes;
  (void)clock;
#endif
}

}  // namespace

int bulk_read_micro_kernel_threads() {
  return kThreads;
}

cudaError_t bulk_read_micro_kernel_blocks_per_sm(int* blocks) {
  ROOFLINE_RETURN_IF_ERROR(sm90a_blocks_per_sm(bulk_read_kernel, kThreads, kSharedBytes, blocks));
  *blocks = *blocks > 0 ? 1 : 0;  // one CTA per SM: its stages are the SM's bytes in flight
  return cudaSuccess;
}

double bulk_read_micro_kernel_bytes(const MicroKernelArgs& args) {
  return static_cast<double>(args.bytes / kChunkBytes) * kChunkBytes *
         static_cast<double>(args.iterations);
}

cudaError_t launch_bulk_read_micro_kernel(const MicroKernelArgs& args, cudaStream_t stream) {
  const std::size_t chunks = args.bytes / kChunkBytes;
  if (args.src == nullptr || chunks == 0) return cudaErrorInvalidValue;
  ROOFLINE_RETURN_IF_ERROR(sm90a_prepare_launch(bulk_read_kernel, kSharedBytes));
  bulk_read_kernel<<<args.blocks, kThreads, kSharedBytes, stream>>>(
      static_cast<const unsigned char*>(args.src), chunks, args.iterations, args.clock);
  ROOFLINE_RETURN_IF_LAUNCH_FAILED();
  return cudaSuccess;
}

}  // namespace roofline::kernels
