// flash-v3 backward's dQ path, run by each consumer warpgroup of the main kernel once per query
// stage, after both have written their dS^T rows: the dQ GEMM over all 128 keys of the CTA, its
// staging as FP32 in shared memory and the bulk reduction that adds it to the FP32 accumulator,
// one function per DqSplit. Included by flash_v3_bwd.cu alone (after v3_bwd_prepost.cuh, whose
// dq_accum_column and dq_fragment are the accumulator's layouts); device code for sm_90a only
// (ROOFLINE_V3BWD_DEVICE).
//
// Arguments of both: dq, the GEMM's accumulator (the kernel's: flash_v3_bwd.cu says why); s_k,
// the K tile, and ds_tile, the step's dS buffer (shared-space addresses); staging, this
// warpgroup's staging buffer; wg, the warpgroup (0 or 1; named barrier 3 + wg is its own) and t,
// the thread within it; head. stage_empty is the stage's empty mbarrier, arrived on once the
// stage's Q, dO, LSE and D are no longer read; fence_step_registers() keeps the step's other
// accumulators and fragments from moving across the waits.
#pragma once

#include <cuda.h>

#include <cstddef>
#include <cstdint>

#include "kernels/hopper/sm90.cuh"
#include "kernels/hopper/v3_bwd_config.cuh"
#include "kernels/hopper/v3_bwd_prepost.cuh"

namespace roofline::kernels {
namespace {

#ifdef ROOFLINE_V3BWD_DEVICE

// DqSplit::kTransposed: dQ^T of this warpgroup's 64 columns over the stage's queries (q0 ..),
// staged in fragment order (dq_fragment) and added to p.dq_accum with one non-tensor bulk
// reduction. issue_dk() issues the step's dK GEMM (one commit group).
template <typename T, int kHeadDim, typename IssueDk, typename FenceStep>
__device__ __forceinline__ void v3_bwd_dq_transposed(float (&dq)[v3_bwd_block_q(kHeadDim) / 2],
                                                     const V3BwdParams<T>& p, uint32_t s_k,
                                                     uint32_t ds_tile, unsigned char* staging,
                                                     int wg, int t, int head, int q0,
                                                     uint64_t* stage_empty, const IssueDk& issue_dk,
                                                     const FenceStep& fence_step_registers) {
  using Cfg = V3BwdConfig<kHeadDim>;
  constexpr int kBlockQ = Cfg::kBlockQ;
  // dQ^T (this warpgroup's 64 columns x kBlockQ queries) = K^T dS^T: A = K read M-major
  // (its 64-column block), B = dS read K-major. Issued before the staging buffer is known
  // to be free: it reads only dS and K.
  sm90::wgmma_fence();
#pragma unroll
  for (int kk = 0; kk < kV3BwdBlockKv / 16; ++kk) {
    sm90::Wgmma<kBlockQ, T>::template ss<1, 0>(
        dq, sm90::mnmajor_desc(s_k + wg * Cfg::kKvChunkBytes + kk * 2048, Cfg::kKvChunkBytes),
        sm90::kmajor_desc(ds_tile + (kk % 4) * 32 + (kk / 4) * Cfg::kDsChunkBytes), kk > 0);
  }
  sm90::wgmma_commit();
  // dK after dQ^T, so that dQ^T is staged while dK runs on the tensor cores (with dK first,
  // both warpgroups would stage with no GEMM in flight). Q, dO, LSE and D of the stage are
  // released once dK is done, after the reduction is issued. Issued on causal steps whose
  // dS^T is zero (!active) too: a wgmma behind a branch here, with the accumulator read
  // before the wait for it, makes ptxas serialise every wgmma of the kernel (warning C7514,
  // which toolkit.ptxas_keeps_wgmma_async catches).
  issue_dk();
  sm90::wgmma_wait<1>();
  sm90::fence_registers(dq);
  // The previous reductions must have read the staging buffer.
  if (t == 0) sm90::tma_store_wait_read();
  sm90::named_barrier_sync(3 + wg, 128);
  // Fragment order (dq_fragment): float4 j of thread t (columns r0, r0 + 8 x queries 8j +
  // 2tq, + 1) at 16·(128·j + t): each quarter-warp's stores are 128 contiguous bytes.
#pragma unroll
  for (int j = 0; j < kBlockQ / 8; ++j) {
    *reinterpret_cast<float4*>(staging + 16 * (128 * j + t)) =
        make_float4(dq[4 * j], dq[4 * j + 1], dq[4 * j + 2], dq[4 * j + 3]);
  }
  sm90::fence_proxy_async();
  sm90::named_barrier_sync(3 + wg, 128);
  if (t == 0) {
    const std::size_t block =
        (static_cast<std::size_t>(head) * (p.n_pad / kBlockQ) + q0 / kBlockQ) * 2 + wg;
    sm90::bulk_reduce_add_f32(p.dq_accum + block * Cfg::kDqStageBytes / 4, sm90::smem_u32(staging),
                              Cfg::kDqStageBytes);
    sm90::tma_store_commit();
  }
  sm90::wgmma_wait<0>();
  fence_step_registers();
  sm90::mbarrier_arrive(stage_empty);
}

// DqSplit::kQueryHalves: dQ of this warpgroup's 64 queries (rows dq_row0 ..) x 64 columns,
// staged as swizzled FP32 and added with bulk tensor reductions through map_dq. The step's dK
// GEMM is the commit group before this one. The thread's accumulator rows are r0 and r0 + 8,
// its column pairs 8·j + 2·tq.
template <typename T, int kHeadDim, typename FenceStep>
__device__ __forceinline__ void v3_bwd_dq_query_halves(float (&dq)[32], const CUtensorMap& map_dq,
                                                       uint32_t s_k, uint32_t ds_tile,
                                                       unsigned char* staging, int wg, int t,
                                                       int r0, int tq, int head, int dq_row0,
                                                       uint64_t* stage_empty,
                                                       const FenceStep& fence_step_registers) {
  using Cfg = V3BwdConfig<kHeadDim>;
  // dQ = dS K: A = dS^T read M-major (one wgmma M of 64 queries), B = K read N-major. Issued
  // before the staging buffer is known to be free: it reads only dS^T and K, so it overlaps the
  // wait. Once dK (the group before it) is done, Q, dO, LSE and D of this stage are no longer
  // read.
  sm90::wgmma_fence();
#pragma unroll
  for (int kk = 0; kk < kV3BwdBlockKv / 16; ++kk) {
    sm90::Wgmma<64, T>::template ss<1, 1>(
        dq, sm90::mnmajor_desc(ds_tile + kk * 2048, Cfg::kDsChunkBytes),
        sm90::mnmajor_desc(s_k + kk * 2048, Cfg::kKvChunkBytes), kk > 0);
  }
  sm90::wgmma_commit();
  sm90::wgmma_wait<1>();
  fence_step_registers();
  sm90::mbarrier_arrive(stage_empty);
  // The previous reductions must have read the staging buffer.
  if (t == 0) sm90::tma_store_wait_read();
  sm90::named_barrier_sync(3 + wg, 128);
  sm90::wgmma_wait<0>();
  sm90::fence_registers(dq);
  // Staged as swizzled FP32 and added to the accumulator by one thread with two bulk tensor
  // reductions (32 columns each).
#pragma unroll
  for (int j = 0; j < 8; ++j) {
    // Column c of the block, stored at dq_accum_column(c), is half-column 2c of the shared
    // swizzle helper.
    const int col = dq_accum_column(8 * j + 2 * tq);
    *reinterpret_cast<float2*>(staging + sm90::swizzled_offset(r0, 2 * col, Cfg::kDqBoxBytes)) =
        make_float2(dq[4 * j], dq[4 * j + 1]);
    *reinterpret_cast<float2*>(staging + sm90::swizzled_offset(r0 + 8, 2 * col, Cfg::kDqBoxBytes)) =
        make_float2(dq[4 * j + 2], dq[4 * j + 3]);
  }
  sm90::fence_proxy_async();
  sm90::named_barrier_sync(3 + wg, 128);
  if (t == 0) {
    for (int box = 0; box < 2; ++box) {
      sm90::tma_reduce_add_3d(&map_dq, staging + box * Cfg::kDqBoxBytes, 32 * box, dq_row0, head);
    }
    sm90::tma_store_commit();
  }
}

#endif  // ROOFLINE_V3BWD_DEVICE

}  // namespace
}  // namespace roofline::kernels
