#include "lib/core/json_write.hpp"

#include <cmath>

namespace roofline {

nlohmann::json json_number(double value) {
  return std::isnan(value) || std::isinf(value) ? nlohmann::json(nullptr) : nlohmann::json(value);
}

nlohmann::json workload_json(const Workload& w) {
  return {{"batch", w.batch},       {"heads", w.heads},   {"seq_len", w.seq_len},
          {"head_dim", w.head_dim}, {"causal", w.causal}, {"pass", to_string(w.pass)},
          {"dtype", w.dtype}};
}

}  // namespace roofline
