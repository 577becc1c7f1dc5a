// FP32 reference attention on the GPU, for verification only.
//
// What it demonstrates: nothing about speed; it is the yardstick. It computes softmax(scale·Q
// K^T) V and its gradients the textbook way, with an exact two-pass softmax (row max, then
// sum) and exact expf, from the FP16 or BF16 inputs converted to FP32. With `emulate` it rounds
// S (after scaling), P, dP, dS and the outputs to the inputs' type where an unfused framework
// implementation in that type stores them; that implementation's error against the FP32
// reference sets the tolerance of the kernel tests (FlashAttention's "at most 2x a plain FP16
// implementation", and for BF16 inputs 2x a plain BF16 one). The kernels are templates on the
// input type T (__half or __nv_bfloat16).
//
// Tiling: one CTA per 16 rows. Forward and the dQ half of backward walk the keys of those query
// rows in chunks of 64 staged through shared memory, recomputing the scores in each pass
// (max, sum, then output; backward adds D = sum_j P dP and dQ); the dK/dV half does the same
// per 16 key rows over chunks of queries, using the per-row max, sum and D saved by the first.
//
// Regime: shared-memory bound on CUDA cores; about 10 GFLOP per 1k x 1k head, so N = 16384
// with B·H = 64 runs in seconds.
//
// Decode shapes (q_len >= 1) go to their own reference, reference_decode.cu (forward only).
#include <cfloat>

#include "kernels/attention.hpp"
#include "kernels/common.cuh"
#include "kernels/launchers.hpp"

namespace roofline::kernels {
namespace {

constexpr int kRows = 16;   // rows owned by a CTA
constexpr int kChunk = 64;  // rows of the other operand per shared-memory chunk
constexpr int kThreads = 256;
constexpr int kScoreStride = kChunk + 1;
constexpr int kMaxAccumulators = kRows * 128 / kThreads;  // (row, column) pairs per thread

struct RefParams {
  const void* q;  // T [B,H,N,d], as are k, v and d_o
  const void* k;
  const void* v;
  const void* d_o;
  float* o;
  float* lse;
  float* d_q;
  float* d_k;
  float* d_v;
  float* stats;  // [B·H·N][3]: row max, row sum, D (backward only)
  int n;
  int d;
  bool causal;
  bool emulate;
  float scale;
};

struct RefSmem {
  float* own_a;        // [kRows][d+1]
  float* own_b;        // [kRows][d+1]
  float* chunk_a;      // [kChunk][d+1]
  float* chunk_b;      // [kChunk][d+1]
  float* score_a;      // [kRows][kScoreStride]
  float* score_b;      // [kRows][kScoreStride]
  float* chunk_stats;  // [kChunk][3]
};

__host__ __device__ std::size_t ref_smem_floats(int d) {
  return static_cast<std::size_t>(2 * kRows + 2 * kChunk) * (d + 1) + 2 * kRows * kScoreStride +
         3 * kChunk;
}

__device__ RefSmem carve(float* base, int d) {
  RefSmem s;
  s.own_a = base;
  s.own_b = s.own_a + kRows * (d + 1);
  s.chunk_a = s.own_b + kRows * (d + 1);
  s.chunk_b = s.chunk_a + kChunk * (d + 1);
  s.score_a = s.chunk_b + kChunk * (d + 1);
  s.score_b = s.score_a + kRows * kScoreStride;
  s.chunk_stats = s.score_b + kRows * kScoreStride;
  return s;
}

template <typename T>
__device__ float maybe_round(float x, bool emulate) {
  return emulate ? round_to<T>(x) : x;
}

// rows [row0, row0 + count) of a [n][d] matrix of T into FP32 [count][d+1]; zeros past n.
template <typename T>
__device__ void load_rows(float* dst, const T* src, int row0, int count, int n, int d) {
  for (int idx = threadIdx.x; idx < count * d; idx += kThreads) {
    const int r = idx / d;
    const int c = idx % d;
    const int row = row0 + r;
    dst[r * (d + 1) + c] = row < n ? to_float(src[static_cast<std::size_t>(row) * d + c]) : 0.f;
  }
}

// out[r][j] = <rows[r], chunk[j]> for r < kRows, j < kChunk.
__device__ void dot_block(float* out, const float* rows, const float* chunk, int d) {
  const int j = threadIdx.x % kChunk;
  const int r0 = threadIdx.x / kChunk;
  constexpr int kRowSteps = kRows / (kThreads / kChunk);
  float acc[kRowSteps] = {};
  for (int c = 0; c < d; ++c) {
    const float b = chunk[j * (d + 1) + c];
#pragma unroll
    for (int a = 0; a < kRowSteps; ++a) {
      acc[a] = fmaf(rows[(r0 + a * (kThreads / kChunk)) * (d + 1) + c], b, acc[a]);
    }
  }
#pragma unroll
  for (int a = 0; a < kRowSteps; ++a)
    out[(r0 + a * (kThreads / kChunk)) * kScoreStride + j] = acc[a];
}

// acc[i] += sum_j weights[r_i][j] * values[j][c] for the thread's (r_i, c) pairs.
__device__ void accumulate_block(float (&acc)[kMaxAccumulators], const float* weights,
                                 const float* values, int d) {
  const int c = threadIdx.x % d;
  const int rows_per_pass = kThreads / d;
#pragma unroll
  for (int i = 0; i < kMaxAccumulators; ++i) {
    const int r = threadIdx.x / d + i * rows_per_pass;
    if (r >= kRows) break;
    float sum = acc[i];
    for (int j = 0; j < kChunk; ++j)
      sum = fmaf(weights[r * kScoreStride + j], values[j * (d + 1) + c], sum);
    acc[i] = sum;
  }
}

template <typename T>
__device__ void store_accumulators(float* dst, const float (&acc)[kMaxAccumulators], int row0,
                                   int n, int d, float scale, bool emulate) {
  const int c = threadIdx.x % d;
  const int rows_per_pass = kThreads / d;
#pragma unroll
  for (int i = 0; i < kMaxAccumulators; ++i) {
    const int r = threadIdx.x / d + i * rows_per_pass;
    if (r >= kRows) break;
    if (row0 + r < n)
      dst[static_cast<std::size_t>(row0 + r) * d + c] = maybe_round<T>(acc[i] * scale, emulate);
  }
}

template <typename T>
__device__ float score(float dot, const RefParams& p) {
  return maybe_round<T>(dot * p.scale, p.emulate);
}

template <typename T>
__device__ float probability(float s, float row_max, float row_sum, const RefParams& p) {
  return maybe_round<T>(expf(s - row_max) / row_sum, p.emulate);
}

// Per query-row CTA. Forward: O and LSE. Backward: D, dQ and the per-row statistics.
template <typename T, bool kBackward>
__global__ void __launch_bounds__(kThreads) reference_query_kernel(const RefParams p) {
  extern __shared__ float smem[];
  const RefSmem s = carve(smem, p.d);
  const int n = p.n;
  const int d = p.d;
  const int row0 = blockIdx.x * kRows;
  const std::size_t head = static_cast<std::size_t>(blockIdx.y) * n;
  const T* k = static_cast<const T*>(p.k) + head * d;
  const T* v = static_cast<const T*>(p.v) + head * d;
  const int warp = threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  // Each warp owns two rows for the row statistics.
  const int local_rows[2] = {2 * warp, 2 * warp + 1};

  load_rows(s.own_a, static_cast<const T*>(p.q) + head * d, row0, kRows, n, d);
  if (kBackward) load_rows(s.own_b, static_cast<const T*>(p.d_o) + head * d, row0, kRows, n, d);
  const int key_end = p.causal ? min(n, row0 + kRows) : n;
  auto valid = [&](int local_row, int key) {
    return key < n && (!p.causal || key <= row0 + local_row);
  };

  // Pass 1: row max. Pass 2: row sum.
  float row_max[2] = {-INFINITY, -INFINITY};
  float row_sum[2] = {0.f, 0.f};
  for (int pass = 0; pass < 2; ++pass) {
    for (int c0 = 0; c0 < key_end; c0 += kChunk) {
      __syncthreads();
      load_rows(s.chunk_a, k, c0, kChunk, n, d);
      __syncthreads();
      dot_block(s.score_a, s.own_a, s.chunk_a, d);
      __syncthreads();
      for (int h = 0; h < 2; ++h) {
        for (int j = lane; j < kChunk; j += 32) {
          if (!valid(local_rows[h], c0 + j)) continue;
          const float x = score<T>(s.score_a[local_rows[h] * kScoreStride + j], p);
          if (pass == 0) {
            row_max[h] = fmaxf(row_max[h], x);
          } else {
            row_sum[h] += expf(x - row_max[h]);
          }
        }
      }
    }
    for (int h = 0; h < 2; ++h) {
      if (pass == 0) {
        row_max[h] = warp_max(row_max[h]);
      } else {
        row_sum[h] = warp_sum(row_sum[h]);
      }
    }
  }

  float acc[kMaxAccumulators] = {};
  if (!kBackward) {
    for (int c0 = 0; c0 < key_end; c0 += kChunk) {
      __syncthreads();
      load_rows(s.chunk_a, k, c0, kChunk, n, d);
      load_rows(s.chunk_b, v, c0, kChunk, n, d);
      __syncthreads();
      dot_block(s.score_a, s.own_a, s.chunk_a, d);
      __syncthreads();
      for (int h = 0; h < 2; ++h) {
        for (int j = lane; j < kChunk; j += 32) {
          float* x = &s.score_a[local_rows[h] * kScoreStride + j];
          *x = valid(local_rows[h], c0 + j)
                   ? probability<T>(score<T>(*x, p), row_max[h], row_sum[h], p)
                   : 0.f;
        }
      }
      __syncthreads();
      accumulate_block(acc, s.score_a, s.chunk_b, d);
    }
    store_accumulators<T>(p.o + head * d, acc, row0, n, d, 1.f, p.emulate);
    if (lane == 0) {
      for (int h = 0; h < 2; ++h) {
        const int row = row0 + local_rows[h];
        if (row < n) p.lse[head + row] = row_max[h] + logf(row_sum[h]);
      }
    }
    return;
  }

  // Backward pass 3: D = sum_j P dP. Pass 4: dQ = scale · sum_j dS K.
  float drow[2] = {0.f, 0.f};
  for (int pass = 0; pass < 2; ++pass) {
    for (int c0 = 0; c0 < key_end; c0 += kChunk) {
      __syncthreads();
      load_rows(s.chunk_a, k, c0, kChunk, n, d);
      load_rows(s.chunk_b, v, c0, kChunk, n, d);
      __syncthreads();
      dot_block(s.score_a, s.own_a, s.chunk_a, d);
      dot_block(s.score_b, s.own_b, s.chunk_b, d);
      __syncthreads();
      for (int h = 0; h < 2; ++h) {
        for (int j = lane; j < kChunk; j += 32) {
          const int at = local_rows[h] * kScoreStride + j;
          float ds = 0.f;
          if (valid(local_rows[h], c0 + j)) {
            const float prob =
                probability<T>(score<T>(s.score_a[at], p), row_max[h], row_sum[h], p);
            const float dp = maybe_round<T>(s.score_b[at], p.emulate);
            if (pass == 0) {
              drow[h] += prob * dp;
            } else {
              ds = maybe_round<T>(prob * (dp - drow[h]), p.emulate);
            }
          }
          s.score_a[at] = ds;
        }
      }
      if (pass == 1) {
        __syncthreads();
        accumulate_block(acc, s.score_a, s.chunk_a, d);
      }
    }
    if (pass == 0) {
      for (int h = 0; h < 2; ++h) drow[h] = warp_sum(drow[h]);
    }
  }
  store_accumulators<T>(p.d_q + head * d, acc, row0, n, d, p.scale, p.emulate);
  if (lane == 0) {
    for (int h = 0; h < 2; ++h) {
      const int row = row0 + local_rows[h];
      if (row < n) {
        float* stat = p.stats + 3 * (head + row);
        stat[0] = row_max[h];
        stat[1] = row_sum[h];
        stat[2] = drow[h];
      }
    }
  }
}

// Per key-row CTA: dV = sum_i P dO, dK = scale · sum_i dS Q, from the saved statistics.
template <typename T>
__global__ void __launch_bounds__(kThreads) reference_key_kernel(const RefParams p) {
  extern __shared__ float smem[];
  const RefSmem s = carve(smem, p.d);
  const int n = p.n;
  const int d = p.d;
  const int key0 = blockIdx.x * kRows;
  const std::size_t head = static_cast<std::size_t>(blockIdx.y) * n;
  const T* q = static_cast<const T*>(p.q) + head * d;
  const T* d_o = static_cast<const T*>(p.d_o) + head * d;
  const int warp = threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  const int local_keys[2] = {2 * warp, 2 * warp + 1};

  load_rows(s.own_a, static_cast<const T*>(p.k) + head * d, key0, kRows, n, d);
  load_rows(s.own_b, static_cast<const T*>(p.v) + head * d, key0, kRows, n, d);
  float acc_dk[kMaxAccumulators] = {};
  float acc_dv[kMaxAccumulators] = {};
  // Queries before the first key of the block see none of its keys under causal masking.
  for (int c0 = p.causal ? key0 : 0; c0 < n; c0 += kChunk) {
    __syncthreads();
    load_rows(s.chunk_a, q, c0, kChunk, n, d);
    load_rows(s.chunk_b, d_o, c0, kChunk, n, d);
    for (int idx = threadIdx.x; idx < 3 * kChunk; idx += kThreads) {
      const int query = c0 + idx / 3;
      s.chunk_stats[idx] = query < n ? p.stats[3 * (head + query) + idx % 3] : 0.f;
    }
    __syncthreads();
    dot_block(s.score_a, s.own_a, s.chunk_a, d);  // S^T
    dot_block(s.score_b, s.own_b, s.chunk_b, d);  // dP^T
    __syncthreads();
    for (int h = 0; h < 2; ++h) {
      const int key = key0 + local_keys[h];
      for (int j = lane; j < kChunk; j += 32) {
        const int query = c0 + j;
        const int at = local_keys[h] * kScoreStride + j;
        float prob = 0.f;
        float ds = 0.f;
        if (query < n && key < n && (!p.causal || key <= query)) {
          const float* stat = s.chunk_stats + 3 * j;
          prob = probability<T>(score<T>(s.score_a[at], p), stat[0], stat[1], p);
          const float dp = maybe_round<T>(s.score_b[at], p.emulate);
          ds = maybe_round<T>(prob * (dp - stat[2]), p.emulate);
        }
        s.score_a[at] = prob;
        s.score_b[at] = ds;
      }
    }
    __syncthreads();
    accumulate_block(acc_dv, s.score_a, s.chunk_b, d);
    accumulate_block(acc_dk, s.score_b, s.chunk_a, d);
  }
  store_accumulators<T>(p.d_k + head * d, acc_dk, key0, n, d, p.scale, p.emulate);
  store_accumulators<T>(p.d_v + head * d, acc_dv, key0, n, d, 1.f, p.emulate);
}

template <typename Kernel>
cudaError_t launch_ref(Kernel kernel, const RefParams& p, int batch_heads, cudaStream_t stream) {
  const std::size_t smem = ref_smem_floats(p.d) * sizeof(float);
  ROOFLINE_RETURN_IF_ERROR(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                                static_cast<int>(smem)));
  const dim3 grid(ceil_div(p.n, kRows), batch_heads);
  kernel<<<grid, kThreads, smem, stream>>>(p);
  return cudaGetLastError();
}

// Launches the reference kernels of one input type (the statistics buffer allocated here).
template <typename T>
cudaError_t launch_reference_for_type(Pass pass, const AttentionShape& shape, RefParams p,
                                      const ReferenceOutputs& out, cudaStream_t stream) {
  const int batch_heads = shape.batch * shape.heads;
  if (pass == Pass::kForward) {
    if (out.o == nullptr || out.lse == nullptr) return cudaErrorInvalidValue;
    return launch_ref(reference_query_kernel<T, false>, p, batch_heads, stream);
  }
  if (p.d_o == nullptr || out.d_q == nullptr || out.d_k == nullptr || out.d_v == nullptr) {
    return cudaErrorInvalidValue;
  }
  const std::size_t rows = static_cast<std::size_t>(batch_heads) * shape.seq_len;
  Scratch stats(stream);
  ROOFLINE_RETURN_IF_ERROR(stats.allocate(3 * rows * sizeof(float)));
  p.stats = stats.as<float>();
  ROOFLINE_RETURN_IF_ERROR(launch_ref(reference_query_kernel<T, true>, p, batch_heads, stream));
  ROOFLINE_RETURN_IF_ERROR(launch_ref(reference_key_kernel<T>, p, batch_heads, stream));
  return stats.free();
}

}  // namespace

cudaError_t launch_reference(Pass pass, const AttentionShape& shape, const AttentionBuffers& in,
                             const ReferenceOutputs& out, bool emulate_low_precision,
                             cudaStream_t stream) {
  if (!validate_shape(shape).empty() || in.q == nullptr || in.k == nullptr || in.v == nullptr) {
    return cudaErrorInvalidValue;
  }
  // Decode shapes (reference_decode.cu) have a forward pass only.
  if (shape.decode()) {
    return pass == Pass::kForward
               ? launch_decode_reference(shape, in, out, emulate_low_precision, stream)
               : cudaErrorInvalidValue;
  }
  RefParams p{};
  p.q = in.q;
  p.k = in.k;
  p.v = in.v;
  p.d_o = in.d_o;
  p.o = out.o;
  p.lse = out.lse;
  p.d_q = out.d_q;
  p.d_k = out.d_k;
  p.d_v = out.d_v;
  p.n = shape.seq_len;
  p.d = shape.head_dim;
  p.causal = shape.causal;
  p.emulate = emulate_low_precision;
  p.scale = 1.f / sqrtf(static_cast<float>(shape.head_dim));
  return shape.dtype == DType::kBf16
             ? launch_reference_for_type<__nv_bfloat16>(pass, shape, p, out, stream)
             : launch_reference_for_type<__half>(pass, shape, p, out, stream);
}

}  // namespace roofline::kernels
