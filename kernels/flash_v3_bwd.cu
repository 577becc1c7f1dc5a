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
// the last item's dK and dV are stored. Warpgroup 0 is the producer (v3_bwd_producer.cuh; its
// registers cut to 24 with setmaxnreg): one thread loads the item's K and V once and then, for
// every query tile of Br rows (128 at d = 64, 80 at d = 128: v3_bwd_block_q), Q, dO (TMA,
// 128-byte swizzle) and the LSE and D slices (TMA) into a two-stage ring guarded by full/empty
// mbarriers, which runs on across a CTA's items. Warpgroups 1 and 2 (v3_bwd_consumer.cuh; 240
// registers each) own 64 keys each and keep dK and dV (64 x d, FP32) in registers for the
// whole loop. Per query tile each issues S^T = K_w Q^T and dP^T = V_w dO^T as two wgmma groups
// (both operands from shared memory, K-major); computes P^T = exp2(S^T·scale·log2e −
// LSE·log2e) while dP^T is still running; issues dV += P^T dO with P^T straight from the
// accumulator registers as the A fragment (dO read N-major through the transpose bit); forms
// dS^T = P^T ∘ (dP^T − D) when dP^T lands; issues dK += dS^T Q the same way; and writes dS^T
// to shared memory (swizzled, two buffers) for dQ.
//
// dQ (v3_bwd_dq.cuh): dQ = dS K over all 128 keys of the CTA, staged as FP32 in shared memory
// (128-byte swizzled, columns permuted so that the staging has no bank conflicts: dq_accum_column)
// and added to a padded FP32 workspace by one thread with bulk tensor reductions
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
// that measured slower, are in docs/results/2026-12-02-h200-flash-v3-backward-tuning.md.
// Where it lands today (regime, binding roof, share of it, advice), row by row:
//   cuflash-roofline run --kernel flash-v3 --pass bwd --head-dim 128 --seq 16384 --counter-set full
#include <algorithm>
#include <cstdint>

#include <cuda.h>

#include "kernels/catalog.hpp"
#include "kernels/common.cuh"
#include "kernels/hopper/sm90.cuh"
#include "kernels/hopper/tensor_map.hpp"
#include "kernels/hopper/v3_bwd_config.cuh"
#include "kernels/hopper/v3_bwd_consumer.cuh"
#include "kernels/hopper/v3_bwd_dq.cuh"
#include "kernels/hopper/v3_bwd_prepost.cuh"
#include "kernels/hopper/v3_bwd_producer.cuh"
#include "kernels/launchers.hpp"
#include "kernels/mma.cuh"

namespace roofline::kernels {
namespace {

// ---- the main kernel ----

// Warpgroup 0 produces (v3_bwd_producer.cuh); warpgroups 1 and 2 consume, 64 keys each: per
// query stage the softmax gradient, dS^T and dK, per work item the dK and dV epilogue
// (v3_bwd_consumer.cuh), and per query stage their share of dQ (v3_bwd_dq.cuh). How the consumer
// warpgroups share dQ: V3BwdConfig::kSplit. Over all 128 keys they meet at a named barrier for
// each other's dS^T rows.
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
    v3_bwd_producer<T, kHeadDim, kCausal>(tid, base, slots, map_q, map_k, map_v, map_do, map_lse,
                                          map_drow, p);
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
  // The dQ GEMM's dS operand: all 128 dS^T rows (with split queries, this warpgroup's 64-query
  // chunk of them); its K operand is all 128 K rows (s_k).
  const uint32_t dq_a = s_ds + (kSplit == DqSplit::kQueryHalves ? wg * Cfg::kDsChunkBytes : 0);

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
    const V3BwdItem it = v3_bwd_item<kHeadDim, kCausal>(p, item_id);
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
        // The GEMM accumulators (these and dq below) are declared here and passed by reference:
        // local to the inlined functions that fill them, they would get a lifetime per call, and
        // the compiler would generate a different step loop from the one measured.
        float s[kBlockQ / 2];
        float dp[kBlockQ / 2];
        // Only the tiles that cross the diagonal or the key tail are masked.
        const bool needs_mask = (kCausal && q0 < wg_key0 + 63) || wg_key0 + 64 > n;
        v3_bwd_softmax_grad<T, kHeadDim, kCausal>(s, dp, dv, p_frag, ds_frag, p, smem, a_k, a_v,
                                                  q_tile, do_tile, stage, q0, wg_key0, n,
                                                  needs_mask, r0, tq);
      } else {
#pragma unroll
        for (int kk = 0; kk < kBlockQ / 16; ++kk) {
#pragma unroll
          for (int r = 0; r < 4; ++r) p_frag[kk][r] = ds_frag[kk][r] = 0u;
        }
      }

      const int ds_buffer = done_steps % Cfg::kDsBuffers;
      v3_bwd_store_ds<kHeadDim>(ds_frag, smem + Cfg::kOffDs + ds_buffer * Cfg::kDsBytes, wg, warp,
                                lane, r0, tq);

      const auto issue_dk = [&] { v3_bwd_issue_dk<T, kHeadDim>(dk, ds_frag, q_tile); };
      // Transposed: after the dQ^T GEMM (v3_bwd_dq_transposed says why).
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
        float dq[kBlockQ / 2];
        v3_bwd_dq_transposed<T, kHeadDim>(dq, p, s_k, ds_tile, staging, wg, t, head, q0,
                                          bar_empty + stage, issue_dk, fence_step_registers);
      } else {
        float dq[32];
        v3_bwd_dq_query_halves<T, kHeadDim>(dq, map_dq, s_k, ds_tile, staging, wg, t, r0, tq, head,
                                            dq_row0, bar_empty + stage, fence_step_registers);
      }
    }
    // Every GEMM of this warpgroup on the item has completed: K and V can take the next item's.
    if constexpr (Cfg::kPersistent) sm90::mbarrier_arrive(bar_kv_empty);

    v3_bwd_store_dk_dv<T, kHeadDim>(dk, dv, p, head, wg_key0, n, r0, tq);
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
  // blocks before any head's shorter ones measured slower:
  // docs/results/2026-12-02-h200-flash-v3-backward-tuning.md).
  int sms = 0;
  ROOFLINE_RETURN_IF_ERROR(current_context_sms(&sms));
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
