// Device pieces shared by the flash-v2 forward and backward kernels: the padded shared-memory
// tile layout and the predicated cp.async tile loader; and the host's dispatch on a shape's
// element type and head dim.
#pragma once

#include <cstddef>

#include "kernels/attention.hpp"
#include "kernels/common.cuh"
#include "kernels/mma.cuh"

namespace roofline::kernels::flash_v2 {

// Shared tiles keep rows of head_dim halves padded by 16 bytes: the eight row addresses of one
// ldmatrix then fall into eight different 16-byte bank groups instead of the same one.
template <int kHeadDim>
constexpr int kRowStride = kHeadDim + 8;

// Copies rows [row0, row0 + kRows) of a [seq_len][kHeadDim] matrix of 16-bit elements T
// (FP16 or BF16) into shared memory with cp.async; rows at or past seq_len are zero-filled so
// that masked scores stay finite.
template <int kRows, int kHeadDim, int kThreads, typename T>
__device__ __forceinline__ void load_tile_async(T* smem, const T* gmem, int row0, int seq_len,
                                                int tid) {
  constexpr int kChunksPerRow = kHeadDim / 8;
  constexpr int kChunks = kRows * kChunksPerRow;
  static_assert(kChunks % kThreads == 0, "every thread copies the same number of chunks");
#pragma unroll
  for (int i = 0; i < kChunks / kThreads; ++i) {
    const int chunk = tid + i * kThreads;
    const int r = chunk / kChunksPerRow;
    const int c = (chunk % kChunksPerRow) * 8;
    const int row = row0 + r;
    const bool valid = row < seq_len;
    // With src-size 0 nothing is read, but the address must still be a valid global one.
    const T* src = gmem + (valid ? static_cast<std::size_t>(row) * kHeadDim + c : 0);
    ptx::cp_async_16(ptx::smem_address(smem + r * kRowStride<kHeadDim> + c), src, valid);
  }
}

// Writes a warp's 16 x kHeadDim tile of T staged in shared memory (rows `row0`.., stride
// kRowStride) to global rows < seq_len with 16-byte stores.
template <int kHeadDim, typename T>
__device__ __forceinline__ void store_warp_rows(T* gmem, const T* staged, int row0, int seq_len,
                                                int lane) {
  constexpr int kChunksPerRow = kHeadDim / 8;
#pragma unroll
  for (int chunk = lane; chunk < 16 * kChunksPerRow; chunk += 32) {
    const int r = chunk / kChunksPerRow;
    const int c = (chunk % kChunksPerRow) * 8;
    if (row0 + r < seq_len) {
      *reinterpret_cast<uint4*>(gmem + static_cast<std::size_t>(row0 + r) * kHeadDim + c) =
          *reinterpret_cast<const uint4*>(staged + r * kRowStride<kHeadDim> + c);
    }
  }
}

// f(T{}, std::integral_constant<int, kHeadDim>{}) for the shape's element type (__half or
// __nv_bfloat16) and head dim (32, 64, 128); cudaErrorInvalidValue for another head dim.
template <typename F>
cudaError_t for_type_and_dim(const AttentionShape& shape, F&& f) {
  const auto by_dim = [&](auto type) {
    return for_head_dim(shape.head_dim, [&](auto dim) { return f(type, dim); });
  };
  return shape.dtype == DType::kBf16 ? by_dim(__nv_bfloat16{}) : by_dim(__half{});
}

}  // namespace roofline::kernels::flash_v2
