// Small memory-bound kernels shared by the flash backward passes: the D = rowsum(dO * O)
// preprocess (FlashAttention's "delta", which lets dS = P * (dP - D) be formed tile by tile)
// and the FP32 -> FP16 (or BF16) conversion of the atomically accumulated dQ. Both stream each byte
// once with 16-byte accesses, so they sit on the DRAM bandwidth roof.
#include "kernels/common.cuh"
#include "kernels/launchers.hpp"

namespace roofline::kernels {
namespace {

constexpr int kRowsumThreads = 256;

// A group of kHeadDim/8 lanes owns one row, one 16-byte vector each.
template <typename T, int kHeadDim>
__global__ void __launch_bounds__(kRowsumThreads)
    softmax_grad_rowsum_kernel(const T* __restrict__ o, const T* __restrict__ d_o,
                               float* __restrict__ d_rowsum, float* __restrict__ zero_accum,
                               long long rows) {
  constexpr int kLanesPerRow = kHeadDim / 8;
  constexpr int kRowsPerBlock = kRowsumThreads / kLanesPerRow;
  const long long row =
      static_cast<long long>(blockIdx.x) * kRowsPerBlock + threadIdx.x / kLanesPerRow;
  const int lane_in_row = threadIdx.x % kLanesPerRow;
  float partial = 0.f;
  // No early return: the group reduction below needs every lane of the warp.
  if (row < rows) {
    const std::size_t offset = static_cast<std::size_t>(row) * kHeadDim + lane_in_row * 8;
    Pack8 a, b;
    a.vec = *reinterpret_cast<const uint4*>(o + offset);
    b.vec = *reinterpret_cast<const uint4*>(d_o + offset);
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const float2 fa = unpack_pair<T>(a, i);
      const float2 fb = unpack_pair<T>(b, i);
      partial = fmaf(fa.x, fb.x, fmaf(fa.y, fb.y, partial));
    }
    if (zero_accum != nullptr) {
      float4* accum = reinterpret_cast<float4*>(zero_accum + offset);
      accum[0] = make_float4(0.f, 0.f, 0.f, 0.f);
      accum[1] = make_float4(0.f, 0.f, 0.f, 0.f);
    }
  }
  partial = group_sum<kLanesPerRow>(partial);
  if (row < rows && lane_in_row == 0) d_rowsum[row] = partial;
}

template <typename T>
__global__ void float_to_element_kernel(const float4* __restrict__ src, uint4* __restrict__ dst,
                                        std::size_t vectors) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < vectors;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    const float4 lo = src[2 * i];
    const float4 hi = src[2 * i + 1];
    uint4 packed;
    packed.x = pack2<T>(lo.x, lo.y);
    packed.y = pack2<T>(lo.z, lo.w);
    packed.z = pack2<T>(hi.x, hi.y);
    packed.w = pack2<T>(hi.z, hi.w);
    dst[i] = packed;
  }
}

template <typename T, int kHeadDim>
cudaError_t launch_rowsum(const void* o, const void* d_o, float* d_rowsum, float* zero_accum,
                          long long rows, cudaStream_t stream) {
  constexpr int kRowsPerBlock = kRowsumThreads / (kHeadDim / 8);
  const long long blocks = (rows + kRowsPerBlock - 1) / kRowsPerBlock;
  softmax_grad_rowsum_kernel<T, kHeadDim>
      <<<static_cast<unsigned>(blocks), kRowsumThreads, 0, stream>>>(
          static_cast<const T*>(o), static_cast<const T*>(d_o), d_rowsum, zero_accum, rows);
  return cudaGetLastError();
}

template <typename T>
cudaError_t launch_rowsum_for_type(const void* o, const void* d_o, float* d_rowsum,
                                   float* zero_accum, long long rows, int head_dim,
                                   cudaStream_t stream) {
  return for_head_dim(head_dim, [&](auto dim) {
    return launch_rowsum<T, decltype(dim)::value>(o, d_o, d_rowsum, zero_accum, rows, stream);
  });
}

}  // namespace

cudaError_t launch_softmax_grad_rowsum(const void* o, const void* d_o, float* d_rowsum,
                                       float* zero_accum, long long rows, int head_dim, DType dtype,
                                       cudaStream_t stream) {
  return dtype == DType::kBf16
             ? launch_rowsum_for_type<__nv_bfloat16>(o, d_o, d_rowsum, zero_accum, rows, head_dim,
                                                     stream)
             : launch_rowsum_for_type<__half>(o, d_o, d_rowsum, zero_accum, rows, head_dim, stream);
}

cudaError_t launch_float_to_element(const float* src, void* dst, DType dtype, std::size_t count,
                                    cudaStream_t stream) {
  const std::size_t vectors = count / 8;
  if (vectors == 0) return cudaSuccess;
  constexpr int kThreads = 256;
  // A few waves of blocks; the grid-stride loop covers the rest.
  const std::size_t wanted = (vectors + kThreads - 1) / kThreads;
  const unsigned blocks = static_cast<unsigned>(wanted < 65536 ? wanted : 65536);
  auto kernel = dtype == DType::kBf16 ? float_to_element_kernel<__nv_bfloat16>
                                      : float_to_element_kernel<__half>;
  kernel<<<blocks, kThreads, 0, stream>>>(reinterpret_cast<const float4*>(src),
                                          static_cast<uint4*>(dst), vectors);
  return cudaGetLastError();
}

}  // namespace roofline::kernels
