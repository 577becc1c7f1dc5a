// Hand-written PTX wrappers for the Hopper (sm_90a) features the flash-v3 kernels use:
// warpgroup MMA (wgmma), shared-memory matrix descriptors with the 128-byte swizzle, the bulk
// tensor copy engine's stores and reductions, stmatrix, named barriers and register
// re-balancing between warpgroups (setmaxnreg); with tma.cuh's loads, mbarriers and fences,
// which it includes.
//
// Only translation units compiled for sm_90a may include this header (kernels/CMakeLists.txt
// builds them in their own target): wgmma and setmaxnreg do not exist elsewhere.
//
// Vocabulary (PTX ISA, "Asynchronous Warpgroup Level Matrix Multiply-Accumulate"):
//   - a warpgroup is 4 consecutive warps whose first warp index is a multiple of 4; every wgmma
//     is issued by all 128 threads of one warpgroup together.
//   - wgmma.mma_async computes D(64 x N) (+)= A(64 x 16) * B(16 x N). A comes from shared memory
//     (a descriptor) or registers, B from shared memory. It runs asynchronously: issue a batch,
//     close it with commit_group, and wait_group(k) until at most k batches are still in flight.
//     Registers of D (and of A) must not be touched between issue and wait, and wgmma_fence()
//     must separate ordinary register writes of D or A from the next issue.
//   - the D fragment of thread t = 32·w + l (warp w, lane l) is the mma.sync m16n8 C fragment of
//     rows 16·w .. 16·w + 15: d[4j + {0,1}] at (16w + l/4, 8j + 2(l%4) + {0,1}), d[4j + {2,3}] on
//     row + 8. The register A fragment is likewise the m16n8k16 A fragment of the warp's 16 rows.
#pragma once

#include <cstdint>

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "kernels/hopper/tma.cuh"

namespace roofline::kernels::sm90 {

// ---- shared-memory matrix descriptors -----------------------------------------------------
// Of the 128-byte-swizzled tiles tma.cuh describes.
//
// Descriptor bits (64-bit): [0,14) start address >> 4; [16,30) leading-dimension byte offset
// >> 4; [32,46) stride-dimension byte offset >> 4; [49,52) base offset (0: atoms 1024-aligned);
// [62,64) swizzle mode (1 = 128-byte).
//
// K-major operand (the 16-element K extent of one wgmma lies along the contiguous 128-byte
// rows, e.g. Q or K in [row][d] for S = Q·Kᵀ): the stride byte offset is the distance between
// 8-row groups, 1024; the leading byte offset is unused with swizzling (set to 1 as the ISA
// suggests). The k-th 16-element slice of a 64-column block starts 32·k bytes into it; the
// hardware applies the swizzle to the final address.
// MN-major operand (the N extent lies along the rows, e.g. V in [key][d] as B of O += P·V):
// the stride byte offset is the distance between 8-row groups along K (1024 for 128-byte
// rows), the leading byte offset the distance between 64-column blocks along N; the k-th
// 16-row slice starts 16·128·k bytes in.
constexpr uint64_t kSwizzle128B = 1;

__device__ __forceinline__ uint64_t make_smem_desc(uint32_t smem_address, uint32_t leading_bytes,
                                                   uint32_t stride_bytes) {
  uint64_t desc = 0;
  desc |= static_cast<uint64_t>((smem_address & 0x3FFFF) >> 4);
  desc |= static_cast<uint64_t>((leading_bytes >> 4) & 0x3FFF) << 16;
  desc |= static_cast<uint64_t>((stride_bytes >> 4) & 0x3FFF) << 32;
  desc |= kSwizzle128B << 62;
  return desc;
}

// K-major tile of 128-byte swizzled rows (see above).
__device__ __forceinline__ uint64_t kmajor_desc(uint32_t smem_address) {
  return make_smem_desc(smem_address, 16, 1024);
}

// MN-major tile of 128-byte swizzled rows whose 64-column blocks are `block_bytes` apart.
__device__ __forceinline__ uint64_t mnmajor_desc(uint32_t smem_address, uint32_t block_bytes) {
  return make_smem_desc(smem_address, block_bytes, 1024);
}

// ---- wgmma ---------------------------------------------------------------------------------

// Orders earlier register writes of accumulators and A fragments before the next wgmma.
__device__ __forceinline__ void wgmma_fence() {
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
}

// Closes the batch of wgmma issued since the last commit.
__device__ __forceinline__ void wgmma_commit() {
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}

// Waits until at most kPending committed batches of this warpgroup are still running.
template <int kPending>
__device__ __forceinline__ void wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(kPending) : "memory");
}

// Keeps the compiler from moving reads or writes of an accumulator across an asynchronous
// wgmma (the registers change behind its back until wgmma_wait returns).
template <int kCount>
__device__ __forceinline__ void fence_registers(float (&d)[kCount]) {
#pragma unroll
  for (int i = 0; i < kCount; ++i) asm volatile("" : "+f"(d[i])::"memory");
}
template <int kCount>
__device__ __forceinline__ void fence_registers(uint32_t (&d)[kCount]) {
#pragma unroll
  for (int i = 0; i < kCount; ++i) asm volatile("" : "+r"(d[i])::"memory");
}
template <int kCount>
__device__ __forceinline__ void fence_registers(uint64_t (&d)[kCount]) {
#pragma unroll
  for (int i = 0; i < kCount; ++i) asm volatile("" : "+l"(d[i])::"memory");
}

// wgmma.mma_async m64nNk16, FP16 or BF16 inputs (T = __half or __nv_bfloat16), FP32
// accumulators d[N/2] (layout above).
//   ss<kTransA, kTransB>(d, desc_a, desc_b, accumulate): A and B from shared memory;
//     kTransA/kTransB = 0 for K-major operands, 1 for MN-major.
//   rs<kTransB>(d, a, desc_b, accumulate): A from registers (4 x half2 per thread).
//   accumulate = false overwrites D (D = A·B), true adds (D += A·B).
// No default element type: every call names its own, so a BF16 kernel cannot run FP16 MMAs.
template <int kN, typename T>
struct Wgmma;

#define ROOFLINE_WGMMA_ELEMENT __half
#define ROOFLINE_WGMMA_PTX_TYPE "f16"
#include "kernels/hopper/sm90_wgmma.cuh"
#undef ROOFLINE_WGMMA_ELEMENT
#undef ROOFLINE_WGMMA_PTX_TYPE
#define ROOFLINE_WGMMA_ELEMENT __nv_bfloat16
#define ROOFLINE_WGMMA_PTX_TYPE "bf16"
#include "kernels/hopper/sm90_wgmma.cuh"
#undef ROOFLINE_WGMMA_ELEMENT
#undef ROOFLINE_WGMMA_PTX_TYPE

// ---- TMA stores and reductions (cp.async.bulk) --------------------------------------------

// Stores the shared-memory box to (c0, c1, c2); rows past the bounds are not written. Writers
// of the shared tile must run fence_proxy_async() and synchronise before one thread calls this.
__device__ __forceinline__ void tma_store_3d(const CUtensorMap* map, const void* smem_src, int c0,
                                             int c1, int c2) {
  asm volatile(
      "cp.async.bulk.tensor.3d.global.shared::cta.tile.bulk_group [%0, {%2, %3, %4}], [%1];\n" ::
          "l"(reinterpret_cast<uint64_t>(map)),
      "r"(smem_u32(smem_src)), "r"(c0), "r"(c1), "r"(c2)
      : "memory");
}

// Adds the shared-memory box (FP32) element-wise into global memory at (c0, c1, c2).
__device__ __forceinline__ void tma_reduce_add_3d(const CUtensorMap* map, const void* smem_src,
                                                  int c0, int c1, int c2) {
  asm volatile(
      "cp.reduce.async.bulk.tensor.3d.global.shared::cta.add.tile.bulk_group"
      " [%0, {%2, %3, %4}], [%1];\n" ::"l"(reinterpret_cast<uint64_t>(map)),
      "r"(smem_u32(smem_src)), "r"(c0), "r"(c1), "r"(c2)
      : "memory");
}

// Adds `bytes` (a multiple of 16) of FP32 values from shared memory element-wise into global
// memory at `dst` (16-byte aligned): the non-tensor bulk reduction, for buffers kept in an
// order of the kernel's own (no tensor map). Completes in the bulk group like tma_store_3d.
__device__ __forceinline__ void bulk_reduce_add_f32(float* dst, uint32_t smem_src, uint32_t bytes) {
  asm volatile(
      "cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f32 [%0], [%1], %2;\n" ::"l"(dst),
      "r"(smem_src), "r"(bytes)
      : "memory");
}

// Closes the group of bulk stores issued by this thread since the last commit.
__device__ __forceinline__ void tma_store_commit() {
  asm volatile("cp.async.bulk.commit_group;\n" ::: "memory");
}

// Waits until the shared-memory sources of all committed bulk stores have been read.
__device__ __forceinline__ void tma_store_wait_read() {
  asm volatile("cp.async.bulk.wait_group.read 0;\n" ::: "memory");
}

// Waits until all committed bulk stores of this thread have completed.
__device__ __forceinline__ void tma_store_wait_all() {
  asm volatile("cp.async.bulk.wait_group 0;\n" ::: "memory");
}

// ---- stmatrix --------------------------------------------------------------------------------

// Stores four 8x8 16-bit matrices transposed: register r of every thread holds its element pair
// of matrix r in the mma fragment layout (row lane / 4, columns 2·(lane % 4), +1), and lane
// 8r + x gives the shared address of the stored row x of matrix r, which is the fragment's
// column x (eight 16-bit values, 16 contiguous bytes).
__device__ __forceinline__ void stmatrix_x4_trans(uint32_t smem_address, const uint32_t (&r)[4]) {
  asm volatile("stmatrix.sync.aligned.m8n8.x4.trans.shared.b16 [%0], {%1, %2, %3, %4};\n" ::"r"(
                   smem_address),
               "r"(r[0]), "r"(r[1]), "r"(r[2]), "r"(r[3])
               : "memory");
}

// ---- named barriers, registers ----------------------------------------------------------------

// Named barrier `id` (1..15; 0 is __syncthreads) over `threads` threads (a multiple of 32).
__device__ __forceinline__ void named_barrier_sync(int id, int threads) {
  asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}
__device__ __forceinline__ void named_barrier_arrive(int id, int threads) {
  asm volatile("bar.arrive %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}

// Per-thread register budget of the calling warpgroup: raise it for the MMA warpgroups, lower
// it for the producer, so that the block's total stays within the register file. Every warp of
// the warpgroup must execute it; it takes effect only when the kernel has a register cap at
// entry (__launch_bounds__(threads, 1)). kRegisters: a multiple of 8 in [24, 256].
template <int kRegisters>
__device__ __forceinline__ void setmaxnreg_increase() {
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(kRegisters));
}
template <int kRegisters>
__device__ __forceinline__ void setmaxnreg_decrease() {
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(kRegisters));
}

// Index of the calling thread's warpgroup, uniform across it (the compiler can keep it in a
// uniform register).
__device__ __forceinline__ int warpgroup_index() {
  return __shfl_sync(0xffffffffu, static_cast<int>(threadIdx.x) / 128, 0);
}

// True in exactly one lane of the calling warp.
__device__ __forceinline__ bool elect_one() {
  uint32_t elected = 0;
  asm volatile(
      "{\n.reg .pred p;\n.reg .b32 lane;\nelect.sync lane|p, 0xffffffff;\nselp.u32 %0, 1, 0, "
      "p;\n}\n"
      : "=r"(elected));
  return elected != 0;
}

}  // namespace roofline::kernels::sm90
