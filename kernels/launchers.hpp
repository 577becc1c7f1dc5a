// Internal host entry points of the kernel files; registry.cpp dispatches to them. Not part of
// the public contract (attention.hpp): shapes arrive already validated.
#pragma once

#include <cstddef>

#include <cuda_runtime_api.h>

#include "kernels/attention.hpp"

namespace roofline::kernels {

std::size_t standard_workspace_bytes(const AttentionShape& shape);
cudaError_t standard_forward(const AttentionShape& shape, const AttentionBuffers& buffers,
                             cudaStream_t stream);
cudaError_t standard_backward(const AttentionShape& shape, const AttentionBuffers& buffers,
                              cudaStream_t stream);

std::size_t flash_v1_workspace_bytes(const AttentionShape& shape);
cudaError_t flash_v1_forward(const AttentionShape& shape, const AttentionBuffers& buffers,
                             cudaStream_t stream);
cudaError_t flash_v1_backward(const AttentionShape& shape, const AttentionBuffers& buffers,
                              cudaStream_t stream);
cudaError_t flash_v1_resident_ctas(const AttentionShape& shape, Pass pass, int* ctas);

std::size_t flash_v2_workspace_bytes(const AttentionShape& shape);
cudaError_t flash_v2_forward(const AttentionShape& shape, const AttentionBuffers& buffers,
                             cudaStream_t stream);
cudaError_t flash_v2_backward(const AttentionShape& shape, const AttentionBuffers& buffers,
                              cudaStream_t stream);
cudaError_t flash_v2_forward_resident_ctas(const AttentionShape& shape, int* ctas);
cudaError_t flash_v2_backward_resident_ctas(const AttentionShape& shape, int* ctas);

// flash-v3 (kernels/flash_v3_*.cu, built for sm_90a only; the caller checks the device).
// Return cudaErrorNotSupported for head dims other than 64 and 128.
cudaError_t flash_v3_forward(const AttentionShape& shape, const AttentionBuffers& buffers,
                             cudaStream_t stream);
// The backward's workspace (D, LSE·log2e, the FP32 dQ accumulator, all padded to 64 rows).
std::size_t flash_v3_backward_workspace_bytes(const AttentionShape& shape);
cudaError_t flash_v3_backward(const AttentionShape& shape, const AttentionBuffers& buffers,
                              cudaStream_t stream);

// flash-decode (kernels/flash_decode.cu): decode shapes only, forward only. The workspace holds
// the split-KV partials (FP32 O and LSE of each part); 0 bytes when the launch uses one part.
// With kv_splits 0 the parts depend on the current device's SM count (decode_plan.hpp), so
// size the workspace with the device current that the launch will use.
std::size_t flash_decode_workspace_bytes(const AttentionShape& shape);
cudaError_t flash_decode_forward(const AttentionShape& shape, const AttentionBuffers& buffers,
                                 cudaStream_t stream);

// The FP32 reference for decode shapes (kernels/reference_decode.cu), forward only; what
// launch_reference calls for them. Reads in.q, in.k, in.v, in.kv_lens, in.block_table in the
// decode layouts (attention.hpp); writes out.o [B, heads, q_len, d] and out.lse [B, heads,
// q_len] as FP32.
cudaError_t launch_decode_reference(const AttentionShape& shape, const AttentionBuffers& in,
                                    const ReferenceOutputs& out, bool emulate_low_precision,
                                    cudaStream_t stream);

// Shared by the flash backward passes (flash_common.cu).
// D[row] = sum_c dO[row][c] * O[row][c] in FP32 over `rows` rows of width head_dim; when
// `zero_accum` is non-null its matching [rows][head_dim] FP32 rows are cleared in the same pass.
// o and d_o hold elements of `dtype`.
cudaError_t launch_softmax_grad_rowsum(const void* o, const void* d_o, float* d_rowsum,
                                       float* zero_accum, long long rows, int head_dim, DType dtype,
                                       cudaStream_t stream);
// dst[i] = src[i] rounded to `dtype` for `count` elements (count a multiple of 8, both 16-byte
// aligned).
cudaError_t launch_float_to_element(const float* src, void* dst, DType dtype, std::size_t count,
                                    cudaStream_t stream);

}  // namespace roofline::kernels
