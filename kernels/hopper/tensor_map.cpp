#include "kernels/hopper/tensor_map.hpp"

#include <cudaTypedefs.h>

namespace roofline::kernels::sm90 {
namespace {

PFN_cuTensorMapEncodeTiled_v12000 encode_function() {
  // Looked up once; a failed lookup stays nullptr and every call reports it.
  static const PFN_cuTensorMapEncodeTiled_v12000 function = [] {
    void* pointer = nullptr;
    cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
    if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &pointer, 12000,
                                         cudaEnableDefault, &found) != cudaSuccess ||
        found != cudaDriverEntryPointSuccess) {
      cudaGetLastError();
      return static_cast<PFN_cuTensorMapEncodeTiled_v12000>(nullptr);
    }
    return reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(pointer);
  }();
  return function;
}

}  // namespace

cudaError_t encode_tensor_map_3d(CUtensorMap* map, TmaElement element, const void* base,
                                 std::uint64_t cols, std::uint64_t rows, std::uint64_t depth,
                                 std::uint32_t box_cols, std::uint32_t box_rows,
                                 TmaSwizzle swizzle) {
  const PFN_cuTensorMapEncodeTiled_v12000 encode = encode_function();
  if (encode == nullptr) return cudaErrorNotSupported;
  const std::uint64_t element_bytes = element == TmaElement::kFloat ? 4 : 2;
  const CUtensorMapDataType data_type =
      element == TmaElement::kHalf       ? CU_TENSOR_MAP_DATA_TYPE_FLOAT16
      : element == TmaElement::kBfloat16 ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16
                                         : CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
  const cuuint64_t dims[3] = {cols, rows, depth};
  // Strides of dimensions 1 and 2 in bytes (dimension 0 is contiguous).
  const cuuint64_t strides[2] = {cols * element_bytes, rows * cols * element_bytes};
  const cuuint32_t box[3] = {box_cols, box_rows, 1};
  const cuuint32_t element_strides[3] = {1, 1, 1};
  const CUresult result =
      encode(map, data_type, 3, const_cast<void*>(base), dims, strides, box, element_strides,
             CU_TENSOR_MAP_INTERLEAVE_NONE,
             swizzle == TmaSwizzle::k128B ? CU_TENSOR_MAP_SWIZZLE_128B : CU_TENSOR_MAP_SWIZZLE_NONE,
             CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  return result == CUDA_SUCCESS ? cudaSuccess : cudaErrorInvalidValue;
}

}  // namespace roofline::kernels::sm90
