// A Workload is one attention problem: batch B, heads H, sequence N, head dim d, causal or not,
// forward or backward pass, FP16.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace roofline {

enum class Pass { kForward, kBackward };
std::string_view to_string(Pass pass);  // "fwd", "bwd"
std::optional<Pass> parse_pass(std::string_view text);

struct Workload {
  int batch = 1;
  int heads = 8;
  int seq_len = 1024;
  int head_dim = 64;
  bool causal = false;
  Pass pass = Pass::kForward;
  std::string dtype = "fp16";

  // Throws InputError with one sentence naming the bad field and value.
  void validate() const;
  // "B1 H8 N1024 d64 causal fwd"
  std::string label() const;
  // Elements of one [B,H,N,d] tensor.
  double tensor_elements() const;

  friend bool operator==(const Workload&, const Workload&) = default;
};

inline constexpr double kBytesPerFp16 = 2.0;
inline constexpr double kBytesPerFp32 = 4.0;

}  // namespace roofline
