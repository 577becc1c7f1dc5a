#include "lib/core/verdict/flop_convention.hpp"

#include <cmath>

namespace roofline {

std::string_view to_string(FlopConvention convention) {
  return convention == FlopConvention::kPipe ? "pipe" : "algorithmic";
}

std::optional<FlopConvention> parse_flop_convention(std::string_view text) {
  if (text == "algorithmic") return FlopConvention::kAlgorithmic;
  if (text == "pipe") return FlopConvention::kPipe;
  return std::nullopt;
}

ViewFlops view_flops(const Row& row, const RowAnalysis& a, FlopConvention convention) {
  ViewFlops view;
  view.flops = a.flops;
  if (convention == FlopConvention::kPipe) return view;
  if (!has_workload(row) || !(a.algorithmic_flops > 0)) {
    view.pipe_stand_in = !a.bandwidth_only;
    return view;
  }
  view.flops = a.algorithmic_flops;
  view.scale = a.algorithmic_flops / a.flops;
  return view;
}

}  // namespace roofline
