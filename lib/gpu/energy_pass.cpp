#include "lib/gpu/energy_pass.hpp"

#include <algorithm>
#include <chrono>

#include <spdlog/spdlog.h>

#include "lib/core/base/text.hpp"
#include "lib/core/domain/energy.hpp"
#include "lib/gpu/energy_window.hpp"
#include "lib/gpu/nvml.hpp"

namespace roofline::gpu {
namespace {

using Clock = std::chrono::steady_clock;

double since(Clock::time_point origin) {
  return std::chrono::duration<double>(Clock::now() - origin).count();
}

}  // namespace

void collect_energy(RunResult& result, PointLauncher& launcher, const RunOptions& options,
                    void* nvml) {
  if (nvml == nullptr || !nvml::total_energy_mj(nvml)) {
    result.counters += "; energy unavailable: NVML or its energy counter is not available";
    spdlog::warn("energy per launch unavailable: NVML or its energy counter is not available");
    return;
  }
  const EnergyWindow window;
  const Clock::time_point t0 = Clock::now();
  std::size_t measured = 0;
  double coolest = 0, warmest = 0;  // the GPU's temperature over the points, where NVML says
  for (std::size_t i = 0; i < result.rows.size(); ++i) {
    Row& row = result.rows[i];
    if (row.status != RowStatus::kOk || !row.timing) continue;
    if (options.progress)
      options.progress("energy: point " + std::to_string(i + 1) + "/" +
                       std::to_string(result.rows.size()));
    launcher.prepare_again(i);
    const EnergyMeasurement e = measure_back_to_back(
        nvml, launcher.stream().get(), [&launcher, i] { launcher.launch(i); },
        row.timing->median_seconds(), window);
    if (e.watts > 0) {
      row.energy = e;
      ++measured;
    }
    if (e.temperature_c > 0) {
      coolest = coolest > 0 ? std::min(coolest, e.temperature_c) : e.temperature_c;
      warmest = std::max(warmest, e.temperature_c);
    }
  }
  launcher.arena().release();
  result.counters +=
      "; energy: NVML's energy counter over " + format_fixed(window.window_seconds, 1) +
      " s of back-to-back launches per point (after " + format_fixed(window.settle_seconds, 1) +
      " s to settle), " + std::to_string(measured) + (measured == 1 ? " point" : " points") +
      " in " + format_fixed(since(t0), 1) + " s" +
      (warmest > 0
           ? ", GPU at " + format_fixed(coolest, 0) +
                 (warmest > coolest ? "-" + format_fixed(warmest, 0) : std::string()) + " °C"
           : std::string());
}

}  // namespace roofline::gpu
