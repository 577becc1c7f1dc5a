#include "lib/core/domain/energy.hpp"

#include <algorithm>
#include <cstddef>

namespace roofline {

EnergyMeasurement energy_from_readings(const std::vector<double>& seconds,
                                       const std::vector<double>& millijoules, double from,
                                       double to, double seconds_per_launch) {
  EnergyMeasurement out;
  out.seconds_per_launch = seconds_per_launch;
  std::vector<std::size_t> in;
  for (std::size_t i = 0; i < seconds.size() && i < millijoules.size(); ++i)
    if (seconds[i] >= from && seconds[i] <= to) in.push_back(i);
  if (in.size() < 2) return out;
  const std::size_t a = in.front(), b = in.back();
  out.window_seconds = seconds[b] - seconds[a];
  if (!(out.window_seconds > 0)) return EnergyMeasurement{0, 0, seconds_per_launch, 0, 0, 0};
  out.updates = static_cast<int>(in.size()) - 1;
  out.watts = (millijoules[b] - millijoules[a]) * 1e-3 / out.window_seconds;
  out.joules_per_launch = out.watts * seconds_per_launch;
  std::vector<double> steps;
  for (std::size_t k = 1; k < in.size(); ++k) {
    const double dt = seconds[in[k]] - seconds[in[k - 1]];
    if (dt > 0) steps.push_back((millijoules[in[k]] - millijoules[in[k - 1]]) * 1e-3 / dt);
  }
  if (steps.size() >= 2) {
    std::sort(steps.begin(), steps.end());
    const auto at = [&](double q) {
      const double x = q * static_cast<double>(steps.size() - 1);
      const auto lo = static_cast<std::size_t>(x);
      const std::size_t hi = std::min(lo + 1, steps.size() - 1);
      return steps[lo] + (x - static_cast<double>(lo)) * (steps[hi] - steps[lo]);
    };
    const double median = at(0.5);
    out.relative_spread = median > 0 ? (at(0.75) - at(0.25)) / 2 / median : 0;
  }
  return out;
}

}  // namespace roofline
