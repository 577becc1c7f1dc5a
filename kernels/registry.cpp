// The catalogue of bundled kernels (catalog.hpp) as attention.hpp serves it, shape validation
// and the name-based dispatch behind attention.hpp. Host code only; each kernel file provides
// its launchers (launchers.hpp).
#include <string>

#include "kernels/attention.hpp"
#include "kernels/decode_plan.hpp"
#include "kernels/launchers.hpp"

namespace roofline::kernels {
namespace {

// Grids put batch x heads in gridDim.y, whose limit is 65535.
constexpr long long kMaxBatchHeads = 65535;

// Decode shapes (flash_decode.cu): new tokens per sequence, and the page sizes of a paged cache.
constexpr int kMaxDecodeQueryTokens = 16;
constexpr int kMinPageSize = 16;
constexpr int kMaxPageSize = 256;

// The catalogue's entries, in its order.
enum class KernelId { kStandard, kFlashV1, kFlashV2, kFlashV3, kFlashDecode, kUnknown };
static_assert(kKernelCatalog.size() == static_cast<std::size_t>(KernelId::kUnknown),
              "a KernelId for every catalogue entry");
static_assert(kKernelCatalog[static_cast<int>(KernelId::kStandard)].name == "standard" &&
                  kKernelCatalog[static_cast<int>(KernelId::kFlashV1)].name == "flash-v1" &&
                  kKernelCatalog[static_cast<int>(KernelId::kFlashV2)].name == "flash-v2" &&
                  kKernelCatalog[static_cast<int>(KernelId::kFlashV3)].name == "flash-v3" &&
                  kKernelCatalog[static_cast<int>(KernelId::kFlashDecode)].name == "flash-decode",
              "KernelId in the catalogue's order");
constexpr bool only_flash_decode_is_decode_only() {
  for (std::size_t i = 0; i < kKernelCatalog.size(); ++i) {
    if (kKernelCatalog[i].decode_only != (i == static_cast<std::size_t>(KernelId::kFlashDecode)))
      return false;
  }
  return true;
}
static_assert(only_flash_decode_is_decode_only(), "flash-decode alone runs decode shapes");

KernelId kernel_id(std::string_view name) {
  const KernelInfo* entry = find_in_catalog(name);
  return entry == nullptr ? KernelId::kUnknown
                          : static_cast<KernelId>(entry - kKernelCatalog.data());
}

bool required_buffers_present(KernelId id, Pass pass, const AttentionShape& shape,
                              const AttentionBuffers& b) {
  const bool flash = id != KernelId::kStandard;
  if (b.q == nullptr || b.k == nullptr || b.v == nullptr) return false;
  if (shape.decode() && shape.page_size > 0 && (b.block_table == nullptr || b.kv_pages <= 0))
    return false;
  if (pass == Pass::kForward) {
    return b.o != nullptr && (!flash || b.lse != nullptr);
  }
  if (b.d_o == nullptr || b.d_q == nullptr || b.d_k == nullptr || b.d_v == nullptr) return false;
  return !flash || (b.o != nullptr && b.lse != nullptr);
}

// Whether the kernel runs this kind of shape: flash-decode decode shapes only, the others
// prefill shapes only.
bool runs_shape(KernelId id, const AttentionShape& shape) {
  return kKernelCatalog[static_cast<int>(id)].decode_only == shape.decode();
}

bool is_power_of_two(int x) {
  return x > 0 && (x & (x - 1)) == 0;
}

// The decode fields of a decode shape (decode_plan.hpp, flash_decode.cu).
std::string validate_decode(const AttentionShape& shape) {
  if (shape.q_len > kMaxDecodeQueryTokens) {
    return "q_len must be at most " + std::to_string(kMaxDecodeQueryTokens) +
           " new tokens per sequence (got " + std::to_string(shape.q_len) + ")";
  }
  if (shape.head_dim != 64 && shape.head_dim != 128) {
    return "head_dim must be 64 or 128 for a decode shape (got " + std::to_string(shape.head_dim) +
           ")";
  }
  if (shape.seq_len < shape.q_len) {
    return "seq_len (the longest cache) must be >= q_len (got " + std::to_string(shape.seq_len) +
           " < " + std::to_string(shape.q_len) + ")";
  }
  if (shape.kv_heads < 0) {
    return "kv_heads must be >= 1, or 0 for as many as heads (got " +
           std::to_string(shape.kv_heads) + ")";
  }
  if (shape.heads % shape.key_heads() != 0) {
    return "kv_heads must divide heads (got " + std::to_string(shape.heads) + " heads, " +
           std::to_string(shape.kv_heads) + " kv_heads)";
  }
  if (shape.page_size != 0 && (shape.page_size < kMinPageSize || shape.page_size > kMaxPageSize ||
                               !is_power_of_two(shape.page_size))) {
    return "page_size must be 0 (a contiguous cache) or a power of two from " +
           std::to_string(kMinPageSize) + " to " + std::to_string(kMaxPageSize) + " (got " +
           std::to_string(shape.page_size) + ")";
  }
  if (shape.kv_splits < 0 || shape.kv_splits > kDecodeMaxSplits) {
    return "kv_splits must be 0 (automatic) to " + std::to_string(kDecodeMaxSplits) + " (got " +
           std::to_string(shape.kv_splits) + ")";
  }
  return {};
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
  if (shape.q_len < 0) {
    return "q_len must be 0 (prefill) or 1 to " + std::to_string(kMaxDecodeQueryTokens) +
           " (decode) (got " + std::to_string(shape.q_len) + ")";
  }
  if (shape.decode()) return validate_decode(shape);
  if (shape.kv_heads != 0 || shape.page_size != 0 || shape.kv_splits != 0) {
    return "kv_heads, page_size and kv_splits apply to decode shapes only (q_len >= 1); a "
           "prefill shape leaves them 0";
  }
  return {};
}

std::size_t workspace_bytes(std::string_view kernel, const AttentionShape& shape) {
  const KernelId id = kernel_id(kernel);
  if (id == KernelId::kUnknown || !validate_shape(shape).empty() || !runs_shape(id, shape)) {
    return 0;
  }
  switch (id) {
    case KernelId::kStandard:
      return standard_workspace_bytes(shape);
    case KernelId::kFlashV1:
      return flash_v1_workspace_bytes(shape);
    case KernelId::kFlashV2:
      return flash_v2_workspace_bytes(shape);
    case KernelId::kFlashV3:
      // The forward uses its first 4 bytes (a work counter) before the backward uses it all.
      return flash_v3_backward_workspace_bytes(shape);
    case KernelId::kFlashDecode:
      return flash_decode_workspace_bytes(shape);
    case KernelId::kUnknown:
      break;
  }
  return 0;
}

cudaError_t resident_ctas_per_sm(std::string_view kernel, Pass pass, const AttentionShape& shape,
                                 int* ctas) {
  const KernelId id = kernel_id(kernel);
  if (ctas == nullptr || id == KernelId::kUnknown || !validate_shape(shape).empty() ||
      !runs_shape(id, shape))
    return cudaErrorInvalidValue;
  if (shape.dtype == DType::kBf16 && !kKernelCatalog[static_cast<int>(id)].supports_bf16)
    return cudaErrorNotSupported;
  switch (id) {
    case KernelId::kFlashV1:
      return flash_v1_resident_ctas(shape, pass, ctas);
    case KernelId::kFlashV2:
      return pass == Pass::kForward ? flash_v2_forward_resident_ctas(shape, ctas)
                                    : flash_v2_backward_resident_ctas(shape, ctas);
    default:
      return cudaErrorNotSupported;
  }
}

cudaError_t launch_attention(std::string_view kernel, Pass pass, const AttentionShape& shape,
                             const AttentionBuffers& buffers, cudaStream_t stream) {
  const KernelId id = kernel_id(kernel);
  // A decode shape on a prefill kernel, or a prefill shape on flash-decode, is invalid.
  if (id == KernelId::kUnknown || !validate_shape(shape).empty() || !runs_shape(id, shape)) {
    return cudaErrorInvalidValue;
  }
  if (id == KernelId::kFlashDecode && pass == Pass::kBackward) return cudaErrorNotSupported;
  if (!required_buffers_present(id, pass, shape, buffers)) return cudaErrorInvalidValue;
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
    case KernelId::kFlashDecode:
      return flash_decode_forward(shape, buffers, stream);
    case KernelId::kUnknown:
      break;
  }
  return cudaErrorInvalidValue;
}

}  // namespace roofline::kernels
