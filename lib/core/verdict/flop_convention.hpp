// Which FLOPs a view counts: the FlashAttention convention (the work the attention needs,
// 4·B·H·N²·d forward, halved when causal, 2.5× backward: what PyTorch and papers report) or the
// FLOPs the kernel's own pipe executed (counted, else the model's: the roofs' own unit). A view
// (the table, a chart) uses one convention for every FLOP figure it prints, so a ratio of two
// of them never mixes the two: the roofs, in pipe FLOPs, are converted to the view's by the
// row's ratio of its view FLOPs to its pipe FLOPs.
#pragma once

#include <optional>
#include <string_view>

#include "lib/core/report/report.hpp"
#include "lib/core/verdict/analysis.hpp"

namespace roofline {

enum class FlopConvention {
  kAlgorithmic,  // "algorithmic": FlashAttention convention
  kPipe,         // "pipe": executed on the kernel's own pipe
};
std::string_view to_string(FlopConvention convention);
std::optional<FlopConvention> parse_flop_convention(std::string_view text);

struct ViewFlops {
  double flops = 0;  // the row's FLOPs in the view's convention (NaN: none, bandwidth_only)
  // view FLOPs ÷ pipe FLOPs: multiplies a rate or intensity in pipe FLOPs (a roof, a bound)
  // into the view's. 1 in the pipe convention.
  double scale = 1;
  // Asked for the FlashAttention convention, but the row (a profiled launch without an
  // attention workload) has no such count: its pipe FLOPs stand in.
  bool pipe_stand_in = false;
};

ViewFlops view_flops(const Row& row, const RowAnalysis& analysis, FlopConvention convention);

}  // namespace roofline
