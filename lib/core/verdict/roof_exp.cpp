// The exponential unit's roof (analysis_exp.hpp): a floor of its own, and a roof in FLOP units
// for the row's FLOPs per exponential. A launch judged on its bytes alone has none. Per SM like
// the tail, it binds below it.
#include <cmath>

#include "lib/core/verdict/analysis_exp.hpp"
#include "lib/core/verdict/roof.hpp"

namespace roofline {
namespace {

class ExpUnit final : public Roof {
 public:
  void place(const RoofInputs& in, RowAnalysis& a) const override {
    a.exp = analyze_exp_roof(in.row, in.spec, a.flops, a.measured_clock_hz);
    if (a.exp.present)
      a.time_floor_seconds = std::isnan(a.time_floor_seconds)
                                 ? a.exp.time_floor_seconds
                                 : std::max(a.time_floor_seconds, a.exp.time_floor_seconds);
  }

  void rate(RowAnalysis& a) const override {
    if (!a.exp.present) return;
    a.exp.achieved_per_second = a.exp.exponentials / a.time_seconds;
    a.exp.utilisation = a.exp.achieved_per_second / a.exp.rate_per_second;
  }

  void bind(RowAnalysis& a) const override {
    if (!a.exp.present ||
        a.exp.roof_flops_per_second >= a.attainable_flops_per_second * (1 - 1e-12))
      return;
    a.attainable_flops_per_second = a.exp.roof_flops_per_second;
    a.compute_bound = false;
    a.exp_bound = true;
    a.tail_bound = false;
    a.binding = kExpBinding;
    a.regime = exp_regime();
  }

  void check(const RoofInputs& in, RowAnalysis& a) const override {
    if (in.timed && !in.projection && a.exp.present &&
        a.exp.achieved_per_second > a.exp.rate_per_second * 1.02)
      a.warnings.push_back({NoteKind::kAboveXuRoof, "",
                            "above the XU roof: exponentials or the spec's XU rate are wrong"});
  }
};

}  // namespace

std::unique_ptr<const Roof> exp_unit_roof() {
  return std::make_unique<ExpUnit>();
}

}  // namespace roofline
