#include "lib/core/workload.hpp"

#include "lib/core/errors.hpp"

namespace roofline {

std::string_view to_string(Pass pass) {
  return pass == Pass::kForward ? "fwd" : "bwd";
}

std::optional<Pass> parse_pass(std::string_view text) {
  if (text == "fwd") return Pass::kForward;
  if (text == "bwd") return Pass::kBackward;
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
  if (head_dim != 32 && head_dim != 64 && head_dim != 128)
    throw InputError("head-dim must be 32, 64 or 128 (got " + std::to_string(head_dim) + ")");
  if (dtype != "fp16") throw InputError("dtype must be fp16 (got " + dtype + ")");
}

std::string Workload::label() const {
  return "B" + std::to_string(batch) + " H" + std::to_string(heads) + " N" +
         std::to_string(seq_len) + " d" + std::to_string(head_dim) +
         (causal ? " causal " : " full ") + std::string(to_string(pass));
}

double Workload::tensor_elements() const {
  return static_cast<double>(batch) * heads * seq_len * head_dim;
}

}  // namespace roofline
