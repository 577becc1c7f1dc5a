#include "lib/core/report/calibration_energy.hpp"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <utility>

#include "lib/core/base/text.hpp"

namespace roofline {

std::vector<std::string> derive_energy_coefficients(CalibrationOverlay& overlay) {
  overlay.energy.reset();
  std::vector<std::string> left_out;
  if (!overlay.static_power || !(overlay.static_power->energy.watts > 0)) return left_out;
  const double static_watts = overlay.static_power->energy.watts;
  // Per target, the measurement with an energy and the highest rate.
  std::vector<const CalibrationMeasurement*> best;
  // The streams that price bytes of their own kind (energy_coefficients.hpp), by id.
  static constexpr std::pair<const char*, double EnergyCoefficients::*> kOwnPrices[] = {
      {kDramBulkId, &EnergyCoefficients::joules_per_bulk_dram_byte},
      {kDramWriteId, &EnergyCoefficients::joules_per_dram_write_byte},
      {kL2ReduceId, &EnergyCoefficients::joules_per_l2_reduction_byte}};
  std::vector<std::pair<const CalibrationMeasurement*, double EnergyCoefficients::*>> own;
  for (const CalibrationMeasurement& m : overlay.measurements) {
    if (!m.energy || !(m.rate_per_second() > 0) || m.sms > 0) continue;
    const auto price = std::find_if(std::begin(kOwnPrices), std::end(kOwnPrices),
                                    [&](const auto& p) { return m.id == p.first; });
    if (price != std::end(kOwnPrices)) {
      own.emplace_back(&m, price->second);
      continue;
    }
    auto same = std::find_if(best.begin(), best.end(), [&](const CalibrationMeasurement* b) {
      return b->target == m.target;
    });
    if (same == best.end())
      best.push_back(&m);
    else if (m.rate_per_second() > (*same)->rate_per_second())
      *same = &m;
  }
  EnergyCoefficients c;
  c.static_watts = static_watts;
  c.power_limit_watts = overlay.static_power->power_limit_watts;
  // A capped compute kernel's share below the cap, where one was measured (the header).
  std::vector<std::string> below_cap;
  for (const CalibrationMeasurement*& m : best) {
    if (!m->flops || !(c.power_limit_watts > 0)) continue;
    const CalibrationMeasurement* share = nullptr;
    for (const CalibrationMeasurement& s : overlay.measurements)
      if (s.sms > 0 && s.share_of == m->id && s.energy && s.rate_per_second() > 0 &&
          s.energy->watts < kAtPowerLimit * c.power_limit_watts &&
          (share == nullptr || s.sms < share->sms))
        share = &s;
    if (share == nullptr) continue;
    below_cap.push_back(m->target + " on " + std::to_string(share->sms) + " SMs (" +
                        format_fixed(share->energy->watts, 0) + " W)");
    m = share;
  }
  for (const CalibrationMeasurement* m : best) {
    const double joules = dynamic_joules_per_unit(m->energy->watts, static_watts,
                                                  m->energy->seconds_per_launch, m->work);
    if (!std::isfinite(joules)) {
      left_out.push_back(m->target + ": the power under " + m->id + " (" +
                         format_fixed(m->energy->watts, 1) + " W) is not above the static power (" +
                         format_fixed(static_watts, 1) + " W), or its time or work is unknown");
      continue;
    }
    if (m->target == kXuTarget)
      c.joules_per_exp2 = joules;
    else if (m->target == kIntTarget)
      c.joules_per_int_instruction = joules;
    else if (auto level = parse_memory_level(m->target))
      c.joules_per_byte[*level] = joules;
    else
      c.joules_per_flop[m->target] = joules;
  }
  for (const auto& [m, field] : own) {
    const double joules = dynamic_joules_per_unit(m->energy->watts, static_watts,
                                                  m->energy->seconds_per_launch, m->work);
    if (std::isfinite(joules))
      c.*field = joules;
    else
      left_out.push_back(m->id + ": the power under it (" + format_fixed(m->energy->watts, 1) +
                         " W) is not above the static power (" + format_fixed(static_watts, 1) +
                         " W), or its time or work is unknown");
  }
  c.source =
      "calibrated on " + overlay.device.name + " (" + overlay.time_utc +
      "): NVML's energy counter while each micro-kernel ran back to back, less the " +
      "static power " + format_fixed(static_watts, 1) + " W (" + overlay.static_power->method +
      ")" +
      (c.power_limit_watts > 0
           ? "; the board's enforced power limit " + format_fixed(c.power_limit_watts, 0) + " W"
           : "") +
      (below_cap.empty()
           ? ""
           : "; priced below the power cap the whole device ran them at: " + join(below_cap, ", "));
  if (!c.joules_per_flop.empty() || !c.joules_per_byte.empty() || c.joules_per_exp2 > 0 ||
      c.joules_per_int_instruction > 0)
    overlay.energy = std::move(c);
  return left_out;
}

}  // namespace roofline
