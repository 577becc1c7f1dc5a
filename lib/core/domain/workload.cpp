#include "lib/core/domain/workload.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdio>

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
  validate_decode();
}

void Workload::validate_decode() const {
  const bool decode_field = kv_heads != 0 || page_size != 0 || kv_splits != 0 || !kv_lens.empty();
  if (q_len == 0) {
    if (decode_field)
      throw InputError(
          "kv-heads, page-size, kv-splits and kv-lens describe decode workloads: give q-len too");
    return;
  }
  if (q_len < 1 || q_len > kMaxDecodeQueryLen)
    throw InputError("q-len must be 1 to " + std::to_string(kMaxDecodeQueryLen) + " (got " +
                     std::to_string(q_len) + ")");
  if (pass != Pass::kForward) throw InputError("decode workloads (q-len) have a forward pass only");
  if (head_dim != 64 && head_dim != 128)
    throw InputError("decode workloads need head-dim 64 or 128 (got " + std::to_string(head_dim) +
                     ")");
  if (kv_heads < 0 || kv_heads > heads || (kv_heads > 0 && heads % kv_heads != 0))
    throw InputError("kv-heads must divide heads (" + std::to_string(heads) + "; got " +
                     std::to_string(kv_heads) + ")");
  if (page_size != 0 && (page_size < 16 || page_size > 256 || (page_size & (page_size - 1)) != 0))
    throw InputError("page-size must be 0 (contiguous) or a power of two from 16 to 256 (got " +
                     std::to_string(page_size) + ")");
  if (kv_splits < 0 || kv_splits > kMaxDecodeSplits)
    throw InputError("kv-splits must be 0 (chosen for the GPU) to " +
                     std::to_string(kMaxDecodeSplits) + " (got " + std::to_string(kv_splits) + ")");
  if (!kv_lens.empty()) {
    if (kv_lens.size() != static_cast<std::size_t>(batch))
      throw InputError("kv-lens needs one length per sequence (batch " + std::to_string(batch) +
                       "; got " + std::to_string(kv_lens.size()) + ")");
    int longest = 0;
    for (int n : kv_lens) {
      if (n < q_len || n > seq_len)
        throw InputError("each of kv-lens must be from q-len (" + std::to_string(q_len) +
                         ") to seq (" + std::to_string(seq_len) + "; got " + std::to_string(n) +
                         ")");
      longest = std::max(longest, n);
    }
    if (longest != seq_len)
      throw InputError("seq must be the longest of kv-lens (" + std::to_string(longest) + "; got " +
                       std::to_string(seq_len) + ")");
  } else if (seq_len < q_len) {
    throw InputError("seq (the KV cache's length) must be at least q-len (" +
                     std::to_string(q_len) + "; got " + std::to_string(seq_len) + ")");
  }
}

double Workload::total_kv_len() const {
  if (kv_lens.empty()) return static_cast<double>(batch) * seq_len;
  double total = 0;
  for (int n : kv_lens) total += n;
  return total;
}

std::string Workload::label() const {
  if (decode()) return decode_label();
  return "B" + std::to_string(batch) + " H" + std::to_string(heads) + " N" +
         std::to_string(seq_len) + " d" + std::to_string(head_dim) +
         (causal ? " causal " : " full ") + std::string(to_string(pass)) +
         (dtype == DType::kFp16 ? "" : " " + std::string(to_string(dtype)));
}

std::string Workload::decode_label() const {
  std::string kv = "KV" + std::to_string(seq_len);
  if (!kv_lens.empty()) {
    // FNV-1a of the lengths: rows of different ragged batches get different labels.
    std::uint32_t hash = 2166136261u;
    for (int n : kv_lens) {
      hash = (hash ^ static_cast<std::uint32_t>(n)) * 16777619u;
    }
    char tag[8];
    std::snprintf(tag, sizeof tag, "%04x", static_cast<unsigned>((hash ^ (hash >> 16)) & 0xffffu));
    kv = "KV≤" + std::to_string(seq_len) + " ragged#" + tag;
  }
  return "B" + std::to_string(batch) + " H" + std::to_string(heads) + "/" +
         std::to_string(key_heads()) + " Q" + std::to_string(q_len) + " " + kv + " d" +
         std::to_string(head_dim) + (causal ? " causal" : "") +
         (kv_splits > 0 ? " split" + std::to_string(kv_splits) : "") +
         (page_size > 0 ? " paged" + std::to_string(page_size) : "") +
         (dtype == DType::kFp16 ? "" : " " + std::string(to_string(dtype)));
}

double Workload::tensor_elements() const {
  return static_cast<double>(batch) * heads * (decode() ? q_len : seq_len) * head_dim;
}

}  // namespace roofline
