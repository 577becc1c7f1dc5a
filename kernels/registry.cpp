// The catalogue of bundled kernels (catalog.hpp) as attention.hpp serves it, shape validation
// and the name-based dispatch behind attention.hpp. Host code only; each kernel file provides
// its launchers (launchers.hpp).
#include <string>

#include "kernels/attention.hpp"
#include "kernels/launchers.hpp"

namespace roofline::kernels {
namespace {

// Grids put batch x heads in gridDim.y, whose limit is 65535.
constexpr long long kMaxBatchHeads = 65535;

// The catalogue's entries, in its order.
enum class KernelId { kStandard, kFlashV1, kFlashV2, kFlashV3, kUnknown };
static_assert(kKernelCatalog.size() == static_cast<std::size_t>(KernelId::kUnknown),
              "a KernelId for every catalogue entry");
static_assert(kKernelCatalog[static_cast<int>(KernelId::kStandard)].name == "standard" &&
                  kKernelCatalog[static_cast<int>(KernelId::kFlashV1)].name == "flash-v1" &&
                  kKernelCatalog[static_cast<int>(KernelId::kFlashV2)].name == "flash-v2" &&
                  kKernelCatalog[static_cast<int>(KernelId::kFlashV3)].name == "flash-v3",
              "KernelId in the catalogue's order");

KernelId kernel_id(std::string_view name) {
  const KernelInfo* entry = find_in_catalog(name);
  return entry == nullptr ? KernelId::kUnknown
                          : static_cast<KernelId>(entry - kKernelCatalog.data());
}

bool required_buffers_present(KernelId id, Pass pass, const AttentionBuffers& b) {
  const bool flash = id != KernelId::kStandard;
  if (b.q == nullptr || b.k == nullptr || b.v == nullptr) return false;
  if (pass == Pass::kForward) {
    return b.o != nullptr && (!flash || b.lse != nullptr);
  }
  if (b.d_o == nullptr || b.d_q == nullptr || b.d_k == nullptr || b.d_v == nullptr) return false;
  return !flash || (b.o != nullptr && b.lse != nullptr);
}

}  // namespace

const std::vector<KernelInfo>& kernel_catalog() {
  static const std::vector<KernelInfo> catalog(kKernelCatalog.begin(), kKernelCatalog.end());
  return catalog;
}

const KernelInfo* find_kernel(std::string_view name) {
  const KernelInfo* entry = find_in_catalog(name);
  return entry == nullptr ? nullptr : &kernel_catalog()[entry - kKernelCatalog.data()];
}

std::string validate_shape(const AttentionShape& shape) {
  if (shape.batch < 1) return "batch must be >= 1 (got " + std::to_string(shape.batch) + ")";
  if (shape.heads < 1) return "heads must be >= 1 (got " + std::to_string(shape.heads) + ")";
  if (shape.seq_len < 1) {
    return "seq_len must be >= 1 (got " + std::to_string(shape.seq_len) + ")";
  }
  if (shape.head_dim != 32 && shape.head_dim != 64 && shape.head_dim != 128) {
    return "head_dim must be 32, 64 or 128 (got " + std::to_string(shape.head_dim) + ")";
  }
  const long long batch_heads = static_cast<long long>(shape.batch) * shape.heads;
  if (batch_heads > kMaxBatchHeads) {
    return "batch * heads must be <= " + std::to_string(kMaxBatchHeads) + " (got " +
           std::to_string(batch_heads) + ")";
  }
  return {};
}

std::size_t workspace_bytes(std::string_view kernel, const AttentionShape& shape) {
  if (!validate_shape(shape).empty()) return 0;
  switch (kernel_id(kernel)) {
    case KernelId::kStandard:
      return standard_workspace_bytes(shape);
    case KernelId::kFlashV1:
      return flash_v1_workspace_bytes(shape);
    case KernelId::kFlashV2:
      return flash_v2_workspace_bytes(shape);
    case KernelId::kFlashV3:
      // The forward uses its first 4 bytes (a work counter) before the backward uses it all.
      return flash_v3_backward_workspace_bytes(shape);
    case KernelId::kUnknown:
      break;
  }
  return 0;
}

cudaError_t launch_attention(std::string_view kernel, Pass pass, const AttentionShape& shape,
                             const AttentionBuffers& buffers, cudaStream_t stream) {
  const KernelId id = kernel_id(kernel);
  if (id == KernelId::kUnknown || !validate_shape(shape).empty() ||
      !required_buffers_present(id, pass, buffers)) {
    return cudaErrorInvalidValue;
  }
  if (buffers.workspace == nullptr && workspace_bytes(kernel, shape) > 0) {
    return cudaErrorInvalidValue;
  }
  if (shape.dtype == DType::kBf16 && !kKernelCatalog[static_cast<int>(id)].supports_bf16) {
    return cudaErrorNotSupported;
  }
  const bool forward = pass == Pass::kForward;
  switch (id) {
    case KernelId::kStandard:
      return forward ? standard_forward(shape, buffers, stream)
                     : standard_backward(shape, buffers, stream);
    case KernelId::kFlashV1:
      return forward ? flash_v1_forward(shape, buffers, stream)
                     : flash_v1_backward(shape, buffers, stream);
    case KernelId::kFlashV2:
      return forward ? flash_v2_forward(shape, buffers, stream)
                     : flash_v2_backward(shape, buffers, stream);
    case KernelId::kFlashV3:
      return forward ? flash_v3_forward(shape, buffers, stream)
                     : flash_v3_backward(shape, buffers, stream);
    case KernelId::kUnknown:
      break;
  }
  return cudaErrorInvalidValue;
}

}  // namespace roofline::kernels
