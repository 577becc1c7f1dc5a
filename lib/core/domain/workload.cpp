#include "lib/core/domain/workload.hpp"

#include <cstdint>

#include "lib/core/base/errors.hpp"
#include "lib/core/base/limits.hpp"
#include "lib/core/base/text.hpp"

namespace roofline {

std::string_view to_string(Pass pass) {
  return pass == Pass::kForward ? "fwd" : "bwd";
}

std::optional<Pass> parse_pass(std::string_view text) {
  if (text == "fwd") return Pass::kForward;
  if (text == "bwd") return Pass::kBackward;
  return std::nullopt;
}

std::string_view to_string(DType dtype) {
  return dtype == DType::kBf16 ? "bf16" : "fp16";
}

std::optional<DType> parse_dtype(std::string_view text) {
  if (text == "fp16") return DType::kFp16;
  if (text == "bf16") return DType::kBf16;
  return std::nullopt;
}

void Workload::validate() const {
  auto positive = [](const char* name, int value) {
    if (value <= 0)
      throw InputError(std::string(name) + " must be >= 1 (got " + std::to_string(value) + ")");
  };
  positive("batch", batch);
  positive("heads", heads);
  positive("seq", seq_len);
  if (seq_len > kMaxSeqLen)
    throw InputError("seq must be at most " + std::to_string(kMaxSeqLen) + " (got " +
                     std::to_string(seq_len) + ")");
  if (head_dim != 32 && head_dim != 64 && head_dim != 128)
    throw InputError("head-dim must be 32, 64 or 128 (got " + std::to_string(head_dim) + ")");
  // In 64 bits, checked after each factor: batch and heads are below 2^31, seq at most 2^24 and
  // head_dim at most 128, so no step exceeds 2^63.
  std::int64_t elements = std::int64_t{batch} * heads;
  const bool too_large = elements > kMaxTensorElements ||
                         (elements *= seq_len) > kMaxTensorElements ||
                         (elements *= head_dim) > kMaxTensorElements;
  if (too_large)
    throw InputError("batch x heads x seq x head-dim must be at most " +
                     std::to_string(kMaxTensorElements) +
                     " elements per tensor (2^36, 128 GiB in FP16 or BF16; got " + label() + ")");
}

std::string Workload::label() const {
  return "B" + std::to_string(batch) + " H" + std::to_string(heads) + " N" +
         std::to_string(seq_len) + " d" + std::to_string(head_dim) +
         (causal ? " causal " : " full ") + std::string(to_string(pass)) +
         (dtype == DType::kFp16 ? "" : " " + std::string(to_string(dtype)));
}

double Workload::tensor_elements() const {
  return static_cast<double>(batch) * heads * seq_len * head_dim;
}

}  // namespace roofline
