// Host-side encoding of TMA tensor maps (CUtensorMap) for the sm_90a kernels.
//
// cuTensorMapEncodeTiled is a driver API call; we reach it through the runtime's
// cudaGetDriverEntryPointByVersion so that nothing links libcuda directly.
#pragma once

#include <cstdint>

#include <cuda.h>
#include <cuda_runtime_api.h>

namespace roofline::kernels::sm90 {

enum class TmaElement { kHalf, kBfloat16, kFloat };
enum class TmaSwizzle { kNone, k128B };  // k128B: the pattern of sm90.cuh's swizzled tiles

// Describes a dense [depth][rows][cols] tensor at `base` (cols contiguous, no padding) copied
// in boxes of box_rows x box_cols elements of one depth slice. With k128B, box_cols times the
// element size must be at most 128 bytes. Out-of-bounds box elements load as zeros. Returns
// cudaErrorNotSupported when the driver lacks the entry point, cudaErrorInvalidValue when the
// driver rejects the description.
cudaError_t encode_tensor_map_3d(CUtensorMap* map, TmaElement element, const void* base,
                                 std::uint64_t cols, std::uint64_t rows, std::uint64_t depth,
                                 std::uint32_t box_cols, std::uint32_t box_rows,
                                 TmaSwizzle swizzle);

}  // namespace roofline::kernels::sm90
