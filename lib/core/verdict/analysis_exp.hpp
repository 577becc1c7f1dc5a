// The exponential roof of a row (model/exp_roof.hpp): the multi-function unit as a ceiling in
// FLOP units for the row's own FLOPs per exponential. Counted exponentials (the XU pipe's warp
// instructions × 32, full set) where the row has them, else the model's (exp_model.hpp).
#pragma once

#include <string>

#include "lib/core/domain/gpu_spec.hpp"
#include "lib/core/report/report.hpp"

namespace roofline {

struct ExpRoofAnalysis {
  bool present = false;     // the spec has an XU rate and the row exponentials and FLOPs
  double exponentials = 0;  // counted (XU instructions × 32) or the model's
  Source exponentials_source{};
  double model_exponentials = 0;
  double exponentials_vs_model = 0;   // counted ÷ model (NaN when not counted)
  double flops_per_exponential = 0;   // the row's roofline FLOPs ÷ exponentials
  double rate_per_second = 0;         // exp2 results per second at the spec's boost clock
  double rate_at_measured_clock = 0;  // NaN when the clock is unknown
  double roof_flops_per_second = 0;   // rate × FLOPs per exponential
  double roof_at_measured_clock = 0;  // NaN when the clock is unknown
  double time_floor_seconds = 0;      // exponentials ÷ rate
  double achieved_per_second = 0;     // exponentials ÷ time
  double utilisation = 0;             // achieved ÷ rate (spec clock)
};

// `flops`: the row's FLOPs on its binding path; `clock_hz`: the measured SM clock (NaN when
// unknown). Not present (and all numbers NaN) without an XU rate, exponentials or FLOPs.
ExpRoofAnalysis analyze_exp_roof(const Row& row, const GpuSpec& spec, double flops,
                                 double clock_hz);

// "exp-bound (XU)": the regime when the exponential roof is the lowest.
inline constexpr const char* kExpBinding = "XU";
std::string exp_regime();

}  // namespace roofline
