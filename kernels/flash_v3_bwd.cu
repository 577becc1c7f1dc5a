// flash-v3 backward: FlashAttention-3's backward pass on Hopper's warpgroup MMA (wgmma), with
// TMA-fed, mbarrier-pipelined query tiles and warp specialisation. sm_90a only.
//
// What it demonstrates: all five GEMMs of the attention gradient (S = Q K^T recomputed,
// dP = dO V^T, dV += P^T dO, dK += dS^T Q, dQ += dS K) on the wgmma roof, which on an H100/H200
// is about 1.4x the mma.sync roof that flash-v2 is held to.
//
// Three launches: a preprocess that computes D = rowsum(dO ∘ O) and LSE·log2(e) into padded
// per-head vectors (padding rows get LSE = +inf, so their P is exactly 0 without a mask) and
// clears the FP32 dQ accumulator; the main kernel; and the conversion of dQ to FP16 or BF16
// (with the softmax scale applied there once instead of per tile). Every kernel is a template on
// the element type T (__half or __nv_bfloat16): only the wgmma type suffix, the tensor maps'
// element type and the conversions depend on it.
//
// Main kernel: a work item is Bc = 128 keys of one head; 3 warpgroups. At d = 128 each CTA
// takes one item; at d = 64 the CTAs are persistent (one per SM) and take items from a counter
// in the workspace (V3BwdConfig::kPersistent), the next item's first query stages loading while
// the last item's dK and dV are stored. Warpgroup 0 is the producer (its registers cut to 24
// with setmaxnreg): one thread loads the item's K and V once and then, for every query tile of
// Br rows (128 at d = 64, 80 at d = 128: v3_bwd_block_q), Q, dO (TMA, 128-byte swizzle) and the
// LSE and D slices (TMA) into a two-stage ring guarded by full/empty mbarriers, which runs on
// across a CTA's items. Warpgroups 1 and 2
// (240 registers each) own 64 keys each and keep dK and dV (64 x d, FP32) in registers for the
// whole loop. Per query tile each issues S^T = K_w Q^T and dP^T = V_w dO^T as two wgmma groups
// (both operands from shared memory, K-major); computes P^T = exp2(S^T·scale·log2e −
// LSE·log2e) while dP^T is still running; issues dV += P^T dO with P^T straight from the
// accumulator registers as the A fragment (dO read N-major through the transpose bit); forms
// dS^T = P^T ∘ (dP^T − D) when dP^T lands; issues dK += dS^T Q the same way; and writes dS^T
// to shared memory (swizzled, two buffers) for dQ.
//
// dQ: dQ = dS K over all 128 keys of the CTA, staged as FP32 in shared memory (128-byte
// swizzled, columns permuted so that the staging has no bank conflicts: dq_accum_column) and
// added to a padded FP32 workspace by one thread with bulk tensor reductions
// (cp.reduce.async.bulk.tensor .add) instead of per-thread atomics; one conversion kernel
// follows. The consumer warpgroups meet at a named barrier for each other's dS^T rows, so that
// each dQ element is added once per CTA (DqSplit): at d = 64 (128 queries a stage) each takes
// its own 64 queries; at d = 128 (80 queries, not a wgmma M) each computes dQ^T = K^T dS^T for
// its own 64 of the d columns, with dS stored as [query][key] by stmatrix .trans, and adds it,
// staged in its fragment order, with one non-tensor bulk reduction into an accumulator kept in
// that order (flash_v3_bwd_convert_dq_fragments maps it back). dK += dS^T Q is issued after
// dQ^T, so that the staging runs beside it. A separate dQ pass would recompute S and dP (seven
// GEMMs instead of five).
//
// Causal: query tiles wholly before the key block are never loaded; a warpgroup whose 64 keys
// all follow the tile's last query skips its four GEMMs and publishes zeros for dS^T; masks
// are applied only on tiles that cross the diagonal or the key tail. Any N: TMA zero-fills
// rows past the end; padded LSE makes those queries' P zero; keys past the end are masked.
// d = 64 and 128 only: every tile here is built from 128-byte swizzled rows of 64 halves, and
// d = 32 (64-byte rows) would need the 64-byte-swizzle variant of each operand layout.
//
// On the roofline: compute-bound on the wgmma tensor ceiling at large N (all five GEMMs there);
// the elementwise softmax gradient between the two GEMM pairs (FFMA and MUFU.EX2) and the dQ
// staging and reductions are what keeps it below the roof, and the warps' stalls sit at the
// barriers around the dQ staging. The measurements behind each choice above, and the variants
// that measured slower, are in NOTES.md ("flash-v3 backward") and docs/results.
#include <algorithm>
#include <cstdint>

#include <cuda.h>

#include "kernels/catalog.hpp"
#include "kernels/common.cuh"
#include "kernels/hopper/sm90.cuh"
#include "kernels/hopper/tensor_map.hpp"
#include "kernels/hopper/v3_bwd_config.cuh"
#include "kernels/hopper/v3_bwd_prepost.cuh"
#include "kernels/launchers.hpp"
#include "kernels/mma.cuh"

namespace roofline::kernels {
namespace {

// ---- the main kernel ----

// How the consumer warpgroups share dQ: V3BwdConfig::kSplit. Over all 128 keys they meet at a
// named barrier for each other's dS^T rows.
template <typename T, int kHeadDim, bool kCausal>
__global__ void __launch_bounds__(kV3BwdThreads, 1)
    flash_v3_backward_kernel(const __grid_constant__ CUtensorMap map_q,
                             const __grid_constant__ CUtensorMap map_k,
                             const __grid_constant__ CUtensorMap map_v,
                             const __grid_constant__ CUtensorMap map_do,
                             const __grid_constant__ CUtensorMap map_lse,
                             const __grid_constant__ CUtensorMap map_drow,
                             const __grid_constant__ CUtensorMap map_dq, const V3BwdParams<T> p) {
#ifdef ROOFLINE_V3BWD_DEVICE
  using Cfg = V3BwdConfig<kHeadDim>;
  using sm90::Wgmma;
  constexpr int kBlockQ = Cfg::kBlockQ;
  constexpr DqSplit kSplit = Cfg::kSplit;
  constexpr bool kTransposed = Cfg::kTransposed;
  constexpr int kStages = Cfg::kStages;
  extern __shared__ unsigned char smem_raw[];
  // 128-byte swizzled tiles must start on 1024-byte boundaries.
  const uint32_t raw_base = sm90::smem_u32(smem_raw);
  unsigned char* smem = smem_raw + (((raw_base + 1023u) & ~1023u) - raw_base);
  const uint32_t base = sm90::smem_u32(smem);
  const uint32_t s_k = base + Cfg::kOffK;
  const uint32_t s_v = base + Cfg::kOffV;
  const uint32_t s_q = base + Cfg::kOffQ;
  const uint32_t s_do = base + Cfg::kOffDo;
  const uint32_t s_ds = base + Cfg::kOffDs;
  auto* bar_kv = reinterpret_cast<uint64_t*>(smem + Cfg::kOffBarriers);
  uint64_t* bar_kv_empty = bar_kv + 1;
  uint64_t* bar_full = bar_kv + 2;           // [kStages]
  uint64_t* bar_empty = bar_full + kStages;  // [kStages]
  volatile int* slots = reinterpret_cast<volatile int*>(smem + Cfg::kOffSlots);

  const int n = p.seq_len;
  const int tid = threadIdx.x;
  // Work item t: its key block and head, the first query tile and the number of query stages.
  struct Item {
    int kv0, head, first_q_tile, steps;
  };
  const auto item = [&](int t) {
    const int head = t / p.num_kv_blocks;
    const int kv0 = (t - head * p.num_kv_blocks) * kV3BwdBlockKv;
    const int first_q_tile = kCausal ? kv0 / kBlockQ : 0;
    return Item{kv0, head, first_q_tile, p.n_pad / kBlockQ - first_q_tile};
  };

  if (tid == 0) {
    sm90::mbarrier_init(bar_kv, 1);
    sm90::mbarrier_init(bar_kv_empty, 2 * 128);  // every consumer thread releases K and V
    for (int s = 0; s < kStages; ++s) {
      sm90::mbarrier_init(bar_full + s, 1);
      sm90::mbarrier_init(bar_empty + s, 2 * 128);  // every consumer thread releases the stage
    }
    sm90::fence_barrier_init();
  }
  __syncthreads();

  if (tid < 128) {
    // Producer warpgroup: one thread issues every copy; the other warps only give back their
    // registers.
    sm90::setmaxnreg_decrease<24>();
    if (tid == 0) {
      // Shared-space addresses from the one base register (the producer has 24 registers).
      const uint32_t bars = base + Cfg::kOffBarriers;
      constexpr uint32_t kKvFull = 0, kKvEmpty = 8, kFull = 16, kEmpty = kFull + 8 * kStages;
      int loaded = 0;  // query stages loaded by this CTA so far, over all its work items
      const auto load_stage = [&](int head, int q0) {
        const int stage = loaded % kStages;
        const int use = loaded / kStages;
        ++loaded;
        // Wait until both consumer warpgroups released this stage's previous use.
        if (use > 0) sm90::mbarrier_wait(bars + kEmpty + 8 * stage, (use - 1) & 1);
        const uint32_t full = bars + kFull + 8 * stage;
        sm90::mbarrier_arrive_expect_tx(full, Cfg::kStageTxBytes);
#pragma unroll
        for (int c = 0; c < Cfg::kChunks; ++c) {
          const uint32_t offset = stage * Cfg::kQTileBytes + c * Cfg::kQChunkBytes;
          sm90::tma_load_3d(s_q + offset, &map_q, full, c * kChunkCols, q0, head);
          sm90::tma_load_3d(s_do + offset, &map_do, full, c * kChunkCols, q0, head);
        }
        sm90::tma_load_3d(base + Cfg::kOffLse + stage * Cfg::kVecStride, &map_lse, full, q0, head,
                          0);
        sm90::tma_load_3d(base + Cfg::kOffDrow + stage * Cfg::kVecStride, &map_drow, full, q0, head,
                          0);
      };
      const auto load_kv = [&](const Item& it) {
        sm90::mbarrier_arrive_expect_tx(bars + kKvFull, Cfg::kKvTxBytes);
#pragma unroll
        for (int c = 0; c < Cfg::kChunks; ++c) {
          sm90::tma_load_3d(s_k + c * Cfg::kKvChunkBytes, &map_k, bars + kKvFull, c * kChunkCols,
                            it.kv0, it.head);
          sm90::tma_load_3d(s_v + c * Cfg::kKvChunkBytes, &map_v, bars + kKvFull, c * kChunkCols,
                            it.kv0, it.head);
        }
      };
      if constexpr (!Cfg::kPersistent) {
        const Item it = item(static_cast<int>(blockIdx.x));
        load_kv(it);
        for (int q0 = it.first_q_tile * kBlockQ; q0 < p.n_pad; q0 += kBlockQ) {
          load_stage(it.head, q0);
        }
      }
      for (int use = 0; Cfg::kPersistent; ++use) {
        const int t = p.next_item != nullptr
                          ? static_cast<int>(atomicAdd(p.next_item, 1u))
                          : static_cast<int>(blockIdx.x) + use * static_cast<int>(gridDim.x);
        if (t >= p.total_items) {
          if (use > 0) sm90::mbarrier_wait(bars + kKvEmpty, (use - 1) & 1);
          slots[use % 2] = -1;
          // The consumers wake to the -1. The phase carries bytes like an item's (one K chunk of
          // item 0, never read), as the forward's end marker does: the handoff that
          // compute-sanitizer's racecheck ran clean with.
          sm90::mbarrier_arrive_expect_tx(bars + kKvFull, Cfg::kKvChunkBytes);
          sm90::tma_load_3d(s_k, &map_k, bars + kKvFull, 0, 0, 0);
          break;
        }
        const Item it = item(t);
        // The item's first query stages load while the consumers still work on the last item;
        // its K and V once they have released the last item's.
        int q0 = it.first_q_tile * kBlockQ;
        const int q_early = min(p.n_pad, q0 + kStages * kBlockQ);
        for (; q0 < q_early; q0 += kBlockQ) load_stage(it.head, q0);
        if (use > 0) sm90::mbarrier_wait(bars + kKvEmpty, (use - 1) & 1);
        slots[use % 2] = t;
        load_kv(it);
        for (; q0 < p.n_pad; q0 += kBlockQ) load_stage(it.head, q0);
      }
    }
    return;
  }

  sm90::setmaxnreg_increase<240>();
  const int wg = tid / 128 - 1;  // consumer warpgroup 0 or 1: keys kv0 + 64·wg ..
  const int t = tid % 128;
  const int warp = t / 32;
  const int lane = t % 32;
  const int g = lane / 4;
  const int tq = lane % 4;
  // This thread's accumulator rows within a 64-row wgmma tile: r0 and r0 + 8.
  const int r0 = 16 * warp + g;

  // Descriptor bases. K-major operands advance 32 bytes per 16-column step inside a 128-byte
  // row and jump a 64-column block every 4 steps; MN-major ones advance 16 rows (2048 bytes).
  const uint32_t a_k = s_k + wg * 64 * kSwizzleRowBytes;  // this warpgroup's 64 K rows
  const uint32_t a_v = s_v + wg * 64 * kSwizzleRowBytes;
  // dQ operands: all 128 dS^T rows (with split queries, this warpgroup's 64-query chunk of
  // them) and all 128 K rows.
  const uint32_t dq_a = s_ds + (kSplit == DqSplit::kQueryHalves ? wg * Cfg::kDsChunkBytes : 0);
  const uint32_t dq_b = s_k;

  // Query stages consumed by this CTA so far, over all its work items: the ring position, the
  // dS^T buffer and the dQ turn follow it.
  int done_steps = 0;
  for (int use = 0;; ++use) {
    int item_id = static_cast<int>(blockIdx.x);
    if constexpr (Cfg::kPersistent) {
      sm90::mbarrier_wait(bar_kv, use & 1);
      item_id = slots[use % 2];
      if (item_id < 0) break;
    } else {
      if (use > 0) break;
      sm90::mbarrier_wait(bar_kv, 0);
    }
    const Item it = item(item_id);
    const int head = it.head;
    const int wg_key0 = it.kv0 + 64 * wg;
    // The stage loop counts on done_steps, the CTA's stages so far; stage done_steps is query
    // tile done_steps - q_tile_base.
    const int q_tile_base = done_steps - it.first_q_tile;
    const int end_steps = done_steps + it.steps;

    float dk[kHeadDim / 2];
    float dv[kHeadDim / 2];
#pragma unroll
    for (int i = 0; i < kHeadDim / 2; ++i) dk[i] = dv[i] = 0.f;

    for (; done_steps < end_steps; ++done_steps) {
      const int stage = done_steps % kStages;
      const int q0 = (done_steps - q_tile_base) * kBlockQ;
      const uint32_t q_tile = s_q + stage * Cfg::kQTileBytes;
      const uint32_t do_tile = s_do + stage * Cfg::kQTileBytes;
      sm90::mbarrier_wait(bar_full + stage, (done_steps / kStages) & 1);

      // Under causal masking a warpgroup whose keys all follow the tile's last query has P = 0.
      const bool active = !kCausal || wg_key0 <= q0 + kBlockQ - 1;
      uint32_t p_frag[kBlockQ / 16][4];
      uint32_t ds_frag[kBlockQ / 16][4];
      if (active) {
        // S^T = K_w Q^T and dP^T = V_w dO^T (64 keys x kBlockQ queries each), two commit groups
        // so that P is computed while dP is still on the tensor cores. (The next step's S^T is
        // not issued before this step's dQ staging: slower, NOTES.md.)
        float s[kBlockQ / 2];
        float dp[kBlockQ / 2];
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
        const bool needs_mask = (kCausal && q0 < wg_key0 + 63) || wg_key0 + 64 > n;
        // The LSE and D slices are read after the waits (before them: slower, NOTES.md).
        sm90::wgmma_wait<1>();
        sm90::fence_registers(s);
#pragma unroll
        for (int j = 0; j < kBlockQ / 8; ++j) {
          const float2 l = *reinterpret_cast<const float2*>(lse + 8 * j + 2 * tq);
#pragma unroll
          for (int e = 0; e < 4; ++e) {
            s[4 * j + e] =
                ptx::exp2_approx(fmaf(s[4 * j + e], p.scale_log2, (e % 2) ? -l.y : -l.x));
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
            const float2 dr =
                *reinterpret_cast<const float2*>(drow + 16 * kk + 8 * (r / 2) + 2 * tq);
            ds_frag[kk][r] = pack2<T>(prob.x * (dp[8 * kk + 2 * r] - dr.x),
                                      prob.y * (dp[8 * kk + 2 * r + 1] - dr.y));
          }
        }
      } else {
#pragma unroll
        for (int kk = 0; kk < kBlockQ / 16; ++kk) {
#pragma unroll
          for (int r = 0; r < 4; ++r) p_frag[kk][r] = ds_frag[kk][r] = 0u;
        }
      }

      // dS^T to shared memory (two buffers: Cfg::kDsBuffers says why).
      // ds_frag[kk][r] holds row r0 + 8·(r % 2), queries 16·kk + 8·(r / 2) + 2·tq and + 1.
      const int ds_buffer = done_steps % Cfg::kDsBuffers;
      unsigned char* ds_buf = smem + Cfg::kOffDs + ds_buffer * Cfg::kDsBytes;
      if constexpr (kTransposed) {
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
            *reinterpret_cast<uint32_t*>(
                ds_buf + sm90::swizzled_offset(row, col, Cfg::kDsChunkBytes)) = ds_frag[kk][r];
          }
        }
      }
      sm90::fence_proxy_async();

      const auto issue_dk = [&] {
        // dK += dS^T Q; Q is [query][d]: an N-major B operand.
        sm90::wgmma_fence();
#pragma unroll
        for (int kk = 0; kk < kBlockQ / 16; ++kk) {
          Wgmma<kHeadDim, T>::template rs<1>(
              dk, ds_frag[kk], sm90::mnmajor_desc(q_tile + kk * 2048, Cfg::kQChunkBytes), true);
        }
        sm90::wgmma_commit();
      };
      // Transposed: after the dQ^T GEMM (below).
      if (active && !kTransposed) issue_dk();

      // Every dS^T row that the dQ GEMM below reads has been written.
      sm90::named_barrier_sync(1, 256);

      const uint32_t ds_tile = dq_a + ds_buffer * Cfg::kDsBytes;
      const int dq_row0 = q0 + (kSplit == DqSplit::kQueryHalves ? 64 * wg : 0);
      const auto fence_step_registers = [&] {
        sm90::fence_registers(dk);
        sm90::fence_registers(dv);
#pragma unroll
        for (int kk = 0; kk < kBlockQ / 16; ++kk) {
          sm90::fence_registers(p_frag[kk]);
          sm90::fence_registers(ds_frag[kk]);
        }
      };
      unsigned char* staging = smem + Cfg::kOffDqStage + wg * Cfg::kDqStageBytes;
      if constexpr (kTransposed) {
        // dQ^T (this warpgroup's 64 columns x kBlockQ queries) = K^T dS^T: A = K read M-major
        // (its 64-column block), B = dS read K-major. Issued before the staging buffer is known
        // to be free: it reads only dS and K.
        float dq[kBlockQ / 2];
        sm90::wgmma_fence();
#pragma unroll
        for (int kk = 0; kk < kV3BwdBlockKv / 16; ++kk) {
          Wgmma<kBlockQ, T>::template ss<1, 0>(
              dq,
              sm90::mnmajor_desc(dq_b + wg * Cfg::kKvChunkBytes + kk * 2048, Cfg::kKvChunkBytes),
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
          sm90::bulk_reduce_add_f32(p.dq_accum + block * Cfg::kDqStageBytes / 4,
                                    sm90::smem_u32(staging), Cfg::kDqStageBytes);
          sm90::tma_store_commit();
        }
        sm90::wgmma_wait<0>();
        fence_step_registers();
        sm90::mbarrier_arrive(bar_empty + stage);
        continue;
      }
      // Query halves: dQ (this warpgroup's 64 queries x 64 columns) = dS K: A = dS^T read
      // M-major (one wgmma M of 64 queries), B = K read N-major. Issued before the staging buffer
      // is known to be free: it reads only dS^T and K, so it overlaps the wait. Once dK (the group
      // before it) is done, Q, dO, LSE and D of this stage are no longer read.
      float dq[32];
      sm90::wgmma_fence();
#pragma unroll
      for (int kk = 0; kk < kV3BwdBlockKv / 16; ++kk) {
        Wgmma<64, T>::template ss<1, 1>(
            dq, sm90::mnmajor_desc(ds_tile + kk * 2048, Cfg::kDsChunkBytes),
            sm90::mnmajor_desc(dq_b + kk * 2048, Cfg::kKvChunkBytes), kk > 0);
      }
      sm90::wgmma_commit();
      sm90::wgmma_wait<1>();
      fence_step_registers();
      sm90::mbarrier_arrive(bar_empty + stage);
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
        *reinterpret_cast<float2*>(staging +
                                   sm90::swizzled_offset(r0 + 8, 2 * col, Cfg::kDqBoxBytes)) =
            make_float2(dq[4 * j + 2], dq[4 * j + 3]);
      }
      sm90::fence_proxy_async();
      sm90::named_barrier_sync(3 + wg, 128);
      if (t == 0) {
        for (int box = 0; box < 2; ++box) {
          sm90::tma_reduce_add_3d(&map_dq, staging + box * Cfg::kDqBoxBytes, 32 * box, dq_row0,
                                  head);
        }
        sm90::tma_store_commit();
      }
    }
    // Every GEMM of this warpgroup on the item has completed: K and V can take the next item's.
    if constexpr (Cfg::kPersistent) sm90::mbarrier_arrive(bar_kv_empty);

    // dK (scaled) and dV of this warpgroup's keys: rows wg_key0 + r0 (+ 8), pairs of columns.
    // Addressed from one pointer per item with constant offsets: per-thread offsets that do not
    // depend on the item would be hoisted out of the item loop and spill.
    const std::size_t first =
        (static_cast<std::size_t>(head) * n + wg_key0 + r0) * kHeadDim + 2 * tq;
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
  // The reductions must be done before the dQ conversion kernel reads the accumulator.
  if (t == 0) sm90::tma_store_wait_all();
#else
  __trap();  // only sm_90a builds of this file are ever launched
#endif
}

// ---- host ----

struct V3BwdMaps {
  CUtensorMap q, k, v, d_o, lse, drow, dq;
};

// Q, K, V, dO as (d, N, B*H) FP16 or BF16 in 64-column boxes, 128B-swizzled, rows past N read as
// zeros; the padded LSE and D vectors as (n_pad, B*H) FP32 in boxes of a stage's queries.
cudaError_t make_v3_maps(const AttentionShape& shape, const AttentionBuffers& buffers,
                         const float* lse_log2, const float* d_rowsum, const float* dq_accum,
                         int n_pad, V3BwdMaps* maps) {
  using sm90::TmaElement;
  using sm90::TmaSwizzle;
  const std::uint64_t d = static_cast<std::uint64_t>(shape.head_dim);
  const std::uint64_t rows = static_cast<std::uint64_t>(shape.seq_len);
  const std::uint64_t heads = static_cast<std::uint64_t>(shape.batch) * shape.heads;
  const TmaElement element =
      shape.dtype == DType::kBf16 ? TmaElement::kBfloat16 : TmaElement::kHalf;
  const int block_q = v3_bwd_block_q(shape.head_dim);
  const auto tile_map = [&](CUtensorMap* map, const void* data, int box_rows) {
    return sm90::encode_tensor_map_3d(map, element, data, d, rows, heads, kChunkCols,
                                      static_cast<std::uint32_t>(box_rows), TmaSwizzle::k128B);
  };
  const auto vector_map = [&](CUtensorMap* map, const float* data) {
    return sm90::encode_tensor_map_3d(map, TmaElement::kFloat, data,
                                      static_cast<std::uint64_t>(n_pad), heads, 1,
                                      static_cast<std::uint32_t>(block_q), 1, TmaSwizzle::kNone);
  };
  ROOFLINE_RETURN_IF_ERROR(tile_map(&maps->q, buffers.q, block_q));
  ROOFLINE_RETURN_IF_ERROR(tile_map(&maps->d_o, buffers.d_o, block_q));
  ROOFLINE_RETURN_IF_ERROR(tile_map(&maps->k, buffers.k, kV3BwdBlockKv));
  ROOFLINE_RETURN_IF_ERROR(tile_map(&maps->v, buffers.v, kV3BwdBlockKv));
  ROOFLINE_RETURN_IF_ERROR(vector_map(&maps->lse, lse_log2));
  ROOFLINE_RETURN_IF_ERROR(vector_map(&maps->drow, d_rowsum));
  // The FP32 dQ accumulator as (d, n_pad, B*H) in boxes of 32 columns x a staged dQ tile's rows,
  // 128B-swizzled.
  return sm90::encode_tensor_map_3d(&maps->dq, TmaElement::kFloat, dq_accum, d,
                                    static_cast<std::uint64_t>(n_pad), heads, 32,
                                    static_cast<std::uint32_t>(kV3BwdDqRows), TmaSwizzle::k128B);
}

template <typename T, int kHeadDim, bool kCausal>
cudaError_t launch_v3_backward(const AttentionShape& shape, const V3BwdMaps& maps,
                               const V3BwdParams<T>& params, cudaStream_t stream) {
  using Cfg = V3BwdConfig<kHeadDim>;
  auto kernel = flash_v3_backward_kernel<T, kHeadDim, kCausal>;
  ROOFLINE_RETURN_IF_ERROR(
      cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, Cfg::kSmemBytes));
  // Persistent (V3BwdConfig::kPersistent): one CTA per SM (one fits) works through the items, so
  // that the loads of its next item run under the dK/dV stores of the last; otherwise one CTA
  // per item. Items in the order of V3BwdParams: a head's key
  // blocks one after the other, the long causal ones (small kv0) first (every head's longest
  // blocks before any head's shorter ones measured slower: NOTES.md).
  int sms = 0;
  ROOFLINE_RETURN_IF_ERROR(current_device_sms(&sms));
  V3BwdParams<T> launched = params;
  const int ctas = Cfg::kPersistent ? std::min(params.total_items, sms) : params.total_items;
  if (ctas == params.total_items) launched.next_item = nullptr;  // CTA c takes item c
  kernel<<<ctas, kV3BwdThreads, Cfg::kSmemBytes, stream>>>(maps.q, maps.k, maps.v, maps.d_o,
                                                           maps.lse, maps.drow, maps.dq, launched);
  return cudaGetLastError();
}

template <typename T, int kHeadDim>
cudaError_t launch_v3_prepare(const AttentionBuffers& buffers, float* lse_log2, float* d_rowsum,
                              float* dq_accum, unsigned* next_item, long long padded_rows,
                              int seq_len, int n_pad, cudaStream_t stream) {
  constexpr int kRowsPerBlock = kPrepThreads / (kHeadDim / 8);
  const long long blocks = (padded_rows + kRowsPerBlock - 1) / kRowsPerBlock;
  flash_v3_bwd_prepare<T, kHeadDim><<<static_cast<unsigned>(blocks), kPrepThreads, 0, stream>>>(
      static_cast<const T*>(buffers.o), static_cast<const T*>(buffers.d_o), buffers.lse, lse_log2,
      d_rowsum, dq_accum, next_item, padded_rows, seq_len, n_pad);
  return cudaGetLastError();
}

struct V3BwdWorkspace {
  float* lse_log2;      // [B*H][n_pad], LSE·log2(e), +inf past seq_len
  float* d_rowsum;      // [B*H][n_pad], D = rowsum(dO ∘ O), 0 past seq_len
  float* dq_accum;      // [B*H][n_pad][d]
  unsigned* next_item;  // the main kernel's work counter, zeroed by the preprocess kernel
};

int padded_seq_len(const AttentionShape& shape) {
  const int block_q = v3_bwd_block_q(shape.head_dim);
  return ceil_div(shape.seq_len, block_q) * block_q;
}

V3BwdWorkspace carve_v3_workspace(const AttentionShape& shape, void* base) {
  const std::size_t rows = static_cast<std::size_t>(shape.batch) * shape.heads *
                           static_cast<std::size_t>(padded_seq_len(shape));
  auto* bytes = static_cast<unsigned char*>(base);
  const std::size_t vec = align_up(rows * sizeof(float));
  const std::size_t accum = align_up(rows * shape.head_dim * sizeof(float));
  return {reinterpret_cast<float*>(bytes), reinterpret_cast<float*>(bytes + vec),
          reinterpret_cast<float*>(bytes + 2 * vec),
          reinterpret_cast<unsigned*>(bytes + 2 * vec + accum)};
}

template <typename T>
cudaError_t launch_v3_backward_for_type(const AttentionShape& shape,
                                        const AttentionBuffers& buffers, cudaStream_t stream) {
  const V3BwdWorkspace ws = carve_v3_workspace(shape, buffers.workspace);
  const int n_pad = padded_seq_len(shape);
  const long long padded_rows = static_cast<long long>(shape.batch) * shape.heads * n_pad;
  const cudaError_t prepared =
      shape.head_dim == 128
          ? launch_v3_prepare<T, 128>(buffers, ws.lse_log2, ws.d_rowsum, ws.dq_accum, ws.next_item,
                                      padded_rows, shape.seq_len, n_pad, stream)
          : launch_v3_prepare<T, 64>(buffers, ws.lse_log2, ws.d_rowsum, ws.dq_accum, ws.next_item,
                                     padded_rows, shape.seq_len, n_pad, stream);
  ROOFLINE_RETURN_IF_ERROR(prepared);
  V3BwdMaps maps{};
  ROOFLINE_RETURN_IF_ERROR(
      make_v3_maps(shape, buffers, ws.lse_log2, ws.d_rowsum, ws.dq_accum, n_pad, &maps));
  V3BwdParams<T> params{};
  params.d_k = static_cast<T*>(buffers.d_k);
  params.d_v = static_cast<T*>(buffers.d_v);
  params.num_kv_blocks = ceil_div(shape.seq_len, kV3BwdBlockKv);
  params.total_items = params.num_kv_blocks * shape.batch * shape.heads;
  params.next_item = ws.next_item;
  params.dq_accum = ws.dq_accum;
  params.seq_len = shape.seq_len;
  params.n_pad = n_pad;
  params.scale = 1.f / sqrtf(static_cast<float>(shape.head_dim));
  params.scale_log2 = params.scale * kLog2e;
  cudaError_t status = cudaErrorNotSupported;
  if (shape.head_dim == 128) {
    status = shape.causal ? launch_v3_backward<T, 128, true>(shape, maps, params, stream)
                          : launch_v3_backward<T, 128, false>(shape, maps, params, stream);
  } else if (shape.head_dim == 64) {
    status = shape.causal ? launch_v3_backward<T, 64, true>(shape, maps, params, stream)
                          : launch_v3_backward<T, 64, false>(shape, maps, params, stream);
  }
  ROOFLINE_RETURN_IF_ERROR(status);
  if (shape.head_dim == 128) {
    constexpr int kBlockQ = v3_bwd_block_q(128);
    const long long stages = static_cast<long long>(shape.batch) * shape.heads * (n_pad / kBlockQ);
    flash_v3_bwd_convert_dq_fragments<T, kBlockQ>
        <<<static_cast<unsigned>(stages), 256, 0, stream>>>(
            ws.dq_accum, static_cast<T*>(buffers.d_q), shape.seq_len, n_pad / kBlockQ,
            params.scale);
    return cudaGetLastError();
  }
  const long long vectors =
      static_cast<long long>(shape.batch) * shape.heads * shape.seq_len * (shape.head_dim / 8);
  constexpr int kConvertThreads = 256;
  const long long wanted = (vectors + kConvertThreads - 1) / kConvertThreads;
  const unsigned blocks = static_cast<unsigned>(wanted < 65536 ? wanted : 65536);
  flash_v3_bwd_convert_dq<T>
      <<<blocks, kConvertThreads, 0, stream>>>(ws.dq_accum, static_cast<T*>(buffers.d_q), vectors,
                                               shape.head_dim, shape.seq_len, n_pad, params.scale);
  return cudaGetLastError();
}

}  // namespace

std::size_t flash_v3_backward_workspace_bytes(const AttentionShape& shape) {
  const std::size_t rows = static_cast<std::size_t>(shape.batch) * shape.heads *
                           static_cast<std::size_t>(padded_seq_len(shape));
  return 2 * align_up(rows * sizeof(float)) + align_up(rows * shape.head_dim * sizeof(float)) +
         align_up(sizeof(unsigned));
}

// Work model: FLOPs = 2.5 × forward = 10·B·H·N²·d, halved when causal (five GEMM-sized
// products: S recomputed, dP, dV, dK, dQ); minimum DRAM bytes = 2·B·H·N·d·(5 reads: Q, K, V,
// O, dO + 3 writes: dQ, dK, dV) + 4·B·H·N (LSE).
cudaError_t flash_v3_backward(const AttentionShape& shape, const AttentionBuffers& buffers,
                              cudaStream_t stream) {
  if (shape.head_dim != 64 && shape.head_dim != 128) return cudaErrorNotSupported;
  return shape.dtype == DType::kBf16
             ? launch_v3_backward_for_type<__nv_bfloat16>(shape, buffers, stream)
             : launch_v3_backward_for_type<__half>(shape, buffers, stream);
}

}  // namespace roofline::kernels

// The analytic model's tiles (catalog.hpp) are this file's own.
namespace roofline::kernels {
namespace {
// (the model takes a warpgroup's 64-query half of a d = 64 stage as its tile)
static_assert(backward_tiles_are("flash-v3", 64,
                                 V3BwdConfig<64>::kBlockQ / V3BwdConfig<64>::kQHalves,
                                 kV3BwdBlockKv));
static_assert(backward_tiles_are("flash-v3", 128,
                                 V3BwdConfig<128>::kBlockQ / V3BwdConfig<128>::kQHalves,
                                 kV3BwdBlockKv));
}  // namespace
}  // namespace roofline::kernels
