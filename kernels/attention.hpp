// The one plain header for launching the bundled attention kernels.
//
// Host C++ only: no templates, no __half, no device code. lib/gpu includes it; the kernels'
// .cu files implement it. Every tensor is FP16 or BF16 (the shape's dtype; all tensors of one
// launch alike) in [B, H, N, d] row-major layout (d fastest), contiguous; the log-sum-exp
// vector is FP32 in [B, H, N].
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include <cuda_runtime_api.h>

#include "kernels/catalog.hpp"

namespace roofline::kernels {

enum class Pass { kForward, kBackward };

// Element type of the 16-bit tensors (q, k, v, o, d_o, d_q, d_k, d_v). Both are 2 bytes, so
// sizes, strides and workspaces do not depend on it. BF16 has FP32's exponent range and 8 bits
// of significand (FP16: 11).
enum class DType { kFp16, kBf16 };

// Shape of one attention problem. Invariants (checked by validate_shape): batch, heads,
// seq_len >= 1; head_dim in {32, 64, 128}.
//
// A decode shape (q_len >= 1; flash-decode's, and only its) is q_len new query tokens per
// sequence against a KV cache of at most seq_len tokens per sequence: heads query heads share
// kv_heads key/value heads (heads a multiple of kv_heads: MHA, GQA, MQA), the cache contiguous
// (page_size 0) or paged (page_size tokens a page), each sequence's keys split into kv_splits
// parts whose partial results a second kernel combines (0: decode_plan.hpp picks). The new
// tokens are the cache's last q_len; with `causal` token i of them sees keys up to its own
// position (kv_len - q_len + i). Decode shapes have a forward pass only; head_dim 64 or 128.
struct AttentionShape {
  int batch = 1;
  int heads = 8;
  int seq_len = 1024;
  int head_dim = 64;
  bool causal = false;
  DType dtype = DType::kFp16;
  int q_len = 0;      // 0: prefill (queries = keys = seq_len)
  int kv_heads = 0;   // 0: heads
  int page_size = 0;  // 0: contiguous cache
  int kv_splits = 0;  // 0: decode_splits() (decode_plan.hpp) for the current context's SMs

  bool decode() const { return q_len > 0; }
  int key_heads() const { return kv_heads > 0 ? kv_heads : heads; }
};

// Device pointers for one launch. The caller owns every buffer.
//   forward reads q, k, v; writes o and lse (flash kernels; the standard kernel writes P into
//   its workspace instead and leaves lse untouched).
//   backward reads q, k, v, o, lse, d_o and the forward's workspace state; writes d_q, d_k,
//   d_v. It must be run after a forward launch on the same buffers and workspace, and is
//   idempotent: running it twice gives the same gradients (it clears its own accumulators).
struct AttentionBuffers {
  const void* q = nullptr;    // dtype [B,H,N,d]
  const void* k = nullptr;    // dtype [B,H,N,d]
  const void* v = nullptr;    // dtype [B,H,N,d]
  void* o = nullptr;          // dtype [B,H,N,d]
  float* lse = nullptr;       // float [B,H,N], natural log of the softmax denominator of scaled S
  const void* d_o = nullptr;  // dtype [B,H,N,d]
  void* d_q = nullptr;        // dtype [B,H,N,d]
  void* d_k = nullptr;        // dtype [B,H,N,d]
  void* d_v = nullptr;        // dtype [B,H,N,d]
  void* workspace = nullptr;  // workspace_bytes(kernel, shape) bytes, shared by fwd and bwd
  // Decode shapes only. q, o: dtype [B, heads, q_len, d]; lse: float [B, heads, q_len]; k, v:
  // dtype [B, kv_heads, seq_len, d] contiguous, or with page_size > 0 a pool of pages
  // [pages, kv_heads, page_size, d] that block_table indexes.
  const int* kv_lens = nullptr;      // int [B]: each sequence's cache length, q_len..seq_len;
                                     // nullptr: every sequence seq_len long
  const int* block_table = nullptr;  // int [B, ceil(seq_len / page_size)]: page of each block
  int kv_pages = 0;                  // pages in the pool (paged): flash-decode's bulk copies
                                     // read nothing past them
};

// All bundled kernels, in the order reports list them: kKernelCatalog (catalog.hpp).
const std::vector<KernelInfo>& kernel_catalog();

// nullptr when no kernel has that name.
const KernelInfo* find_kernel(std::string_view name);

// Empty when the shape is valid, otherwise one sentence saying what is wrong.
std::string validate_shape(const AttentionShape& shape);

// Whether the `standard` kernel's cuBLAS can be opened (it is opened on first use, not linked:
// standard_attention.cu). Opens it; needs no GPU.
bool cublas_available();

// Bytes of device workspace the kernel needs for this shape (fwd and bwd share one workspace;
// for `standard` this holds S and P, and dP/dS in backward).
std::size_t workspace_bytes(std::string_view kernel, const AttentionShape& shape);

// CTAs of the pass's main kernel (forward; backward: the kernel that owns the key tiles, dK and
// dV) resident on one SM of the current device for this shape, from the occupancy API with the
// block and shared memory it launches with: what the catalogue's KernelTiles::fwd_ctas_per_sm and
// bwd_ctas_per_sm say for sm_90. cudaErrorNotSupported for kernels without one such grid of
// fixed CTAs (standard: cuBLAS; flash-v3: persistent, sized to the SMs; flash-decode).
cudaError_t resident_ctas_per_sm(std::string_view kernel, Pass pass, const AttentionShape& shape,
                                 int* ctas);

// softmax scale is 1/sqrt(head_dim). Launches asynchronously on `stream`; returns the first
// CUDA error (launch or configuration), cudaSuccess otherwise. Unknown kernel names return
// cudaErrorInvalidValue, a dtype the kernel lacks (KernelInfo::supports_bf16)
// cudaErrorNotSupported. cuBLAS failures are mapped to cudaErrorUnknown.
cudaError_t launch_attention(std::string_view kernel, Pass pass, const AttentionShape& shape,
                             const AttentionBuffers& buffers, cudaStream_t stream);

// FP32 references on the GPU, for verification, reading inputs of the shape's dtype.
// `emulate_low_precision` rounds S, P and O to that dtype at each step the way an unfused
// framework implementation in that dtype does (the "plain FP16 implementation", or plain BF16,
// whose error sets the tolerance). Outputs: o (forward) and lse as FP32
// [B,H,N,d] / [B,H,N]; gradients d_q, d_k, d_v as FP32 [B,H,N,d].
struct ReferenceOutputs {
  float* o = nullptr;
  float* lse = nullptr;
  float* d_q = nullptr;
  float* d_k = nullptr;
  float* d_v = nullptr;
};
cudaError_t launch_reference(Pass pass, const AttentionShape& shape, const AttentionBuffers& in,
                             const ReferenceOutputs& out, bool emulate_low_precision,
                             cudaStream_t stream);

// Fill `count` elements of `dtype` at `dst` with deterministic pseudo-random values uniform in
// [-scale, scale), a function of (seed, index) only (the same FP32 draw, rounded to the dtype).
cudaError_t fill_random(void* dst, DType dtype, std::size_t count, unsigned long long seed,
                        float scale, cudaStream_t stream);

// Fill `bytes` at `dst` with the byte pattern 0xFF (NaN in FP16 and BF16), to detect unwritten
// outputs.
cudaError_t poison(void* dst, std::size_t bytes, cudaStream_t stream);

// Count elements of a buffer of `dtype` that are NaN or Inf, into *count_out (a device int).
cudaError_t count_nonfinite(const void* src, DType dtype, std::size_t count, int* count_out,
                            cudaStream_t stream);

// Error statistics of `test` (of `dtype`) against `ref` (float): max |test - ref| and
// sqrt(sum (test-ref)^2), sqrt(sum ref^2) into out[0..2] (device doubles).
cudaError_t compare_to_float(const void* test, DType dtype, const float* ref, std::size_t count,
                             double* out, cudaStream_t stream);
// Same for a float test (the emulated-FP16 reference against the FP32 one).
cudaError_t compare_float_to_float(const float* test, const float* ref, std::size_t count,
                                   double* out, cudaStream_t stream);

// Read every byte of `buffer` so that no earlier data stays in L2, and no dirty line either
// (`buffer` must be at least twice the L2 size; its first 4 bytes may be overwritten).
cudaError_t flush_l2(void* buffer, std::size_t bytes, cudaStream_t stream);

}  // namespace roofline::kernels
