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
// dQ strategy: dQ = dS K over all 128 keys of the CTA, staged as FP32 in shared memory
// (128-byte swizzled, columns permuted: dq_accum_column) and added to a padded FP32 workspace by
// one thread with bulk tensor reductions (cp.reduce.async.bulk.tensor .add), then one
// conversion kernel. Measured on the H200 against per-thread float2 atomics of the same tile,
// same binary: 484 against 400 TFLOP/s at B4 H16 N16384 d128, 352 against 300 at B1 H8 N16384
// d64 (NOTES.md "flash-v3 backward"). The consumer warpgroups meet at a named barrier for each
// other's dS^T rows, so that each dQ element is added once per CTA (DqSplit): at d = 64 (128
// queries a stage) each takes its own 64 queries; at d = 128 (80 queries, not a wgmma M) each
// computes dQ^T = K^T dS^T for its own 64 of the d columns, with dS stored as [query][key] by
// stmatrix .trans, and adds it, staged in its fragment order, with one non-tensor bulk reduction
// into an accumulator kept in that order (flash_v3_bwd_convert_dq_fragments maps it back);
// dK += dS^T Q is issued after dQ^T, so that the staging runs beside it. Against 64-query stages
// with dQ by turns (one warpgroup the whole 64 x 128 tile, alternating), same binary (H200,
// 2026-12-01): without a mask +1.6-2.3% at N 8192-16384 with dK still first, then +6-7.5% from
// dK after dQ^T; causal +5.5-7% at N 8192-16384, +3% at N 3000, -2.5% at B8 H16 N1024. dK after
// dQ by turns was 21-31% slower (the turns path was removed). Why not a separate dQ pass: it
// recomputes S and dP (7 GEMMs instead of 5).
//
// Causal: query tiles wholly before the key block are never loaded; a warpgroup whose 64 keys
// all follow the tile's last query skips its four GEMMs and publishes zeros for dS^T; masks
// are applied only on tiles that cross the diagonal or the key tail. Any N: TMA zero-fills
// rows past the end; padded LSE makes those queries' P zero; keys past the end are masked.
// d = 64 and 128 only: every tile here is built from 128-byte swizzled rows of 64 halves, and
// d = 32 (64-byte rows) would need the 64-byte-swizzle variant of each operand layout.
//
// Regime: compute-bound on the wgmma tensor ceiling at large N; the elementwise softmax
// gradient between the two GEMM pairs and the dQ staging and reductions are the extra costs.
// What limits it now: ncu's source counters on the 80-query kernel before dK moved after dQ^T
// (B1 H16 N16384 d128 full, H200, 2026-12-01, `v3_check.sh stalls`) put 10% of the warps'
// stall samples (reason: barrier) on the wait for the dQ^T GEMM just after the first staging
// barrier, when neither warpgroup had another GEMM in flight; the staging's proxy fence
// and second barrier 6%; FFMA and MUFU.EX2 (the exponentials) 20%. Issuing dK after dQ^T, so
// that the staging runs beside it, then gained 6-7.5%. The dQ reduction costs up to 4%: left out
// (a timing experiment, dQ wrong) the kernel ran 3.5-4% faster. Two timing experiments found
// nothing to gain: not waiting for the previous reduction to have read the staging, and the
// dQ^T GEMM in two 40-query halves, the first staged while the second runs (within 1%).
// Causal d = 128 at N 8192 (`run --counter-set full`, H200, 2026-12-01): with 64-query stages
// (B4 H32) the roofline put it on the L1/shared-memory roof (shared wavefronts, wgmma's operand
// reads included) at 47% of that bound; with 80 (B2 H16) it is compute-bound on the wgmma roof
// at 56% (63% without a mask), wgmma's shared wavefronts per FLOP 7.6% fewer; its next lever,
// as the tool reads it, is latency (the exposed waits above).
#include <algorithm>
#include <cstdint>

#include <cuda.h>

#include "kernels/catalog.hpp"
#include "kernels/common.cuh"
#include "kernels/hopper/sm90.cuh"
#include "kernels/hopper/tensor_map.hpp"
#include "kernels/launchers.hpp"
#include "kernels/mma.cuh"

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

#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define ROOFLINE_V3BWD_DEVICE 1
#endif

// ---- kernels ----

constexpr int kPrepThreads = 256;

// One group of kHeadDim/8 lanes per padded row: D, LSE·log2(e) (or 0 and +inf past seq_len)
// and a zeroed dQ accumulator row; the first thread also zeroes the main kernel's work counter.
template <typename T, int kHeadDim>
__global__ void __launch_bounds__(kPrepThreads)
    flash_v3_bwd_prepare(const T* __restrict__ o, const T* __restrict__ d_o,
                         const float* __restrict__ lse, float* __restrict__ lse_log2,
                         float* __restrict__ d_rowsum, float* __restrict__ dq_accum,
                         unsigned* __restrict__ next_item, long long padded_rows, int seq_len,
                         int n_pad) {
  if (blockIdx.x == 0 && threadIdx.x == 0) *next_item = 0u;
  constexpr int kLanesPerRow = kHeadDim / 8;
  constexpr int kRowsPerBlock = kPrepThreads / kLanesPerRow;
  const long long row =
      static_cast<long long>(blockIdx.x) * kRowsPerBlock + threadIdx.x / kLanesPerRow;
  const int lane_in_row = threadIdx.x % kLanesPerRow;
  const long long head = row / n_pad;
  const int i = static_cast<int>(row - head * n_pad);
  const bool real = row < padded_rows && i < seq_len;
  float partial = 0.f;
  if (real) {
    const std::size_t offset =
        (static_cast<std::size_t>(head) * seq_len + i) * kHeadDim + lane_in_row * 8;
    Pack8 a, b;
    a.vec = *reinterpret_cast<const uint4*>(o + offset);
    b.vec = *reinterpret_cast<const uint4*>(d_o + offset);
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      const float2 fa = unpack_pair<T>(a, k);
      const float2 fb = unpack_pair<T>(b, k);
      partial = fmaf(fa.x, fb.x, fmaf(fa.y, fb.y, partial));
    }
  }
  if (row < padded_rows) {
    float4* accum = reinterpret_cast<float4*>(dq_accum + static_cast<std::size_t>(row) * kHeadDim +
                                              lane_in_row * 8);
    accum[0] = make_float4(0.f, 0.f, 0.f, 0.f);
    accum[1] = make_float4(0.f, 0.f, 0.f, 0.f);
  }
  // Every lane of the warp takes part in the reduction (no early return above).
  partial = group_sum<kLanesPerRow>(partial);
  if (row < padded_rows && lane_in_row == 0) {
    d_rowsum[row] = partial;
    lse_log2[row] = real ? lse[static_cast<std::size_t>(head) * seq_len + i] * kLog2e : INFINITY;
  }
}

// The FP32 dQ accumulator keeps the columns of each 32-column block (one 128-byte swizzled box
// of the staging) permuted: logical column 8m + 4a + r (m < 4, a < 2, r < 4) at 16a + 4m + r.
// A warpgroup's accumulator fragment (lane = 4g + q holds columns 8m + 2q, +1 of row g) then
// stages without bank conflicts: the 16 lanes of each half-warp store their 8-byte pairs to 16
// different bank pairs (in logical order, lanes q and q + 2 of rows g and g ^ 2 meet in the same
// bank: ncu counted 4 wavefronts per 64-bit store for the ideal 2). Against the columns in order,
// same binary: 4-6% faster at every backward row measured (H200, 2026-12-01).
__host__ __device__ constexpr int dq_accum_column(int col) {
  const int c = col & 31;
  return (col & ~31) + 16 * ((c >> 2) & 1) + 4 * (c >> 3) + (c & 3);
}
// A permutation of each 32-column block that keeps every float2 (and the float4s the conversion
// reads) contiguous.
constexpr bool dq_accum_column_is_a_block_permutation() {
  bool seen[128] = {};
  for (int col = 0; col < 128; ++col) {
    const int stored = dq_accum_column(col);
    if (stored / 32 != col / 32 || seen[stored]) return false;
    if (col % 2 == 1 && stored != dq_accum_column(col - 1) + 1) return false;
    if (col % 4 != 0 && stored != dq_accum_column(col - col % 4) + col % 4) return false;
    seen[stored] = true;
  }
  return true;
}
static_assert(dq_accum_column_is_a_block_permutation() && dq_accum_column(4) == 16 &&
                  dq_accum_column(8) == 4 && dq_accum_column(45) == 53,
              "the permutation of the accumulator's columns");

// dQ = T(scale · accumulator) for the rows < seq_len of each head; 8 values per thread.
template <typename T>
__global__ void flash_v3_bwd_convert_dq(const float* __restrict__ dq_accum, T* __restrict__ d_q,
                                        long long vectors, int head_dim, int seq_len, int n_pad,
                                        float scale) {
  const int vectors_per_row = head_dim / 8;
  for (long long v = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; v < vectors;
       v += static_cast<long long>(gridDim.x) * blockDim.x) {
    const long long row = v / vectors_per_row;  // over B*H*seq_len
    const int c = static_cast<int>(v - row * vectors_per_row) * 8;
    const long long head = row / seq_len;
    const long long i = row - head * seq_len;
    // Logical columns c .. c + 3 and c + 4 .. c + 7, four apart when stored (dq_accum_column).
    const float* src = dq_accum + (head * n_pad + i) * head_dim;
    const float4 lo = *reinterpret_cast<const float4*>(src + dq_accum_column(c));
    const float4 hi = *reinterpret_cast<const float4*>(src + dq_accum_column(c + 4));
    uint4 packed;
    packed.x = pack2<T>(lo.x * scale, lo.y * scale);
    packed.y = pack2<T>(lo.z * scale, lo.w * scale);
    packed.z = pack2<T>(hi.x * scale, hi.y * scale);
    packed.w = pack2<T>(hi.z * scale, hi.w * scale);
    *reinterpret_cast<uint4*>(d_q + row * head_dim + c) = packed;
  }
}

// The transposed split's fragment order (DqSplit::kTransposed) of one 64-column block of a
// stage: float4 v is float4 j = v / 128 of consumer thread t = v % 128's dQ^T accumulator (the
// wgmma D layout of sm90.cuh, rows being columns of dQ): (column, query), (column, query + 1),
// (column + 8, query), (column + 8, query + 1) with the column and query below. The staging
// writes float4 j of thread t at v = 128·j + t.
struct DqFragment {
  int column, query;
};
__host__ __device__ constexpr DqFragment dq_fragment(int v) {
  const int t = v % 128;
  return {16 * (t / 32) + (t % 32) / 4, 8 * (v / 128) + 2 * (t % 4)};
}
// The 16·kBlockQ float4s hold each (column, query) of the 64 x kBlockQ block once.
template <int kBlockQ>
constexpr bool dq_fragment_order_covers_the_block() {
  bool seen[64 * kBlockQ] = {};
  for (int v = 0; v < 16 * kBlockQ; ++v) {
    for (int e = 0; e < 4; ++e) {
      const int column = dq_fragment(v).column + 8 * (e / 2);
      const int query = dq_fragment(v).query + e % 2;
      if (column >= 64 || query >= kBlockQ || seen[query * 64 + column]) return false;
      seen[query * 64 + column] = true;
    }
  }
  return true;
}
static_assert(dq_fragment_order_covers_the_block<80>(), "the fragment order of an 80-query stage");

// dQ = T(scale · accumulator) from the transposed split's fragment order: one block per head and
// stage of kBlockQ queries, holding its two 64-column blocks one after the other (dq_fragment).
// The block goes through shared memory as [query][column] (rows of 132 floats: the scatter's
// lanes hit 32 different banks) so that dQ is read and written in whole rows.
template <typename T, int kBlockQ>
__global__ void __launch_bounds__(256)
    flash_v3_bwd_convert_dq_fragments(const float* __restrict__ dq_accum, T* __restrict__ d_q,
                                      int seq_len, int q_tiles, float scale) {
  constexpr int kHeadDim = 128;
  constexpr int kRow = kHeadDim + 4;
  constexpr int kVectors = kHeadDim * kBlockQ / 4;  // float4s of the stage, both column blocks
  __shared__ alignas(16) float tile[kBlockQ * kRow];
  const long long block = blockIdx.x;  // head * q_tiles + stage
  const float4* src = reinterpret_cast<const float4*>(dq_accum) + block * kVectors;
  for (int v = threadIdx.x; v < kVectors; v += blockDim.x) {
    const DqFragment f = dq_fragment(v % (16 * kBlockQ));
    const int column = 64 * (v / (16 * kBlockQ)) + f.column;
    const int query = f.query;
    const float4 x = src[v];
    tile[query * kRow + column] = x.x;
    tile[(query + 1) * kRow + column] = x.y;
    tile[query * kRow + column + 8] = x.z;
    tile[(query + 1) * kRow + column + 8] = x.w;
  }
  __syncthreads();
  const long long head = block / q_tiles;
  const int q_base = static_cast<int>(block - head * q_tiles) * kBlockQ;
  for (int v = threadIdx.x; v < kBlockQ * kHeadDim / 8; v += blockDim.x) {
    const int query = v / (kHeadDim / 8);
    const int c = (v % (kHeadDim / 8)) * 8;
    if (q_base + query >= seq_len) continue;
    const float4 lo = *reinterpret_cast<const float4*>(tile + query * kRow + c);
    const float4 hi = *reinterpret_cast<const float4*>(tile + query * kRow + c + 4);
    uint4 packed;
    packed.x = pack2<T>(lo.x * scale, lo.y * scale);
    packed.y = pack2<T>(lo.z * scale, lo.w * scale);
    packed.z = pack2<T>(hi.x * scale, hi.y * scale);
    packed.w = pack2<T>(hi.z * scale, hi.w * scale);
    *reinterpret_cast<uint4*>(d_q + (head * seq_len + q_base + query) * kHeadDim + c) = packed;
  }
}

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
        // so that P is computed while dP is still on the tensor cores. Issuing the next step's
        // S^T before this step's dQ tile is staged, to overlap the two, measured 8-10% slower at
        // d = 128 with two or three stages (H200, 2026-12-01): see NOTES.md.
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
        // Reading the LSE and D slices into registers before the waits measured 2-6% slower
        // (H200, 2026-12-01, same binary).
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
        // dK after dQ^T, so that dQ^T is staged while dK runs on the tensor cores: against dK
        // first (both warpgroups staging with no GEMM in flight), same binary: +6-7.5% at N 8192
        // and 16384, +5.5% at N 3000 (H200, 2026-12-01). Q, dO, LSE and D of the stage are
        // released once dK is done, after the reduction is issued. Issued on causal steps whose
        // dS^T is zero (!active) too: a wgmma behind a branch here, with the accumulator read
        // before the wait for it, made ptxas serialise every wgmma of the kernel (warning
        // C7514): 5-12% slower.
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
      // is known to be free: it reads only dS^T and K. Once dK (the group before it) is done, Q,
      // dO, LSE and D of this stage are no longer read. Against issuing it after that wait, same
      // binary: +1-3% (H200, 2026-12-01).
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
  // blocks one after the other, the long causal ones (small kv0) first. Every head's longest
  // blocks before any head's shorter ones instead measured 2-28% slower except at B16 H8 N1024
  // causal (+4%) (H200, 2026-12-01, same binary, one CTA per item).
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
