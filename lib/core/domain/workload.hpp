// A Workload is one attention problem: batch B, heads H, sequence N, head dim d, causal or not,
// forward or backward pass, element type FP16 or BF16.
#pragma once

#include <optional>
#include <string>
#include <string_view>

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

  // Throws InputError with one sentence naming the bad field and value.
  void validate() const;
  // "B1 H8 N1024 d64 causal fwd"; a dtype other than FP16 is appended ("... fwd bf16"), so
  // FP16 labels read as they did before BF16 existed.
  std::string label() const;
  // Elements of one [B,H,N,d] tensor.
  double tensor_elements() const;

  friend bool operator==(const Workload&, const Workload&) = default;
};

inline constexpr double kBytesPerFp16 = 2.0;  // and per BF16
inline constexpr double kBytesPerFp32 = 4.0;

}  // namespace roofline
