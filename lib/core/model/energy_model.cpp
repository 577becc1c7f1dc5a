#include "lib/core/model/energy_model.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace roofline {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

void check(double value, const char* what) {
  if (!std::isfinite(value) || value < 0)
    throw std::invalid_argument(std::string("energy model: ") + what +
                                " must be finite and not negative");
}

}  // namespace

const EnergyTerm* EnergyModel::dominant() const {
  const auto it = std::max_element(
      terms.begin(), terms.end(),
      [](const EnergyTerm& a, const EnergyTerm& b) { return a.joules < b.joules; });
  return it == terms.end() ? nullptr : &*it;
}

EnergyModel model_energy(const EnergyWork& work, const EnergyCoefficients& c) {
  check(work.seconds, "the time");
  check(c.static_watts, "the static power");
  EnergyModel m;
  m.terms.push_back({EnergyTermKind::kStatic, "static", work.seconds, c.static_watts,
                     work.seconds * c.static_watts, 0});
  for (const auto& [id, flops] : work.flops) {
    check(flops, "a FLOP count");
    if (flops == 0) continue;
    const double* e = c.flop(id);
    if (e == nullptr) {
      m.uncosted.push_back(id);
      continue;
    }
    check(*e, "a coefficient");
    m.terms.push_back({EnergyTermKind::kPipe, id, flops, *e, flops * *e, 0});
  }
  check(work.shared_bytes, "the shared-memory bytes");
  if (!std::isnan(work.exponentials)) {
    check(work.exponentials, "the exponential count");
    if (work.exponentials > 0) {
      if (c.joules_per_exp2 > 0)
        m.terms.push_back({EnergyTermKind::kExp, "xu", work.exponentials, c.joules_per_exp2,
                           work.exponentials * c.joules_per_exp2, 0});
      else
        m.uncosted.push_back("xu");
    }
  }
  if (!std::isnan(work.int_instructions)) {
    check(work.int_instructions, "the integer instruction count");
    if (work.int_instructions > 0) {
      if (c.joules_per_int_instruction > 0)
        m.terms.push_back({EnergyTermKind::kInstructions, "int", work.int_instructions,
                           c.joules_per_int_instruction,
                           work.int_instructions * c.joules_per_int_instruction, 0});
      else
        m.uncosted.push_back("int");
    }
  }
  // Each byte at the deepest level it reached: a level's own bytes less those of the level
  // below it (its bytes travelled through this one too, and its coefficient holds that trip).
  // Written, reduced and bulk-copied bytes at their own prices (the header).
  check(work.bulk_share, "the bulk-copy share");
  check(work.dram_write_bytes, "the DRAM bytes written");
  check(work.l2_reduction_bytes, "the L2 bytes reduced");
  const double* e_dram = c.byte(MemoryLevel::kDram);
  const double load_path = e_dram != nullptr && c.joules_per_bulk_dram_byte > 0
                               ? std::max(0.0, *e_dram - c.joules_per_bulk_dram_byte)
                               : 0.0;
  const double bulk_discount = std::min(1.0, work.bulk_share) * load_path;
  const auto price = [&](double e) { return std::max(0.0, e - bulk_discount); };
  double below = 0;
  for (MemoryLevel level : kAllMemoryLevels) {  // DRAM, L2, L1
    const auto it = work.bytes.find(level);
    if (it == work.bytes.end()) continue;
    check(it->second, "a byte count");
    double charged = std::max(0.0, it->second - below);
    below = it->second;
    if (level == MemoryLevel::kL1) charged += work.shared_bytes;
    if (charged == 0) continue;
    const double* e = c.byte(level);
    if (e == nullptr) {
      m.uncosted.push_back(std::string(to_string(level)));
      continue;
    }
    check(*e, "a coefficient");
    double joules = charged * *e;  // L1: no bytes of other kinds
    if (level == MemoryLevel::kDram) {
      const double written = std::min(charged, work.dram_write_bytes);
      const double e_write = c.joules_per_dram_write_byte > 0 ? c.joules_per_dram_write_byte : *e;
      joules = (charged - written) * price(*e) + written * e_write;
    } else if (level == MemoryLevel::kL2) {
      const double reduced = std::min(charged, work.l2_reduction_bytes);
      const double e_red = c.joules_per_l2_reduction_byte > 0 ? c.joules_per_l2_reduction_byte : *e;
      joules = (charged - reduced) * price(*e) + reduced * e_red;
    }
    // One term per level; its price per byte is the mean of its kinds'.
    m.terms.push_back({EnergyTermKind::kLevel, std::string(to_string(level)), charged,
                       joules / charged, joules, 0});
  }
  for (const EnergyTerm& t : m.terms) m.terms_joules += t.joules;
  for (EnergyTerm& t : m.terms) t.share = m.terms_joules > 0 ? t.joules / m.terms_joules : kNaN;
  m.joules = m.terms_joules;
  m.power_limit_watts = c.power_limit_watts;
  if (c.power_limit_watts > 0 && work.seconds > 0 &&
      m.joules > c.power_limit_watts * work.seconds) {
    m.joules = c.power_limit_watts * work.seconds;
    m.at_power_limit = true;
  }
  return m;
}

double energy_roof_flops_per_joule(double intensity, double joules_per_flop,
                                   double joules_per_dram_byte, double static_watts,
                                   double peak_flops_per_second, double dram_bytes_per_second) {
  if (!(intensity > 0) || !(peak_flops_per_second > 0) || !(dram_bytes_per_second > 0) ||
      !std::isfinite(joules_per_flop) || !std::isfinite(joules_per_dram_byte) ||
      !std::isfinite(static_watts))
    return kNaN;
  const double seconds_per_flop =
      std::max(1 / peak_flops_per_second, 1 / (intensity * dram_bytes_per_second));
  const double joules =
      joules_per_flop + joules_per_dram_byte / intensity + static_watts * seconds_per_flop;
  return joules > 0 ? 1 / joules : kNaN;
}

}  // namespace roofline
