#include "lib/core/verdict/analysis_exp.hpp"

#include <cmath>
#include <limits>

#include "lib/core/domain/metric_catalog.hpp"
#include "lib/core/model/exp_model.hpp"
#include "lib/core/model/exp_roof.hpp"
#include "lib/core/report/report.hpp"

namespace roofline {
namespace {
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kLanesPerWarp = 32;  // our kernels issue MUFU with whole warps
}  // namespace

std::string exp_regime() {
  return std::string("exp-bound (") + kExpBinding + ")";
}

ExpRoofAnalysis analyze_exp_roof(const Row& row, const GpuSpec& spec, double flops,
                                 double clock_hz) {
  ExpRoofAnalysis e;
  e.model_exponentials = row.prediction.model_exponentials;
  // A report written before the exponential model has none: the model is a pure function of
  // the bundled kernel and the workload, so it is computed here.
  if (!(e.model_exponentials > 0) && !row.launch.has_value())
    for (const KernelModel& model : kernel_models())
      if (model.name == row.kernel && unsupported_reason(model, row.workload, "").empty())
        e.model_exponentials = predict_exponentials(model, row.workload).exponentials;
  auto counted = row.counters.find(quantity::kXuInstructions);
  if (counted != row.counters.end() && std::isfinite(counted->second)) {
    e.exponentials = counted->second * kLanesPerWarp;
    e.exponentials_source = Source::kMeasured;
    e.exponentials_vs_model =
        e.model_exponentials > 0 ? e.exponentials / e.model_exponentials : kNaN;
  } else {
    e.exponentials = e.model_exponentials > 0 ? e.model_exponentials : kNaN;
    e.exponentials_source = Source::kModel;
    e.exponentials_vs_model = kNaN;
  }
  e.rate_per_second =
      exp_rate_per_second(spec.xu_exp2_per_clock_per_sm, spec.sm_count, spec.boost_clock_mhz * 1e6);
  const double at_clock =
      exp_rate_per_second(spec.xu_exp2_per_clock_per_sm, spec.sm_count, clock_hz);
  e.rate_at_measured_clock = at_clock > 0 ? at_clock : kNaN;
  e.flops_per_exponential = flops_per_exponential(flops, e.exponentials);
  e.roof_flops_per_second = exp_roof_flops_per_second(flops, e.exponentials, e.rate_per_second);
  e.roof_at_measured_clock =
      exp_roof_flops_per_second(flops, e.exponentials, e.rate_at_measured_clock);
  e.time_floor_seconds = exp_time_floor_seconds(e.exponentials, e.rate_per_second);
  e.present = std::isfinite(e.roof_flops_per_second) && e.roof_flops_per_second > 0;
  if (!e.present) {
    e.rate_per_second = e.rate_per_second > 0 ? e.rate_per_second : kNaN;
    e.roof_flops_per_second = kNaN;
    e.time_floor_seconds = kNaN;
  }
  e.achieved_per_second = kNaN;
  e.utilisation = kNaN;
  return e;
}

}  // namespace roofline
