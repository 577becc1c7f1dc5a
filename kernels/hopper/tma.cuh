// Hand-written PTX wrappers for the asynchronous copies of sm_90 (Hopper): shared-memory
// barriers (mbarrier), the bulk tensor copy engine's loads (TMA, cp.async.bulk.tensor, and the
// non-tensor cp.async.bulk) and the proxy fence between ordinary and asynchronous accesses.
//
// Unlike sm90.cuh (wgmma, setmaxnreg: sm_90a only) these exist on every GPU of compute
// capability 9.0 and later, so a kernel built for several architectures may include this header
// and call them in code compiled only where __CUDA_ARCH__ >= 900 (flash_decode.cu does).
#pragma once

#include <cstdint>

#include <cuda.h>  // CUtensorMap (a plain 128-byte struct; nothing links libcuda)

namespace roofline::kernels::sm90 {

// ---- shared-memory addresses --------------------------------------------------------------

__device__ __forceinline__ uint32_t smem_u32(const void* pointer) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(pointer));
}

// ---- 128-byte-swizzled tiles ---------------------------------------------------------------
// Tiles are stored as "swizzle atoms" of 8 rows x 128 bytes (64 halves), 1024 bytes, aligned to
// 1024 bytes. Inside an atom the 16-byte chunk c of row r sits at chunk position c ^ r: the
// pattern TMA writes with CU_TENSOR_MAP_SWIZZLE_128B, so a TMA-loaded tile feeds wgmma as is.
// A tile with rows of 64 halves is a column of atoms ("a 64-column block": row r at byte
// 128·r); wider tiles are several such blocks side by side, each rows·128 bytes long.

// Byte offset of element (row, col) (in halves) of a 128-byte-swizzled tile whose 64-column
// blocks are `block_bytes` apart: for ordinary loads and stores of such a tile.
__host__ __device__ constexpr uint32_t swizzled_offset(int row, int col, uint32_t block_bytes) {
  return static_cast<uint32_t>(col / 64) * block_bytes + static_cast<uint32_t>(row) * 128u +
         ((static_cast<uint32_t>((col % 64) / 8) ^ static_cast<uint32_t>(row % 8)) * 16u) +
         static_cast<uint32_t>(col % 8) * 2u;
}

// ---- mbarrier ------------------------------------------------------------------------------
// A 64-bit shared-memory barrier with a phase bit: a phase completes when `count` arrivals and
// all expected transaction bytes (TMA completions) have been seen; waiters poll the parity of
// the phase they wait for (0 for the first, then alternating).

__device__ __forceinline__ void mbarrier_init(uint64_t* bar, uint32_t count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(smem_u32(bar)), "r"(count)
               : "memory");
}

// Makes initialised barriers visible to the async proxy (TMA) and other threads; follow with a
// block-wide barrier.
__device__ __forceinline__ void fence_barrier_init() {
  asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
}

__device__ __forceinline__ void mbarrier_arrive(uint64_t* bar) {
  asm volatile(
      "{\n.reg .b64 state;\nmbarrier.arrive.shared::cta.b64 state, [%0];\n}\n" ::"r"(smem_u32(bar))
      : "memory");
}

// One arrival that also announces `bytes` of TMA transactions for the current phase. The
// overloads on a 32-bit shared-space address save a register where the pointer would take two.
__device__ __forceinline__ void mbarrier_arrive_expect_tx(uint32_t bar, uint32_t bytes) {
  asm volatile(
      "{\n.reg .b64 state;\nmbarrier.arrive.expect_tx.shared::cta.b64 state, [%0], %1;\n}\n" ::"r"(
          bar),
      "r"(bytes)
      : "memory");
}
__device__ __forceinline__ void mbarrier_arrive_expect_tx(uint64_t* bar, uint32_t bytes) {
  mbarrier_arrive_expect_tx(smem_u32(bar), bytes);
}

// Blocks until the phase with parity `parity` has completed.
__device__ __forceinline__ void mbarrier_wait(uint32_t bar, uint32_t parity) {
  asm volatile(
      "{\n.reg .pred done;\n"
      "wait_%=:\n"
      "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
      "@!done bra wait_%=;\n}\n" ::"r"(bar),
      "r"(parity)
      : "memory");
}
__device__ __forceinline__ void mbarrier_wait(uint64_t* bar, uint32_t parity) {
  mbarrier_wait(smem_u32(bar), parity);
}
// ---- TMA (cp.async.bulk.tensor) -------------------------------------------------------------
// The tensor map lives in kernel parameter space (`const __grid_constant__ CUtensorMap`);
// coordinates are in elements, innermost first. Boxes that reach past the tensor's bounds are
// zero-filled on load and clipped on store; a load always delivers (and counts, for
// expect_tx) the whole box.

// Loads the box at (c0, c1, c2) to the shared address `smem_dst`; completion is signalled on
// the barrier at shared address `bar`.
__device__ __forceinline__ void tma_load_3d(uint32_t smem_dst, const CUtensorMap* map, uint32_t bar,
                                            int c0, int c1, int c2) {
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
      " [%0], [%1, {%3, %4, %5}], [%2];\n" ::"r"(smem_dst),
      "l"(reinterpret_cast<uint64_t>(map)), "r"(bar), "r"(c0), "r"(c1), "r"(c2)
      : "memory");
}

// Loads the box at (c0, c1, c2) into shared memory; completion is signalled on `bar`.
__device__ __forceinline__ void tma_load_3d(void* smem_dst, const CUtensorMap* map, uint64_t* bar,
                                            int c0, int c1, int c2) {
  tma_load_3d(smem_u32(smem_dst), map, smem_u32(bar), c0, c1, c2);
}

// Copies `bytes` (a multiple of 16, at most 2^20 - 1) from global memory at `src` (16-byte
// aligned) to the shared address `smem_dst`: the non-tensor bulk copy, no tensor map; its bytes
// complete the transaction count on the barrier at shared address `bar`, as tma_load_3d's do.
__device__ __forceinline__ void bulk_load(uint32_t smem_dst, const void* src, uint32_t bytes,
                                          uint32_t bar) {
  asm volatile(
      "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n" ::
          "r"(smem_dst),
      "l"(src), "r"(bytes), "r"(bar)
      : "memory");
}

// Hints the tensor map's descriptor into the cache before first use.
__device__ __forceinline__ void tma_prefetch_descriptor(const CUtensorMap* map) {
  asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<uint64_t>(map)) : "memory");
}

// ---- fences ---------------------------------------------------------------------------------

// Orders this thread's ordinary shared-memory writes before later async-proxy accesses (a TMA
// store or a wgmma reading the same bytes). Each writing thread runs it, then synchronise.
__device__ __forceinline__ void fence_proxy_async() {
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}

}  // namespace roofline::kernels::sm90
