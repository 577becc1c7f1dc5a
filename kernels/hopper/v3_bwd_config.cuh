// flash-v3 backward's configuration: its tiles (v3_bwd_block_q), how the consumers share dQ
// (DqSplit), its stages, register split and shared-memory layout per head dimension, its
// kernels' parameters and its work items (v3_bwd_item). Included by flash_v3_bwd.cu alone (its
// anonymous namespace), also through its other v3_bwd_*.cuh headers; the catalogue's tiles are
// checked against it there.
#pragma once

#include <cuda.h>

#include <cstdint>

#include "kernels/common.cuh"
#include "kernels/hopper/sm90.cuh"

namespace roofline::kernels {
namespace {

constexpr int kV3BwdBlockKv = 128;  // keys per CTA, 64 per consumer warpgroup
constexpr int kV3BwdThreads = 384;  // producer warpgroup + 2 consumer warpgroups
constexpr int kSwizzleRowBytes = 128;
constexpr int kChunkCols = kSwizzleRowBytes / 2;  // halves per 128-byte swizzled row
constexpr int kV3BwdDqRows = 64;  // rows of a staged dQ tile in the query-halves split (one M)

// Queries per pipeline stage: 128 at d = 64 (twice the work per step and per barrier, and
// S^T/dP^T as m64n128 GEMMs); 80 at d = 128, whose registers hold dK and dV of 64 x 128
// (FlashAttention-3's choice without a mask: m64n80 GEMMs read 10% less shared memory per FLOP
// than m64n64, and a stage's fixed costs spread over 25% more queries). Causal too: against 64
// queries (dQ by turns), same binary, +5.5-7% at N 8192-16384, +3% at N 3000, -2.5% at B8 H16
// N1024 (H200, 2026-12-01).
constexpr int v3_bwd_block_q(int head_dim) {
  return head_dim == 64 ? 128 : 80;
}

// How the two consumer warpgroups share dQ of a stage (kBlockQ queries x d columns over the
// CTA's 128 keys): over all 128 keys, so that each dQ element is reduced into the accumulator
// once per CTA. Measured against the alternatives (H200, 2026-12-01, same binary): at d = 64,
// each over its own 64 keys (every element reduced twice) was 1.6-5% slower. At d = 128 with
// 64-query stages (sessions 10-12), dQ = dS K by turns (one warpgroup the whole tile, alternating)
// beat 64-column blocks per warpgroup by 1-3%; the transposed split with 80 queries beats both.
enum class DqSplit {
  kQueryHalves,  // each its own 64 queries, all 64 columns (d = 64, 128 queries a stage)
  kTransposed,   // dQ^T = K^T dS^T, each warpgroup its own 64 of the d columns (M = 64) over
                 // the stage's 80 queries (d = 128, 80 queries: no m64 tile of dQ itself)
};

template <int kHeadDim>
struct V3BwdConfig {
  // Query stages in the TMA ring. Three at d = 128 measured 1-2% slower (H200, 2026-12-01).
  static constexpr int kStages = 2;
  static constexpr int kBlockQ = v3_bwd_block_q(kHeadDim);
  static constexpr DqSplit kSplit = kHeadDim == 64 ? DqSplit::kQueryHalves : DqSplit::kTransposed;
  // Persistent CTAs (one per SM, work items from a counter) at d = 64: against one CTA per item,
  // same binary: +4-5% at N 1024-2048 and causal N 16384, +1% full N 16384. At d = 128 the item
  // loop (20-76 bytes of spills, none without it) was 1-2% slower than one CTA per item at
  // every shape but N 1024 full, so each CTA takes one item there (H200, 2026-12-01).
  static constexpr bool kPersistent = kHeadDim == 64;
  static constexpr int kQHalves = kBlockQ / 64;  // 64-query chunks of a stage (d = 64, 128 queries)
  // dQ rows of a warpgroup and step (one wgmma M) in the query-halves split.
  static constexpr int kDqRows = kV3BwdDqRows;
  static constexpr int kChunks = kHeadDim / kChunkCols;
  // Shared tiles are stored as kChunks column chunks of [rows][64 halves], 128B-swizzled
  // (the TMA box layout); every tile and chunk starts on a 1024-byte boundary.
  static constexpr int kKvChunkBytes = kV3BwdBlockKv * kSwizzleRowBytes;
  static constexpr int kQChunkBytes = kBlockQ * kSwizzleRowBytes;
  static constexpr int kKvTileBytes = kChunks * kKvChunkBytes;
  static constexpr int kQTileBytes = kChunks * kQChunkBytes;
  // dS^T for the dQ GEMM. Two buffers: the warpgroups read each other's rows, and the other's
  // previous step's dQ GEMM may still be reading one. Transposed: dS as [query][key], two
  // 64-key chunks of [kBlockQ queries][64 halves] (the K-major B of dQ^T; as [key][query] the
  // 80 queries would not be a whole number of 64-element swizzle rows). Otherwise dS^T as
  // [key][query], 64-query chunks of [128 keys][64 halves] (the M-major A of dQ = dS K).
  static constexpr bool kTransposed = kSplit == DqSplit::kTransposed;
  static constexpr int kDsChunkBytes = (kTransposed ? kBlockQ : kV3BwdBlockKv) * kSwizzleRowBytes;
  static constexpr int kDsBytes = kDsChunkBytes * (kTransposed ? kV3BwdBlockKv / 64 : kQHalves);
  static constexpr int kDsBuffers = 2;
  static constexpr int kVecBytes = kBlockQ * 4;  // one LSE or D slice
  // Slices 128 bytes apart: a bulk tensor copy writes to a 128-byte aligned shared address (80
  // queries are 320 bytes).
  static constexpr int kVecStride = (kVecBytes + 127) / 128 * 128;
  static constexpr int kOffK = 0;
  static constexpr int kOffV = kOffK + kKvTileBytes;
  static constexpr int kOffQ = kOffV + kKvTileBytes;
  static constexpr int kOffDo = kOffQ + kStages * kQTileBytes;
  static constexpr int kOffDs = kOffDo + kStages * kQTileBytes;
  // dQ staging for the bulk reduce-add, per consumer warpgroup. Transposed: its 64 x kBlockQ
  // FP32 accumulator in fragment order (float4 j of thread t at 16·(128·j + t) bytes), added
  // by one non-tensor bulk reduction. Query halves: kDqRows rows x 64 FP32 columns as two
  // [kDqRows rows][32 floats] boxes, 128B-swizzled, added by bulk tensor reductions.
  static constexpr int kDqBoxBytes = kDqRows * kSwizzleRowBytes;
  static constexpr int kDqStageBytes = kTransposed ? 64 * kBlockQ * 4 : 2 * kDqBoxBytes;
  static constexpr int kOffDqStage = kOffDs + kDsBuffers * kDsBytes;
  // The LSE and D slices (unswizzled) after every swizzled tile, so that their size does not
  // move a tile off its 1024-byte alignment.
  static constexpr int kOffLse = kOffDqStage + 2 * kDqStageBytes;
  static constexpr int kOffDrow = kOffLse + kStages * kVecStride;
  static constexpr int kOffBarriers = kOffDrow + kStages * kVecStride;
  // K/V full and empty, then the query stages' full and empty.
  static constexpr int kNumBarriers = 2 + 2 * kStages;
  // The work item of each use of K/V (two slots, alternating), -1 when there is none left.
  static constexpr int kOffSlots = kOffBarriers + 8 * kNumBarriers;
  // + 1024: the dynamic shared memory base is only 16-byte aligned; the kernel rounds it up.
  static constexpr int kSmemBytes = kOffSlots + 2 * 4 + 1024;
  static constexpr unsigned kStageTxBytes = 2 * kQTileBytes + 2 * kVecBytes;
  static constexpr unsigned kKvTxBytes = 2 * kKvTileBytes;
  static_assert(kSmemBytes <= 227 * 1024, "fits the per-block shared memory of sm_90");
  // 128-byte swizzled TMA tiles (K, V, Q, dO, dS^T, the dQ staging) start on 1024-byte
  // boundaries, or the swizzle the kernel writes is not the one the bulk copy reads.
  static_assert(kOffQ % 1024 == 0 && kOffDo % 1024 == 0 && kOffDs % 1024 == 0 &&
                    kOffDqStage % 1024 == 0 && kDqStageBytes % 1024 == 0 &&
                    kQChunkBytes % 1024 == 0 && kDsChunkBytes % 1024 == 0,
                "swizzled tiles are 1024-byte aligned");
  static_assert(kOffLse % 128 == 0 && kOffDrow % 128 == 0, "TMA destinations are 128-byte aligned");
};

template <typename T>
struct V3BwdParams {
  T* d_k;
  T* d_v;
  // Work items, in the order they are handed out: t -> head t / num_kv_blocks, key block
  // t % num_kv_blocks (the longest causal blocks of a head first).
  int num_kv_blocks;
  int total_items;
  // A counter, zeroed by the preprocess kernel, that hands the next work item to whichever CTA
  // asks; nullptr when there is one CTA per item: CTA c takes item c.
  unsigned* next_item;
  // The FP32 dQ accumulator, for the transposed split's non-tensor reductions (DqSplit): per
  // head and query stage two blocks (64 columns each) in that split's fragment order.
  float* dq_accum;
  int seq_len;
  int n_pad;  // seq_len rounded up to the stage's queries (v3_bwd_block_q)
  float scale;
  float scale_log2;
};

// Work item t: its key block and head, the first query tile and the number of query stages.
struct V3BwdItem {
  int kv0, head, first_q_tile, steps;
};
template <int kHeadDim, bool kCausal, typename T>
__device__ __forceinline__ V3BwdItem v3_bwd_item(const V3BwdParams<T>& p, int t) {
  constexpr int kBlockQ = v3_bwd_block_q(kHeadDim);
  const int head = t / p.num_kv_blocks;
  const int kv0 = (t - head * p.num_kv_blocks) * kV3BwdBlockKv;
  const int first_q_tile = kCausal ? kv0 / kBlockQ : 0;
  return V3BwdItem{kv0, head, first_q_tile, p.n_pad / kBlockQ - first_q_tile};
}

#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define ROOFLINE_V3BWD_DEVICE 1
#endif

}  // namespace
}  // namespace roofline::kernels
