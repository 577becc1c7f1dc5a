// flash-v3 backward's consumer warpgroups (warpgroups 1 and 2 of the main kernel, 64 keys each):
// per query stage the softmax gradient (S^T and dP^T GEMMs, P^T, dV += P^T dO, dS^T), dS^T to
// shared memory for the dQ path (v3_bwd_dq.cuh) and the dK GEMM; per work item the epilogue
// that stores dK and dV. Included by flash_v3_bwd.cu alone (after v3_bwd_config.cuh); device
// code for sm_90a only (ROOFLINE_V3BWD_DEVICE).
//
// The thread's place in its warpgroup (sm90.cuh's accumulator layout): accumulator rows r0 and
// r0 + 8 of a 64-row wgmma tile, column pairs 8·j + 2·tq.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/common.cuh"
#include "kernels/hopper/sm90.cuh"
#include "kernels/hopper/v3_bwd_config.cuh"
#include "kernels/mma.cuh"

namespace roofline::kernels {
namespace {

#ifdef ROOFLINE_V3BWD_DEVICE

// The softmax gradient of one query stage (queries q0 ..) for a warpgroup whose keys (wg_key0 ..,
// of n) are not all masked: P^T into p_frag and dS^T into ds_frag (the A fragments of the dV and
// dK GEMMs, 16-bit), with dV += P^T dO issued (its commit group still in flight on return). s
// and dp are the S^T and dP^T accumulators (the kernel's: flash_v3_bwd.cu says why); a_k and a_v
// this warpgroup's K and V rows, q_tile and do_tile the stage's Q and dO (shared-space
// addresses); the stage's LSE and D slices are read from smem. needs_mask: the tile crosses the
// causal diagonal or the key tail.
template <typename T, int kHeadDim, bool kCausal>
__device__ __forceinline__ void v3_bwd_softmax_grad(
    float (&s)[v3_bwd_block_q(kHeadDim) / 2], float (&dp)[v3_bwd_block_q(kHeadDim) / 2],
    float (&dv)[kHeadDim / 2], uint32_t (&p_frag)[v3_bwd_block_q(kHeadDim) / 16][4],
    uint32_t (&ds_frag)[v3_bwd_block_q(kHeadDim) / 16][4], const V3BwdParams<T>& p,
    const unsigned char* smem, uint32_t a_k, uint32_t a_v, uint32_t q_tile, uint32_t do_tile,
    int stage, int q0, int wg_key0, int n, bool needs_mask, int r0, int tq) {
  using Cfg = V3BwdConfig<kHeadDim>;
  using sm90::Wgmma;
  constexpr int kBlockQ = Cfg::kBlockQ;
  // S^T = K_w Q^T and dP^T = V_w dO^T (64 keys x kBlockQ queries each), two commit groups
  // so that P is computed while dP is still on the tensor cores. (The next step's S^T is
  // not issued before this step's dQ staging: slower: the backward's tuning record in
  // docs/results.)
  sm90::wgmma_fence();
#pragma unroll
  for (int kk = 0; kk < kHeadDim / 16; ++kk) {
    const uint32_t k_off = (kk % 4) * 32 + (kk / 4) * Cfg::kKvChunkBytes;
    const uint32_t q_off = (kk % 4) * 32 + (kk / 4) * Cfg::kQChunkBytes;
    Wgmma<kBlockQ, T>::template ss<0, 0>(s, sm90::kmajor_desc(a_k + k_off),
                                         sm90::kmajor_desc(q_tile + q_off), kk > 0);
  }
  sm90::wgmma_commit();
#pragma unroll
  for (int kk = 0; kk < kHeadDim / 16; ++kk) {
    const uint32_t k_off = (kk % 4) * 32 + (kk / 4) * Cfg::kKvChunkBytes;
    const uint32_t q_off = (kk % 4) * 32 + (kk / 4) * Cfg::kQChunkBytes;
    Wgmma<kBlockQ, T>::template ss<0, 0>(dp, sm90::kmajor_desc(a_v + k_off),
                                         sm90::kmajor_desc(do_tile + q_off), kk > 0);
  }
  sm90::wgmma_commit();

  // P^T from the saved LSE. Column c of the tile is query q0 + c.
  const float* lse =
      reinterpret_cast<const float*>(smem + Cfg::kOffLse) + stage * (Cfg::kVecStride / 4);
  const float* drow =
      reinterpret_cast<const float*>(smem + Cfg::kOffDrow) + stage * (Cfg::kVecStride / 4);
  // The LSE and D slices are read after the waits (before them: slower; the backward's tuning
  // record in docs/results).
  sm90::wgmma_wait<1>();
  sm90::fence_registers(s);
#pragma unroll
  for (int j = 0; j < kBlockQ / 8; ++j) {
    const float2 l = *reinterpret_cast<const float2*>(lse + 8 * j + 2 * tq);
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      s[4 * j + e] = ptx::exp2_approx(fmaf(s[4 * j + e], p.scale_log2, (e % 2) ? -l.y : -l.x));
    }
  }
  // The mask in a loop of its own, so that only the tiles that cross the diagonal or the key
  // tail execute it (inside the loop above, ptxas predicated it onto every tile: ncu counted
  // 1.7x the instructions per tile of the full mask at d = 64).
  if (needs_mask) {
#pragma unroll
    for (int j = 0; j < kBlockQ / 8; ++j) {
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int key = wg_key0 + r0 + 8 * (e / 2);
        const int query = q0 + 8 * j + 2 * tq + e % 2;
        if (key >= n || (kCausal && key > query)) s[4 * j + e] = 0.f;
      }
    }
  }
  // Accumulator -> A fragment: the n8 blocks 2kk and 2kk+1 form the k16 slice kk.
#pragma unroll
  for (int kk = 0; kk < kBlockQ / 16; ++kk) {
#pragma unroll
    for (int r = 0; r < 4; ++r) {
      p_frag[kk][r] = pack2<T>(s[8 * kk + 2 * r], s[8 * kk + 2 * r + 1]);
    }
  }
  // dV += P^T dO; dO is [query][d]: an N-major B operand.
  sm90::wgmma_fence();
#pragma unroll
  for (int kk = 0; kk < kBlockQ / 16; ++kk) {
    Wgmma<kHeadDim, T>::template rs<1>(
        dv, p_frag[kk], sm90::mnmajor_desc(do_tile + kk * 2048, Cfg::kQChunkBytes), true);
  }
  sm90::wgmma_commit();

  // dS^T = P^T (dP^T - D): dP^T's group completes before dV's (groups retire in order).
  // P is taken from its 16-bit fragment (as dV uses it) so that the FP32 copy is dead here:
  // at d = 128 both would not fit in 240 registers beside dK and dV.
  sm90::wgmma_wait<1>();
  sm90::fence_registers(dp);
#pragma unroll
  for (int kk = 0; kk < kBlockQ / 16; ++kk) {
#pragma unroll
    for (int r = 0; r < 4; ++r) {
      // Elements 8kk + 2r, +1 of the accumulator: query columns 16kk + 8(r/2) + 2tq, +1.
      const float2 prob = unpack2<T>(p_frag[kk][r]);
      const float2 dr = *reinterpret_cast<const float2*>(drow + 16 * kk + 8 * (r / 2) + 2 * tq);
      ds_frag[kk][r] =
          pack2<T>(prob.x * (dp[8 * kk + 2 * r] - dr.x), prob.y * (dp[8 * kk + 2 * r + 1] - dr.y));
    }
  }
}

// dS^T of this warpgroup (wg; its warp and lane) into the step's dS buffer ds_buf (two buffers:
// Cfg::kDsBuffers says why), in the layout of the dQ GEMM's operand (DqSplit), then fenced for
// the async proxy. ds_frag[kk][r] holds row r0 + 8·(r % 2), queries 16·kk + 8·(r / 2) + 2·tq
// and + 1.
template <int kHeadDim>
__device__ __forceinline__ void v3_bwd_store_ds(
    const uint32_t (&ds_frag)[v3_bwd_block_q(kHeadDim) / 16][4], unsigned char* ds_buf, int wg,
    int warp, int lane, int r0, int tq) {
  using Cfg = V3BwdConfig<kHeadDim>;
  constexpr int kBlockQ = Cfg::kBlockQ;
  if constexpr (Cfg::kTransposed) {
    // As dS, [query][key]: each k16 slice is four 8 x 8 blocks (keys +8 by r % 2, queries +8
    // by r / 2) stored transposed by one stmatrix; lane 8r + x addresses query row x of
    // block r, whose 8 keys are one 16-byte swizzle chunk (8 rows of a block: 8 chunks of one
    // column, every bank once).
    const int block = lane / 8;
    const uint32_t ds_row =
        sm90::smem_u32(ds_buf) + sm90::swizzled_offset(8 * (block / 2) + lane % 8,
                                                       64 * wg + 16 * warp + 8 * (block % 2),
                                                       Cfg::kDsChunkBytes);
#pragma unroll
    for (int kk = 0; kk < kBlockQ / 16; ++kk) {
      sm90::stmatrix_x4_trans(ds_row + kk * 16 * kSwizzleRowBytes, ds_frag[kk]);
    }
  } else {
    // As dS^T, [key][query] 128-byte swizzled rows in 64-query chunks.
#pragma unroll
    for (int kk = 0; kk < kBlockQ / 16; ++kk) {
#pragma unroll
      for (int r = 0; r < 4; ++r) {
        const int row = 64 * wg + r0 + 8 * (r % 2);
        const int col = 16 * kk + 8 * (r / 2) + 2 * tq;
        *reinterpret_cast<uint32_t*>(ds_buf + sm90::swizzled_offset(row, col, Cfg::kDsChunkBytes)) =
            ds_frag[kk][r];
      }
    }
  }
  sm90::fence_proxy_async();
}

// dK += dS^T Q, issued as one commit group; Q (q_tile) is [query][d]: an N-major B operand.
template <typename T, int kHeadDim>
__device__ __forceinline__ void v3_bwd_issue_dk(
    float (&dk)[kHeadDim / 2], uint32_t (&ds_frag)[v3_bwd_block_q(kHeadDim) / 16][4],
    uint32_t q_tile) {
  using Cfg = V3BwdConfig<kHeadDim>;
  sm90::wgmma_fence();
#pragma unroll
  for (int kk = 0; kk < Cfg::kBlockQ / 16; ++kk) {
    sm90::Wgmma<kHeadDim, T>::template rs<1>(
        dk, ds_frag[kk], sm90::mnmajor_desc(q_tile + kk * 2048, Cfg::kQChunkBytes), true);
  }
  sm90::wgmma_commit();
}

// The epilogue of a work item: dK (scaled) and dV of this warpgroup's keys, rows wg_key0 + r0
// (+ 8) of head, pairs of columns, rows past the sequence's n keys left out.
template <typename T, int kHeadDim>
__device__ __forceinline__ void v3_bwd_store_dk_dv(const float (&dk)[kHeadDim / 2],
                                                   const float (&dv)[kHeadDim / 2],
                                                   const V3BwdParams<T>& p, int head, int wg_key0,
                                                   int n, int r0, int tq) {
  // Addressed from one pointer per item with constant offsets: per-thread offsets that do not
  // depend on the item would be hoisted out of the item loop and spill.
  const std::size_t first = (static_cast<std::size_t>(head) * n + wg_key0 + r0) * kHeadDim + 2 * tq;
  T* const dk_out = p.d_k + first;
  T* const dv_out = p.d_v + first;
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    if (wg_key0 + r0 + 8 * h < n) {
#pragma unroll
      for (int j = 0; j < kHeadDim / 8; ++j) {
        const int offset = 8 * h * kHeadDim + 8 * j;
        *reinterpret_cast<uint32_t*>(dk_out + offset) =
            pack2<T>(dk[4 * j + 2 * h] * p.scale, dk[4 * j + 2 * h + 1] * p.scale);
        *reinterpret_cast<uint32_t*>(dv_out + offset) =
            pack2<T>(dv[4 * j + 2 * h], dv[4 * j + 2 * h + 1]);
      }
    }
  }
}

#endif  // ROOFLINE_V3BWD_DEVICE

}  // namespace
}  // namespace roofline::kernels
