#include "lib/core/domain/sm_share.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include "lib/core/base/errors.hpp"
#include "lib/core/base/text.hpp"

namespace roofline {
namespace {

// What `sms` SMs draw of the whole device's bandwidth by the level's share curve: linear
// between its points, from (0, 0) to the last point (all SMs); 1 at or above the last.
double share_of_bandwidth(const std::vector<ShareBandwidth>& shares, int sms) {
  const double whole = shares.back().gbps;
  ShareBandwidth below{0, 0};
  for (const ShareBandwidth& point : shares) {
    if (sms <= point.sms) {
      const double t = static_cast<double>(sms - below.sms) / (point.sms - below.sms);
      return std::min(1.0, (below.gbps + t * (point.gbps - below.gbps)) / whole);
    }
    below = point;
  }
  return 1.0;
}

std::string gbps_text(double gbps) {
  return format_fixed(gbps, 0) + " GB/s";
}

}  // namespace

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
    if (level.level == MemoryLevel::kL1) {
      level.bandwidth_gbps *= share;
      level.source += scaled;
    } else if (!level.shares.empty()) {
      // A level all SMs share: what this many SMs drew of it when they ran alone.
      const double drawn = share_of_bandwidth(level.shares, sms);
      level.bandwidth_gbps *= drawn;
      std::string measured;
      for (const ShareBandwidth& point : level.shares)
        measured += (measured.empty() ? "" : ", ") + std::to_string(point.sms) + " SMs " +
                    gbps_text(point.gbps);
      level.source += "; × " + format_fixed(drawn, 3) + ": what " + of +
                      " draw of it, linear between the shares measured (" + measured + "; " +
                      level.shares_source + ")";
      level.shares.clear();  // a share of the share was never measured
      level.shares_source.clear();
    }
  }
  return out;
}

SpecChoice on_sm_share(SpecChoice choice, int sms) {
  if (!choice.measured.key.empty()) choice.measured = with_sm_count(choice.measured, sms);
  if (!choice.projection) choice.spec = with_sm_count(choice.spec, sms);
  return choice;
}

}  // namespace roofline
