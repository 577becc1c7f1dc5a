// flash-v1: the baseline fused attention of the FlashAttention paper, on CUDA cores in FP32.
//
// What it demonstrates: tiling plus the online softmax removes the N x N matrices from device
// memory, without any tensor-core help. It is the yardstick the tensor-core kernel is compared
// against and the kernel to read first.
//
// Tiling: 256 threads as a 16 x 16 grid; every tile is 64 x 64 and each thread owns a 4 x 4
// block of it (rows ty*4.., columns tx*4..), so one row's statistics live in 16 lanes of one
// half-warp and reduce with shuffles. Tiles are converted to FP32 when staged in shared memory;
// operands that are read along a column (K and V in the score GEMMs) are stored transposed so
// that every inner-loop read is a conflict-free float4.
//   forward: one CTA per 64 query rows; K/V tiles of 64 keys stream through shared memory.
//   backward: D = rowsum(dO ∘ O); one CTA per 64 keys accumulates dK, dV over the query tiles;
//   a second kernel, one CTA per 64 query rows, accumulates dQ over the key tiles (no atomics,
//   so the result is deterministic). P and dS are recomputed from the saved LSE.
// Causal masking skips tiles wholly above the diagonal.
//
// Regime: compute-bound on the FP32 CUDA-core ceiling at large N (its DRAM traffic is O(N·d)
// per query tile, like flash-v2), and far below the tensor ceiling: the gap between the two
// ceilings is the point of the comparison.
// Where it lands today (regime, binding roof, share of it, advice), row by row:
//   cuflash-roofline run --kernel flash-v1 --pass fwd,bwd --seq 16384 --counter-set full
#include <cfloat>

#include "kernels/catalog.hpp"
#include "kernels/common.cuh"
#include "kernels/launchers.hpp"

namespace roofline::kernels {
namespace {

constexpr int kThreads = 256;
constexpr int kTile = 64;               // rows of Q and of K/V per tile
constexpr int kTileStride = kTile + 4;  // floats; keeps float4 alignment, shifts rows 16 banks

template <int kHeadDim>
struct V1Layout {
  static constexpr int kRowStride = kHeadDim + 4;          // floats per row of a [64][d] tile
  static constexpr int kRowTile = kTile * kRowStride;      // a [64][d] tile
  static constexpr int kColTile = kHeadDim * kTileStride;  // a transposed [d][64] tile
  static constexpr int kSquare = kTile * kTileStride;      // a [64][64] tile
  // Each thread owns kCols output columns: kGroups groups of kVec adjacent columns, one group
  // per 16 * kVec columns, so a half-warp reads whole contiguous rows.
  static constexpr int kCols = kHeadDim / 16;
  static constexpr int kVec = kCols < 4 ? kCols : 4;
  static constexpr int kGroups = kCols / kVec;
};

struct V1Params {
  const __half* q;
  const __half* k;
  const __half* v;
  const __half* o;
  __half* o_out;
  float* lse;
  const __half* d_o;
  const float* d_rowsum;
  __half* d_q;
  __half* d_k;
  __half* d_v;
  int seq_len;
  float scale;
};

// Column of the c-th output value owned by a thread with column index tx.
template <int kHeadDim>
__device__ __forceinline__ int owned_column(int tx, int group) {
  using L = V1Layout<kHeadDim>;
  return group * 16 * L::kVec + tx * L::kVec;
}

// rows [row0, row0 + 64) of a [n][d] FP16 matrix -> FP32 [64][kRowStride], times `scale`;
// rows past n are zero.
template <int kHeadDim>
__device__ __forceinline__ void load_rows(float* dst, const __half* src, int row0, int n,
                                          float scale) {
  constexpr int kChunksPerRow = kHeadDim / 8;
  for (int chunk = threadIdx.x; chunk < kTile * kChunksPerRow; chunk += kThreads) {
    const int r = chunk / kChunksPerRow;
    const int c = (chunk % kChunksPerRow) * 8;
    Half8 h;
    h.vec = make_uint4(0, 0, 0, 0);
    if (row0 + r < n) {
      h.vec =
          *reinterpret_cast<const uint4*>(src + static_cast<std::size_t>(row0 + r) * kHeadDim + c);
    }
    float* out = dst + r * V1Layout<kHeadDim>::kRowStride + c;
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const float2 f = __half22float2(h.h2[i]);
      out[2 * i] = f.x * scale;
      out[2 * i + 1] = f.y * scale;
    }
  }
}

// rows [row0, row0 + 64) of a [n][d] FP16 matrix -> FP32 transposed [d][kTileStride]. Lanes
// take consecutive rows so that the transposed stores hit consecutive banks.
template <int kHeadDim>
__device__ __forceinline__ void load_rows_transposed(float* dst, const __half* src, int row0,
                                                     int n) {
  for (int chunk = threadIdx.x; chunk < kTile * (kHeadDim / 8); chunk += kThreads) {
    const int r = chunk % kTile;
    const int c = (chunk / kTile) * 8;
    Half8 h;
    h.vec = make_uint4(0, 0, 0, 0);
    if (row0 + r < n) {
      h.vec =
          *reinterpret_cast<const uint4*>(src + static_cast<std::size_t>(row0 + r) * kHeadDim + c);
    }
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const float2 f = __half22float2(h.h2[i]);
      dst[(c + 2 * i) * kTileStride + r] = f.x;
      dst[(c + 2 * i + 1) * kTileStride + r] = f.y;
    }
  }
}

// acc[a][b] = sum_k rows[(ty*4+a)][k] * cols_t[k][tx*4+b]: a 64 x 64 tile of A·B^T with A
// row-major and B stored transposed.
template <int kHeadDim>
__device__ __forceinline__ void tile_gemm_nt(float (&acc)[4][4], const float* rows,
                                             const float* cols_t, int ty, int tx) {
  constexpr int kStride = V1Layout<kHeadDim>::kRowStride;
#pragma unroll
  for (int a = 0; a < 4; ++a) acc[a][0] = acc[a][1] = acc[a][2] = acc[a][3] = 0.f;
#pragma unroll 4
  for (int k = 0; k < kHeadDim; k += 4) {
    float4 r[4];
    float4 c[4];
#pragma unroll
    for (int a = 0; a < 4; ++a)
      r[a] = *reinterpret_cast<const float4*>(rows + (ty * 4 + a) * kStride + k);
#pragma unroll
    for (int i = 0; i < 4; ++i)
      c[i] = *reinterpret_cast<const float4*>(cols_t + (k + i) * kTileStride + tx * 4);
#pragma unroll
    for (int a = 0; a < 4; ++a) {
      const float rk[4] = {r[a].x, r[a].y, r[a].z, r[a].w};
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        acc[a][0] = fmaf(rk[i], c[i].x, acc[a][0]);
        acc[a][1] = fmaf(rk[i], c[i].y, acc[a][1]);
        acc[a][2] = fmaf(rk[i], c[i].z, acc[a][2]);
        acc[a][3] = fmaf(rk[i], c[i].w, acc[a][3]);
      }
    }
  }
}

// acc[a][c] += sum_j weights[j][rows a] * values[j][owned columns c] where the thread's 4 rows
// are `row_base + a`. `weights_by_row` selects the layout of the 64 x 64 weights:
//   true:  weights[row][j] (row-major, e.g. P for O = P V)
//   false: weights[j][row] (e.g. P for dV = P^T dO, read without a transpose)
template <int kHeadDim, bool kWeightsByRow>
__device__ __forceinline__ void tile_accumulate(float (&acc)[4][V1Layout<kHeadDim>::kCols],
                                                const float* weights, const float* values,
                                                int row_base, int tx) {
  using L = V1Layout<kHeadDim>;
#pragma unroll 4
  for (int j = 0; j < kTile; ++j) {
    float w[4];
    if constexpr (kWeightsByRow) {
#pragma unroll
      for (int a = 0; a < 4; ++a) w[a] = weights[(row_base + a) * kTileStride + j];
    } else {
      const float4 w4 = *reinterpret_cast<const float4*>(weights + j * kTileStride + row_base);
      w[0] = w4.x;
      w[1] = w4.y;
      w[2] = w4.z;
      w[3] = w4.w;
    }
#pragma unroll
    for (int g = 0; g < L::kGroups; ++g) {
      const float* src = values + j * L::kRowStride + owned_column<kHeadDim>(tx, g);
      float vals[L::kVec];
      if constexpr (L::kVec == 4) {
        const float4 v4 = *reinterpret_cast<const float4*>(src);
        vals[0] = v4.x;
        vals[1] = v4.y;
        vals[2] = v4.z;
        vals[3] = v4.w;
      } else {
        const float2 v2 = *reinterpret_cast<const float2*>(src);
        vals[0] = v2.x;
        vals[1] = v2.y;
      }
#pragma unroll
      for (int a = 0; a < 4; ++a) {
#pragma unroll
        for (int i = 0; i < L::kVec; ++i) {
          acc[a][g * L::kVec + i] = fmaf(w[a], vals[i], acc[a][g * L::kVec + i]);
        }
      }
    }
  }
}

// Writes the thread's 4 rows x kCols values (times `scale`) as FP16 for rows < n.
template <int kHeadDim>
__device__ __forceinline__ void store_rows(__half* dst,
                                           const float (&acc)[4][V1Layout<kHeadDim>::kCols],
                                           int row0, int n, int ty, int tx, float scale) {
  using L = V1Layout<kHeadDim>;
#pragma unroll
  for (int a = 0; a < 4; ++a) {
    const int row = row0 + ty * 4 + a;
    if (row >= n) continue;
#pragma unroll
    for (int g = 0; g < L::kGroups; ++g) {
      __half* out = dst + static_cast<std::size_t>(row) * kHeadDim + owned_column<kHeadDim>(tx, g);
#pragma unroll
      for (int i = 0; i < L::kVec; i += 2) {
        *reinterpret_cast<uint32_t*>(out + i) =
            pack_half2(acc[a][g * L::kVec + i] * scale, acc[a][g * L::kVec + i + 1] * scale);
      }
    }
  }
}

template <int kHeadDim, bool kCausal>
__global__ void __launch_bounds__(kThreads, 1) flash_v1_forward_kernel(const V1Params p) {
  using L = V1Layout<kHeadDim>;
  extern __shared__ __align__(16) float smem[];
  float* s_q = smem;                // [64][d], pre-multiplied by the softmax scale
  float* s_kt = s_q + L::kRowTile;  // [d][64]
  float* s_v = s_kt + L::kColTile;  // [64][d]
  float* s_p = s_v + L::kRowTile;   // [64][64]

  const int n = p.seq_len;
  const int tx = threadIdx.x % 16;
  const int ty = threadIdx.x / 16;
  const int num_q_tiles = ceil_div(n, kTile);
  const int q0 = (kCausal ? num_q_tiles - 1 - static_cast<int>(blockIdx.x) : blockIdx.x) * kTile;
  const std::size_t head = static_cast<std::size_t>(blockIdx.y) * n;
  const __half* k = p.k + head * kHeadDim;
  const __half* v = p.v + head * kHeadDim;

  load_rows<kHeadDim>(s_q, p.q + head * kHeadDim, q0, n, p.scale);

  float o[4][L::kCols] = {};
  float row_max[4];
  float row_sum[4];  // this thread's share of the row; the half-warp is summed at the end
#pragma unroll
  for (int a = 0; a < 4; ++a) {
    row_max[a] = -INFINITY;
    row_sum[a] = 0.f;
  }

  const int kv_end = kCausal ? min(n, q0 + kTile) : n;
  for (int kv0 = 0; kv0 < kv_end; kv0 += kTile) {
    __syncthreads();  // the previous tile's K, V and P are no longer read
    load_rows_transposed<kHeadDim>(s_kt, k, kv0, n);
    load_rows<kHeadDim>(s_v, v, kv0, n, 1.f);
    __syncthreads();

    float s[4][4];
    tile_gemm_nt<kHeadDim>(s, s_q, s_kt, ty, tx);
    if (kv0 + kTile > n || (kCausal && kv0 + kTile - 1 > q0)) {
#pragma unroll
      for (int a = 0; a < 4; ++a) {
#pragma unroll
        for (int b = 0; b < 4; ++b) {
          const int key = kv0 + tx * 4 + b;
          if (key >= n || (kCausal && key > q0 + ty * 4 + a)) s[a][b] = -INFINITY;
        }
      }
    }

#pragma unroll
    for (int a = 0; a < 4; ++a) {
      const float tile_max = group_max<16>(fmaxf(fmaxf(s[a][0], s[a][1]), fmaxf(s[a][2], s[a][3])));
      const float new_max = fmaxf(row_max[a], tile_max);
      // Rows with every key so far masked keep -inf; shifting by 0 avoids inf - inf.
      const float shift = new_max == -INFINITY ? 0.f : new_max;
      const float correction = __expf(row_max[a] - shift);
      row_max[a] = new_max;
      float4 probs;
      probs.x = __expf(s[a][0] - shift);
      probs.y = __expf(s[a][1] - shift);
      probs.z = __expf(s[a][2] - shift);
      probs.w = __expf(s[a][3] - shift);
      row_sum[a] = row_sum[a] * correction + (probs.x + probs.y) + (probs.z + probs.w);
#pragma unroll
      for (int c = 0; c < L::kCols; ++c) o[a][c] *= correction;
      *reinterpret_cast<float4*>(s_p + (ty * 4 + a) * kTileStride + tx * 4) = probs;
    }
    __syncthreads();
    tile_accumulate<kHeadDim, true>(o, s_p, s_v, ty * 4, tx);
  }

  float inv_sum[4];
#pragma unroll
  for (int a = 0; a < 4; ++a) {
    row_sum[a] = group_sum<16>(row_sum[a]);
    inv_sum[a] = row_sum[a] > 0.f ? 1.f / row_sum[a] : 0.f;
#pragma unroll
    for (int c = 0; c < L::kCols; ++c) o[a][c] *= inv_sum[a];
  }
  store_rows<kHeadDim>(p.o_out + head * kHeadDim, o, q0, n, ty, tx, 1.f);
  if (tx == 0) {
#pragma unroll
    for (int a = 0; a < 4; ++a) {
      const int row = q0 + ty * 4 + a;
      if (row < n) p.lse[head + row] = row_max[a] + logf(row_sum[a]);
    }
  }
}

// P and dS of one (query tile, key tile) pair, for the thread's 4 x 4 block: P = exp(S·scale -
// lse) masked to 0, dS = P (dP - D). Operands: Q and dO row-major, K and V transposed.
template <int kHeadDim, bool kCausal>
__device__ __forceinline__ void probabilities_and_grads(float (&prob)[4][4], float (&ds)[4][4],
                                                        const float* s_q, const float* s_do,
                                                        const float* s_kt, const float* s_vt,
                                                        const float (&lse)[4],
                                                        const float (&drow)[4], int q0, int kv0,
                                                        int n, float scale, int ty, int tx) {
  tile_gemm_nt<kHeadDim>(prob, s_q, s_kt, ty, tx);
  tile_gemm_nt<kHeadDim>(ds, s_do, s_vt, ty, tx);
  const bool needs_mask = q0 + kTile > n || kv0 + kTile > n || (kCausal && kv0 + kTile - 1 > q0);
#pragma unroll
  for (int a = 0; a < 4; ++a) {
    const int query = q0 + ty * 4 + a;
#pragma unroll
    for (int b = 0; b < 4; ++b) {
      const int key = kv0 + tx * 4 + b;
      float pr = __expf(fmaf(prob[a][b], scale, -lse[a]));
      if (needs_mask && (query >= n || key >= n || (kCausal && key > query))) pr = 0.f;
      prob[a][b] = pr;
      ds[a][b] = pr * (ds[a][b] - drow[a]);
    }
  }
}

// One CTA per 64 keys: dV = sum over query tiles of P^T dO, dK = scale · sum of dS^T Q.
template <int kHeadDim, bool kCausal>
__global__ void __launch_bounds__(kThreads, 1) flash_v1_backward_dkdv_kernel(const V1Params p) {
  using L = V1Layout<kHeadDim>;
  extern __shared__ __align__(16) float smem[];
  float* s_q = smem;                 // [64][d]
  float* s_do = s_q + L::kRowTile;   // [64][d]
  float* s_kt = s_do + L::kRowTile;  // [d][64]
  float* s_vt = s_kt + L::kColTile;  // [d][64]
  float* s_p = s_vt + L::kColTile;   // [64 queries][64 keys]
  float* s_ds = s_p + L::kSquare;    // [64 queries][64 keys]
  float* s_lse = s_ds + L::kSquare;  // [64]
  float* s_drow = s_lse + kTile;     // [64]

  const int n = p.seq_len;
  const int tx = threadIdx.x % 16;
  const int ty = threadIdx.x / 16;
  const int kv0 = blockIdx.x * kTile;
  const std::size_t head = static_cast<std::size_t>(blockIdx.y) * n;
  const __half* q = p.q + head * kHeadDim;
  const __half* d_o = p.d_o + head * kHeadDim;

  load_rows_transposed<kHeadDim>(s_kt, p.k + head * kHeadDim, kv0, n);
  load_rows_transposed<kHeadDim>(s_vt, p.v + head * kHeadDim, kv0, n);

  float dk[4][L::kCols] = {};
  float dv[4][L::kCols] = {};
  // Query tiles wholly before the key tile see none of its keys under causal masking.
  const int q_start = kCausal ? kv0 / kTile * kTile : 0;
  for (int q0 = q_start; q0 < n; q0 += kTile) {
    __syncthreads();
    load_rows<kHeadDim>(s_q, q, q0, n, 1.f);
    load_rows<kHeadDim>(s_do, d_o, q0, n, 1.f);
    if (threadIdx.x < kTile) {
      const int row = q0 + threadIdx.x;
      s_lse[threadIdx.x] = row < n ? p.lse[head + row] : 0.f;
      s_drow[threadIdx.x] = row < n ? p.d_rowsum[head + row] : 0.f;
    }
    __syncthreads();

    float lse[4];
    float drow[4];
#pragma unroll
    for (int a = 0; a < 4; ++a) {
      lse[a] = s_lse[ty * 4 + a];
      drow[a] = s_drow[ty * 4 + a];
    }
    float prob[4][4];
    float ds[4][4];
    probabilities_and_grads<kHeadDim, kCausal>(prob, ds, s_q, s_do, s_kt, s_vt, lse, drow, q0, kv0,
                                               n, p.scale, ty, tx);
#pragma unroll
    for (int a = 0; a < 4; ++a) {
      *reinterpret_cast<float4*>(s_p + (ty * 4 + a) * kTileStride + tx * 4) =
          make_float4(prob[a][0], prob[a][1], prob[a][2], prob[a][3]);
      *reinterpret_cast<float4*>(s_ds + (ty * 4 + a) * kTileStride + tx * 4) =
          make_float4(ds[a][0], ds[a][1], ds[a][2], ds[a][3]);
    }
    __syncthreads();
    // Here the thread's 4 rows are keys ty*4..: the weights are read down a column.
    tile_accumulate<kHeadDim, false>(dv, s_p, s_do, ty * 4, tx);
    tile_accumulate<kHeadDim, false>(dk, s_ds, s_q, ty * 4, tx);
  }
  store_rows<kHeadDim>(p.d_k + head * kHeadDim, dk, kv0, n, ty, tx, p.scale);
  store_rows<kHeadDim>(p.d_v + head * kHeadDim, dv, kv0, n, ty, tx, 1.f);
}

// One CTA per 64 query rows: dQ = scale · sum over key tiles of dS K.
template <int kHeadDim, bool kCausal>
__global__ void __launch_bounds__(kThreads, 1) flash_v1_backward_dq_kernel(const V1Params p) {
  using L = V1Layout<kHeadDim>;
  extern __shared__ __align__(16) float smem[];
  float* s_q = smem;                 // [64][d]
  float* s_do = s_q + L::kRowTile;   // [64][d]
  float* s_k = s_do + L::kRowTile;   // [64][d]
  float* s_kt = s_k + L::kRowTile;   // [d][64]
  float* s_vt = s_kt + L::kColTile;  // [d][64]
  float* s_ds = s_vt + L::kColTile;  // [64 queries][64 keys]

  const int n = p.seq_len;
  const int tx = threadIdx.x % 16;
  const int ty = threadIdx.x / 16;
  const int num_q_tiles = ceil_div(n, kTile);
  const int q0 = (kCausal ? num_q_tiles - 1 - static_cast<int>(blockIdx.x) : blockIdx.x) * kTile;
  const std::size_t head = static_cast<std::size_t>(blockIdx.y) * n;
  const __half* k = p.k + head * kHeadDim;
  const __half* v = p.v + head * kHeadDim;

  load_rows<kHeadDim>(s_q, p.q + head * kHeadDim, q0, n, 1.f);
  load_rows<kHeadDim>(s_do, p.d_o + head * kHeadDim, q0, n, 1.f);
  float lse[4];
  float drow[4];
#pragma unroll
  for (int a = 0; a < 4; ++a) {
    const int row = q0 + ty * 4 + a;
    lse[a] = row < n ? p.lse[head + row] : 0.f;
    drow[a] = row < n ? p.d_rowsum[head + row] : 0.f;
  }

  float dq[4][L::kCols] = {};
  const int kv_end = kCausal ? min(n, q0 + kTile) : n;
  for (int kv0 = 0; kv0 < kv_end; kv0 += kTile) {
    __syncthreads();
    load_rows<kHeadDim>(s_k, k, kv0, n, 1.f);
    load_rows_transposed<kHeadDim>(s_kt, k, kv0, n);
    load_rows_transposed<kHeadDim>(s_vt, v, kv0, n);
    __syncthreads();

    float prob[4][4];
    float ds[4][4];
    probabilities_and_grads<kHeadDim, kCausal>(prob, ds, s_q, s_do, s_kt, s_vt, lse, drow, q0, kv0,
                                               n, p.scale, ty, tx);
#pragma unroll
    for (int a = 0; a < 4; ++a) {
      *reinterpret_cast<float4*>(s_ds + (ty * 4 + a) * kTileStride + tx * 4) =
          make_float4(ds[a][0], ds[a][1], ds[a][2], ds[a][3]);
    }
    __syncthreads();
    tile_accumulate<kHeadDim, true>(dq, s_ds, s_k, ty * 4, tx);
  }
  store_rows<kHeadDim>(p.d_q + head * kHeadDim, dq, q0, n, ty, tx, p.scale);
}

template <int kHeadDim>
constexpr std::size_t forward_smem_bytes() {
  using L = V1Layout<kHeadDim>;
  return (2 * L::kRowTile + L::kColTile + L::kSquare) * sizeof(float);
}
template <int kHeadDim>
constexpr std::size_t dkdv_smem_bytes() {
  using L = V1Layout<kHeadDim>;
  return (2 * L::kRowTile + 2 * L::kColTile + 2 * L::kSquare + 2 * kTile) * sizeof(float);
}
template <int kHeadDim>
constexpr std::size_t dq_smem_bytes() {
  using L = V1Layout<kHeadDim>;
  return (3 * L::kRowTile + 2 * L::kColTile + L::kSquare) * sizeof(float);
}

template <typename Kernel>
cudaError_t launch_with_smem(Kernel kernel, dim3 grid, std::size_t smem_bytes, const V1Params& p,
                             cudaStream_t stream) {
  ROOFLINE_RETURN_IF_ERROR(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                                static_cast<int>(smem_bytes)));
  kernel<<<grid, kThreads, smem_bytes, stream>>>(p);
  return cudaGetLastError();
}

template <int kHeadDim, bool kCausal>
cudaError_t forward_for(const AttentionShape& shape, const V1Params& p, cudaStream_t stream) {
  const dim3 grid(ceil_div(shape.seq_len, kTile), shape.batch * shape.heads);
  return launch_with_smem(flash_v1_forward_kernel<kHeadDim, kCausal>, grid,
                          forward_smem_bytes<kHeadDim>(), p, stream);
}

template <int kHeadDim, bool kCausal>
cudaError_t backward_for(const AttentionShape& shape, const V1Params& p, cudaStream_t stream) {
  const dim3 grid(ceil_div(shape.seq_len, kTile), shape.batch * shape.heads);
  ROOFLINE_RETURN_IF_ERROR(launch_with_smem(flash_v1_backward_dkdv_kernel<kHeadDim, kCausal>, grid,
                                            dkdv_smem_bytes<kHeadDim>(), p, stream));
  return launch_with_smem(flash_v1_backward_dq_kernel<kHeadDim, kCausal>, grid,
                          dq_smem_bytes<kHeadDim>(), p, stream);
}

template <bool kForward, bool kCausal>
cudaError_t dispatch_dim(const AttentionShape& shape, const V1Params& p, cudaStream_t stream) {
  return for_head_dim(shape.head_dim, [&](auto dim) {
    constexpr int kHeadDim = decltype(dim)::value;
    return kForward ? forward_for<kHeadDim, kCausal>(shape, p, stream)
                    : backward_for<kHeadDim, kCausal>(shape, p, stream);
  });
}

// CTAs of the pass's main kernel (forward; backward: dK/dV) resident on one SM of the current
// device, with the shared memory it launches with.
template <int kHeadDim, bool kCausal>
cudaError_t resident_for(bool forward, int* ctas) {
  return forward ? resident_ctas(flash_v1_forward_kernel<kHeadDim, kCausal>, kThreads,
                                 forward_smem_bytes<kHeadDim>(), ctas)
                 : resident_ctas(flash_v1_backward_dkdv_kernel<kHeadDim, kCausal>, kThreads,
                                 dkdv_smem_bytes<kHeadDim>(), ctas);
}

template <bool kCausal>
cudaError_t resident_dim(const AttentionShape& shape, bool forward, int* ctas) {
  return for_head_dim(shape.head_dim, [&](auto dim) {
    return resident_for<decltype(dim)::value, kCausal>(forward, ctas);
  });
}

V1Params make_params(const AttentionShape& shape, const AttentionBuffers& b) {
  V1Params p{};
  p.q = static_cast<const __half*>(b.q);
  p.k = static_cast<const __half*>(b.k);
  p.v = static_cast<const __half*>(b.v);
  p.o = static_cast<const __half*>(b.o);
  p.o_out = static_cast<__half*>(b.o);
  p.lse = b.lse;
  p.d_o = static_cast<const __half*>(b.d_o);
  p.d_rowsum = static_cast<const float*>(b.workspace);
  p.d_q = static_cast<__half*>(b.d_q);
  p.d_k = static_cast<__half*>(b.d_k);
  p.d_v = static_cast<__half*>(b.d_v);
  p.seq_len = shape.seq_len;
  p.scale = 1.f / sqrtf(static_cast<float>(shape.head_dim));
  return p;
}

}  // namespace

cudaError_t flash_v1_resident_ctas(const AttentionShape& shape, Pass pass, int* ctas) {
  const bool forward = pass == Pass::kForward;
  return shape.causal ? resident_dim<true>(shape, forward, ctas)
                      : resident_dim<false>(shape, forward, ctas);
}

std::size_t flash_v1_workspace_bytes(const AttentionShape& shape) {
  // D = rowsum(dO ∘ O) for the backward pass.
  return align_up(static_cast<std::size_t>(shape.batch) * shape.heads * shape.seq_len *
                  sizeof(float));
}

// Work model: FLOPs = 4·B·H·N²·d, halved when causal;
// minimum DRAM bytes = 2·B·H·N·d·(3 reads + 1 write) + 4·B·H·N (LSE).
cudaError_t flash_v1_forward(const AttentionShape& shape, const AttentionBuffers& buffers,
                             cudaStream_t stream) {
  const V1Params p = make_params(shape, buffers);
  return shape.causal ? dispatch_dim<true, true>(shape, p, stream)
                      : dispatch_dim<true, false>(shape, p, stream);
}

// Work model: FLOPs = 2.5 × forward = 10·B·H·N²·d, halved when causal (this kernel actually
// executes 7 GEMM-sized products, recomputing S and dP in the dQ pass);
// minimum DRAM bytes = 2·B·H·N·d·(5 reads + 3 writes) + 4·B·H·N (LSE).
cudaError_t flash_v1_backward(const AttentionShape& shape, const AttentionBuffers& buffers,
                              cudaStream_t stream) {
  const long long rows = static_cast<long long>(shape.batch) * shape.heads * shape.seq_len;
  ROOFLINE_RETURN_IF_ERROR(
      launch_softmax_grad_rowsum(buffers.o, buffers.d_o, static_cast<float*>(buffers.workspace),
                                 nullptr, rows, shape.head_dim, DType::kFp16, stream));
  const V1Params p = make_params(shape, buffers);
  return shape.causal ? dispatch_dim<false, true>(shape, p, stream)
                      : dispatch_dim<false, false>(shape, p, stream);
}

}  // namespace roofline::kernels

// The analytic model's tiles (catalog.hpp) are this file's own.
namespace roofline::kernels {
namespace {
static_assert(forward_tiles_are("flash-v1", 32, kTile, kTile) &&
              forward_tiles_are("flash-v1", 64, kTile, kTile) &&
              forward_tiles_are("flash-v1", 128, kTile, kTile) &&
              backward_tiles_are("flash-v1", 32, kTile, kTile) &&
              backward_tiles_are("flash-v1", 64, kTile, kTile) &&
              backward_tiles_are("flash-v1", 128, kTile, kTile));
}  // namespace
}  // namespace roofline::kernels
