// The tail roof: the compute ceiling at the share of the chip the launch's grid keeps busy
// (tail_effect.hpp). It names the bound ("tail-bound: ...") only below kTailBindsBelow. The grid's
// tail effect (its CTAs, waves and slots) is placed on every row whose grid is known, rows
// without a compute ceiling too: the advice's occupancy lever reads it for memory-bound grids.
#include <cmath>
#include <limits>

#include "lib/core/model/roofline.hpp"
#include "lib/core/model/tail_effect.hpp"
#include "lib/core/verdict/roof.hpp"

namespace roofline {
namespace {

class Tail final : public Roof {
 public:
  void place(const RoofInputs& in, RowAnalysis& a) const override {
    a.tail_roof_flops_per_second = std::numeric_limits<double>::quiet_NaN();
    std::optional<LaunchGrid> grid;
    if (in.row.launch.has_value())
      grid = launch_grid(*in.row.launch, in.spec);
    else if (in.model != nullptr)
      grid = bundled_grid(*in.model, in.row.workload, in.spec.sm_count);
    if (grid) a.tail = tail_effect(*grid, in.spec.sm_count);
    if (a.bandwidth_only || a.ceiling == nullptr) return;
    if (a.tail && a.tail->efficiency > 0 && a.tail->efficiency < 1) {
      a.tail_roof_flops_per_second = a.peak_flops_per_second * a.tail->efficiency;
      const double floor = seconds_at(a.flops, a.tail_roof_flops_per_second);
      if (floor > a.time_floor_seconds) a.time_floor_seconds = floor;
    }
  }

  void rate(RowAnalysis&) const override {}

  void bind(RowAnalysis& a) const override {
    if (!std::isfinite(a.tail_roof_flops_per_second) ||
        !(a.tail_roof_flops_per_second < a.attainable_flops_per_second))
      return;
    a.attainable_flops_per_second = a.tail_roof_flops_per_second;
    if (a.tail->efficiency < kTailBindsBelow) {
      a.tail_bound = true;
      a.compute_bound = true;
      a.binding = "tail";
      a.regime = "tail-bound: " + a.tail->brief();
    }
  }

  void check(const RoofInputs&, RowAnalysis&) const override {}
};

}  // namespace

std::unique_ptr<const Roof> tail_roof() {
  return std::make_unique<Tail>();
}

}  // namespace roofline
