// Micro-kernels that measure the ceilings of the GPU present (`cuflash-roofline calibrate`), in
// the manner of the Empirical Roofline Toolkit: each one saturates a single roof (a memory
// level or a compute pipe) with work whose amount is known exactly, so work ÷ time is the
// achievable rate. Plain host header: no CUDA device types leak out.
//
// Every kernel runs one wave (blocks = SMs × resident blocks per SM) and does the same work
// in every thread. Thread 0 of block 0 reads the SM cycle counter and the global timer at its
// start and end, so the runner knows the SM clock the rate was reached at.
#pragma once

#include <cstddef>

#include <cuda_runtime_api.h>

namespace roofline::kernels {

enum class MicroKernel {
  kDramRead,      // 16-byte loads (L1 bypassed) over a buffer many times the L2: DRAM read
  kDramReadBulk,  // bulk copies (TMA, cp.async.bulk) of 32 KB chunks of that buffer (sm_90a)
  kDramCopy,      // 16-byte loads and stores between two such buffers: DRAM read + write
  kDramWrite,     // 16-byte stores alone over such a buffer: DRAM write
  kL2Read,        // 16-byte loads (L1 bypassed) over a buffer a quarter of the L2, repeated
  kL2Reduce,      // FP32 reductions (red.global.add; float2 on sm_90) over such a buffer
  kSharedRead,    // conflict-free 16-byte shared-memory loads: the L1/shared roof
  kFp32Fma,       // independent FFMA chains: 2 FLOP per lane per instruction
  kFp16Fma,       // independent HFMA2 chains: 4 FLOP per lane per instruction
  kMmaSync,       // independent mma.sync.m16n8k16 f32.f16.f16.f32 chains: 4096 FLOP per warp op
  kMmaSyncBf16,   // the same chains in f32.bf16.bf16.f32
  kWgmma,         // wgmma.mma_async m64n256k16 f32.f16.f16, operands in shared memory (sm_90a)
  kExp2,          // independent ex2.approx.ftz.f32 chains (MUFU.EX2): exp2 results, not FLOPs
  kIntAlu,        // independent xor-then-add integer chains: thread instructions, not FLOPs
};

// Read kernels walk their working set in chunks of 2^12 16-byte elements (64 KiB).
inline constexpr int kMicroKernelChunkShift = 12;

struct MicroKernelArgs {
  int blocks = 0;             // one wave: micro_kernel_blocks_per_sm × SMs
  long long iterations = 0;   // passes over the buffer (memory kernels) or loop trips
  const void* src = nullptr;  // memory kernels: 16-byte aligned, `bytes` a multiple of 16
  void* dst = nullptr;        // kDramCopy, kDramWrite and kL2Reduce (its working set) only
  std::size_t bytes = 0;
  // kDramRead, kL2Read, kL2Reduce: chunk c of the working set starts at element c << chunk_shift of
  // `src` (kMicroKernelChunkShift: contiguous; larger spreads a small working set over many
  // pages of a large buffer, so that it maps onto all L2 slices and memory channels evenly).
  int chunk_shift = kMicroKernelChunkShift;
  // Device memory for 2 values: SM cycles and nanoseconds (global timer) of block 0's thread 0.
  unsigned long long* clock = nullptr;
  // Device memory for 1 value, written only when the result is impossible (keeps the work).
  unsigned int* sink = nullptr;
};

// Threads per block of each kernel.
int micro_kernel_threads(MicroKernel kernel);

// Resident blocks per SM (occupancy API); 0 when the kernel has no code for this device
// (kWgmma below compute capability 9.0). Returns the API's error, if any.
cudaError_t micro_kernel_blocks_per_sm(MicroKernel kernel, int* blocks);

// Bytes moved (memory kernels), FLOPs executed (compute kernels), exp2 results (kExp2) or
// integer thread instructions (kIntAlu) by one launch.
double micro_kernel_work(MicroKernel kernel, const MicroKernelArgs& args);

cudaError_t launch_micro_kernel(MicroKernel kernel, const MicroKernelArgs& args,
                                cudaStream_t stream);

// kWgmma lives in its own translation unit built for sm_90a (calibration_wgmma.cu).
cudaError_t launch_wgmma_micro_kernel(const MicroKernelArgs& args, cudaStream_t stream);
cudaError_t wgmma_micro_kernel_blocks_per_sm(int* blocks);
// Warpgroups per block and wgmma instructions per loop trip, for the FLOP count.
int wgmma_micro_kernel_threads();
double wgmma_micro_kernel_flops(const MicroKernelArgs& args);

// kDramReadBulk likewise (calibration_bulk.cu): one CTA per SM; its bytes are whole chunks.
cudaError_t launch_bulk_read_micro_kernel(const MicroKernelArgs& args, cudaStream_t stream);
cudaError_t bulk_read_micro_kernel_blocks_per_sm(int* blocks);
int bulk_read_micro_kernel_threads();
double bulk_read_micro_kernel_bytes(const MicroKernelArgs& args);

}  // namespace roofline::kernels
