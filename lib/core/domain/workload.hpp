// A Workload is one attention problem: batch B, heads H, sequence N, head dim d, causal or not,
// forward or backward pass, element type FP16 or BF16.
//
// A decode workload (q_len >= 1) is q_len new query tokens per sequence against a KV cache of
// seq_len tokens at most: H query heads share kv_heads key/value heads, the cache is contiguous
// or paged (page_size tokens a page), sequences may differ in length (kv_lens), and each
// sequence's keys may be split into kv_splits parts (split-KV). Forward only.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace roofline {

enum class Pass { kForward, kBackward };
std::string_view to_string(Pass pass);  // "fwd", "bwd"
std::optional<Pass> parse_pass(std::string_view text);

// Element type of the attention tensors. Both are 2 bytes, so a workload's bytes and FLOPs do
// not depend on it; its tensor ceiling does (ComputePath kTensorFp16 or kTensorBf16).
enum class DType { kFp16, kBf16 };
std::string_view to_string(DType dtype);  // "fp16", "bf16"
std::optional<DType> parse_dtype(std::string_view text);

struct Workload {
  int batch = 1;
  int heads = 8;
  int seq_len = 1024;
  int head_dim = 64;
  bool causal = false;
  Pass pass = Pass::kForward;
  DType dtype = DType::kFp16;
  // Decode fields (all 0 / empty for a prefill workload).
  int q_len = 0;             // new query tokens per sequence; 0: prefill (queries = keys = seq_len)
  int kv_heads = 0;          // key/value heads; 0: heads (a multiple of kv_heads)
  int page_size = 0;         // tokens a page of the KV cache; 0: contiguous
  int kv_splits = 0;         // parts of each sequence's keys; 0: the kernel picks for the GPU's SMs
  std::vector<int> kv_lens;  // each sequence's cache length (batch entries, max = seq_len);
                             // empty: every sequence seq_len long

  bool decode() const { return q_len > 0; }
  int key_heads() const { return kv_heads > 0 ? kv_heads : heads; }
  // A decode sequence's cache length.
  int kv_len(int sequence) const {
    return kv_lens.empty() ? seq_len : kv_lens[static_cast<std::size_t>(sequence)];
  }
  // Σ over sequences of their cache lengths (batch · seq_len unless ragged).
  double total_kv_len() const;

  // Throws InputError with one sentence naming the bad field and value.
  void validate() const;
  // "B1 H8 N1024 d64 causal fwd"; a dtype other than FP16 is appended ("... fwd bf16"), so
  // FP16 labels read as they did before BF16 existed. Decode (forward only, so no pass):
  // "B8 H32/8 Q4 KV8192 d128 causal", then "split4" and "paged16" when set (the mask and the
  // parts first: what a table's rows most often differ in, kept where a narrow table cuts the
  // label) and, for ragged lengths, "KV≤8192 ragged#1f3a" (a hash of the lengths).
  std::string label() const;
  // Elements of one [B,H,N,d] tensor (prefill); decode: of the query tensor [B,H,q_len,d].
  double tensor_elements() const;

  friend bool operator==(const Workload&, const Workload&) = default;

 private:
  void validate_decode() const;
  std::string decode_label() const;
};

inline constexpr double kBytesPerFp16 = 2.0;  // and per BF16
inline constexpr double kBytesPerFp32 = 4.0;

}  // namespace roofline
