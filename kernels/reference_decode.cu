// FP32 reference for decode shapes (q_len new tokens against a KV cache), for verification only.
//
// What it demonstrates: nothing about speed; it is flash-decode's yardstick, reading the same
// layouts (attention.hpp): q [B, heads, q_len, d]; K and V contiguous [B, kv_heads, seq_len, d]
// or paged [pages, kv_heads, page_size, d] through the block table; ragged kv_lens; query head h
// reads key/value head h / (heads / kv_heads). New token i of sequence b sees keys 0 ..
// kv_len_b - q_len + i when causal, all kv_len_b keys otherwise. The softmax is the exact
// two-pass one of reference.cu (row max, then sum, then the output) with expf, and with
// `emulate` S (after scaling), P and O are rounded to the inputs' type where an unfused
// framework implementation in that type stores them, as reference.cu does for prefill.
//
// Tiling: one CTA of 128 threads per (sequence, query head, new token). The passes over the
// keys recompute the scores (a thread per key, the dot product over d in FP32); the output pass
// stages 128 probabilities at a time in shared memory and a thread per column of O sums them
// against V.
//
// Regime: latency- and L1-bound on CUDA cores; 3·kv_len·d FMAs per row, milliseconds for the
// test shapes.
#include <cfloat>

#include "kernels/attention.hpp"
#include "kernels/common.cuh"
#include "kernels/launchers.hpp"

namespace roofline::kernels {
namespace {

constexpr int kThreads = 128;
constexpr int kMaxHeadDim = 128;

struct DecodeRefParams {
  const void* q;  // T [B, heads, q_len, d]
  const void* k;  // T: contiguous [B, kv_heads, seq_len, d], or pages [pages, kv_heads, ps, d]
  const void* v;
  const int* kv_lens;      // [B] or nullptr
  const int* block_table;  // [B, max_blocks] when page_size > 0
  float* o;                // [B, heads, q_len, d]
  float* lse;              // [B, heads, q_len]
  int heads;
  int kv_heads;
  int q_len;
  int seq_len;
  int d;
  int page_size;
  int max_blocks;
  bool causal;
  bool emulate;
  float scale;
};

template <typename T>
__device__ float maybe_round(float x, bool emulate) {
  return emulate ? round_to<T>(x) : x;
}

// Element offset of key (or value) `key` of sequence b, key/value head kv_head.
__device__ std::size_t cache_row(const DecodeRefParams& p, int b, int kv_head, int key) {
  if (p.page_size > 0) {
    const int page = p.block_table[static_cast<std::size_t>(b) * p.max_blocks + key / p.page_size];
    return ((static_cast<std::size_t>(page) * p.kv_heads + kv_head) * p.page_size +
            key % p.page_size) *
           p.d;
  }
  return ((static_cast<std::size_t>(b) * p.kv_heads + kv_head) * p.seq_len + key) * p.d;
}

__device__ float block_max(float x, float* scratch) {
  x = warp_max(x);
  __syncthreads();
  if (threadIdx.x % 32 == 0) scratch[threadIdx.x / 32] = x;
  __syncthreads();
  float result = -INFINITY;
  for (int w = 0; w < kThreads / 32; ++w) result = fmaxf(result, scratch[w]);
  return result;
}

__device__ float block_sum(float x, float* scratch) {
  x = warp_sum(x);
  __syncthreads();
  if (threadIdx.x % 32 == 0) scratch[threadIdx.x / 32] = x;
  __syncthreads();
  float result = 0.f;
  for (int w = 0; w < kThreads / 32; ++w) result += scratch[w];
  return result;
}

template <typename T>
__global__ void __launch_bounds__(kThreads) reference_decode_kernel(const DecodeRefParams p) {
  __shared__ float s_q[kMaxHeadDim];
  __shared__ float s_p[kThreads];
  __shared__ float scratch[kThreads / 32];
  const int token = blockIdx.x;
  const int head = blockIdx.y;
  const int b = blockIdx.z;
  const int kv_head = head / (p.heads / p.kv_heads);
  const int d = p.d;
  const std::size_t row = (static_cast<std::size_t>(b) * p.heads + head) * p.q_len + token;
  const T* k = static_cast<const T*>(p.k);
  const T* v = static_cast<const T*>(p.v);

  const int kv_len = min(max(p.kv_lens != nullptr ? p.kv_lens[b] : p.seq_len, 0), p.seq_len);
  const int visible =
      p.causal ? min(max(kv_len - p.q_len + token + 1, 0), kv_len) : kv_len;  // keys 0..visible-1

  for (int c = threadIdx.x; c < d; c += kThreads) {
    s_q[c] = to_float(static_cast<const T*>(p.q)[row * d + c]);
  }
  __syncthreads();
  auto score = [&](int key) {
    const T* kr = k + cache_row(p, b, kv_head, key);
    float dot = 0.f;
    for (int c = 0; c < d; ++c) dot = fmaf(s_q[c], to_float(kr[c]), dot);
    return maybe_round<T>(dot * p.scale, p.emulate);
  };

  float row_max = -INFINITY;
  for (int key = threadIdx.x; key < visible; key += kThreads) row_max = fmaxf(row_max, score(key));
  row_max = block_max(row_max, scratch);
  float row_sum = 0.f;
  for (int key = threadIdx.x; key < visible; key += kThreads) row_sum += expf(score(key) - row_max);
  row_sum = block_sum(row_sum, scratch);

  float acc = 0.f;  // column threadIdx.x of O
  for (int key0 = 0; key0 < visible; key0 += kThreads) {
    const int key = key0 + threadIdx.x;
    __syncthreads();
    s_p[threadIdx.x] =
        key < visible ? maybe_round<T>(expf(score(key) - row_max) / row_sum, p.emulate) : 0.f;
    __syncthreads();
    if (threadIdx.x < d) {
      const int count = min(kThreads, visible - key0);
      for (int j = 0; j < count; ++j) {
        acc = fmaf(s_p[j], to_float(v[cache_row(p, b, kv_head, key0 + j) + threadIdx.x]), acc);
      }
    }
  }
  if (threadIdx.x < d) p.o[row * d + threadIdx.x] = maybe_round<T>(acc, p.emulate);
  // A row that sees no key (only when kv_len < q_len) has no softmax: o = 0, lse = -inf.
  if (threadIdx.x == 0) p.lse[row] = visible > 0 ? row_max + logf(row_sum) : -INFINITY;
}

}  // namespace

cudaError_t launch_decode_reference(const AttentionShape& shape, const AttentionBuffers& in,
                                    const ReferenceOutputs& out, bool emulate_low_precision,
                                    cudaStream_t stream) {
  if (!shape.decode() || shape.head_dim > kMaxHeadDim || shape.heads % shape.key_heads() != 0 ||
      in.q == nullptr || in.k == nullptr || in.v == nullptr || out.o == nullptr ||
      out.lse == nullptr || (shape.page_size > 0 && in.block_table == nullptr)) {
    return cudaErrorInvalidValue;
  }
  DecodeRefParams p{};
  p.q = in.q;
  p.k = in.k;
  p.v = in.v;
  p.kv_lens = in.kv_lens;
  p.block_table = in.block_table;
  p.o = out.o;
  p.lse = out.lse;
  p.heads = shape.heads;
  p.kv_heads = shape.key_heads();
  p.q_len = shape.q_len;
  p.seq_len = shape.seq_len;
  p.d = shape.head_dim;
  p.page_size = shape.page_size;
  p.max_blocks = shape.page_size > 0 ? ceil_div(shape.seq_len, shape.page_size) : 0;
  p.causal = shape.causal;
  p.emulate = emulate_low_precision;
  p.scale = 1.f / sqrtf(static_cast<float>(shape.head_dim));
  const dim3 grid(shape.q_len, shape.heads, shape.batch);
  if (shape.dtype == DType::kBf16) {
    reference_decode_kernel<__nv_bfloat16><<<grid, kThreads, 0, stream>>>(p);
  } else {
    reference_decode_kernel<__half><<<grid, kThreads, 0, stream>>>(p);
  }
  return cudaGetLastError();
}

}  // namespace roofline::kernels
