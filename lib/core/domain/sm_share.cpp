#include "lib/core/domain/sm_share.hpp"

#include <string>

#include "lib/core/base/errors.hpp"

namespace roofline {

GpuSpec with_sm_count(const GpuSpec& spec, int sms) {
  if (sms < 1 || sms > spec.sm_count)
    throw InputError(spec.key + " has " + std::to_string(spec.sm_count) +
                     " SMs: " + std::to_string(sms) + " is not a share of them (1 to " +
                     std::to_string(spec.sm_count) + ")");
  if (sms == spec.sm_count) return spec;
  const double share = static_cast<double>(sms) / spec.sm_count;
  const std::string of = std::to_string(sms) + " of " + std::to_string(spec.sm_count) + " SMs";
  const std::string scaled = "; × " + of + " (a share of the SMs)";
  GpuSpec out = spec;
  out.key = spec.key + "." + std::to_string(sms) + "sm";
  out.name = spec.name + ", " + of;
  out.aliases.clear();
  out.device_names.clear();
  out.sm_count = sms;
  out.sources["sm_count"] = of + " of the spec (a share of the SMs)";
  for (ComputeCeiling& ceiling : out.compute) {
    ceiling.peak_tflops *= share;
    ceiling.source += scaled;
  }
  for (MemoryLevelSpec& level : out.memory) {
    if (level.level != MemoryLevel::kL1) continue;
    level.bandwidth_gbps *= share;
    level.source += scaled;
  }
  return out;
}

SpecChoice on_sm_share(SpecChoice choice, int sms) {
  if (!choice.measured.key.empty()) choice.measured = with_sm_count(choice.measured, sms);
  if (!choice.projection) choice.spec = with_sm_count(choice.spec, sms);
  return choice;
}

}  // namespace roofline
