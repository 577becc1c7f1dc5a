// flash-v3 backward's pre- and post-processing kernels around the main one: the row terms D and
// LSE·log2(e) with the zeroed dQ accumulator and work counter before it, and dQ converted from
// the FP32 accumulator to the element type after it. Included by flash_v3_bwd.cu alone (after
// v3_bwd_config.cuh).
#pragma once

#include <cstdint>

#include "kernels/common.cuh"
#include "kernels/hopper/sm90.cuh"
#include "kernels/hopper/v3_bwd_config.cuh"
#include "kernels/mma.cuh"

namespace roofline::kernels {
namespace {

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

}  // namespace
}  // namespace roofline::kernels
