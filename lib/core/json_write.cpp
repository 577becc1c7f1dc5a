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

nlohmann::json launch_json(const KernelLaunch& l) {
  return {{"mangled_name", l.mangled_name},
          {"demangled_name", l.demangled_name},
          {"nvtx_range", l.nvtx_range},
          {"grid", l.grid},
          {"block", l.block},
          {"registers_per_thread", l.registers_per_thread},
          {"static_shared_bytes", l.static_shared_bytes},
          {"dynamic_shared_bytes", l.dynamic_shared_bytes},
          {"index", l.index},
          {"stream_id", l.stream_id},
          {"process_id", l.process_id},
          {"process", l.process},
          {"graph", l.graph},
          {"workload_known", l.workload_known}};
}

}  // namespace roofline
