#include "lib/core/domain/sm_share.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "lib/core/base/errors.hpp"
#include "lib/core/base/text.hpp"

namespace roofline {
namespace {

// past_share_knee's share of the curve's top.
constexpr double kShareKnee = 0.85;

// A level's share curve from (0, 0), each point at least the one before (a measured point
// below an earlier one, noise of one run, does not count).
std::vector<ShareBandwidth> rising(const std::vector<ShareBandwidth>& shares) {
  std::vector<ShareBandwidth> curve{{0, 0}};
  for (const ShareBandwidth& point : shares)
    curve.push_back({point.sms, std::max(point.gbps, curve.back().gbps)});
  return curve;
}

// The curve at `sms` SMs, linear between its points; its top past the last.
double curve_at(const std::vector<ShareBandwidth>& curve, double sms) {
  for (std::size_t i = 1; i < curve.size(); ++i)
    if (sms <= curve[i].sms)
      return curve[i - 1].gbps + (sms - curve[i - 1].sms) / (curve[i].sms - curve[i - 1].sms) *
                                     (curve[i].gbps - curve[i - 1].gbps);
  return curve.back().gbps;
}

// What `sms` SMs draw of the whole device's bandwidth by the level's share curve: at most 1.
double share_of_bandwidth(const std::vector<ShareBandwidth>& shares, int sms) {
  const std::vector<ShareBandwidth> curve = rising(shares);
  return std::min(1.0, curve_at(curve, sms) / curve.back().gbps);
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

bool is_share_of(const GpuSpec& share, const GpuSpec& whole) {
  return share.sm_count < whole.sm_count &&
         share.key == whole.key + "." + std::to_string(share.sm_count) + "sm";
}

double share_curve_gbps(const MemoryLevelSpec& level, double sms) {
  if (level.shares.empty()) return std::numeric_limits<double>::quiet_NaN();
  return curve_at(rising(level.shares), sms);
}

double share_curve_sms(const MemoryLevelSpec& level, double drawn_gbps) {
  if (level.shares.empty() || !(drawn_gbps > 0)) return std::numeric_limits<double>::quiet_NaN();
  const std::vector<ShareBandwidth> curve = rising(level.shares);
  for (std::size_t i = 1; i < curve.size(); ++i)
    if (drawn_gbps <= curve[i].gbps && curve[i].gbps > curve[i - 1].gbps)
      return curve[i - 1].sms + (drawn_gbps - curve[i - 1].gbps) /
                                    (curve[i].gbps - curve[i - 1].gbps) *
                                    (curve[i].sms - curve[i - 1].sms);
  return curve.back().sms;
}

bool past_share_knee(const MemoryLevelSpec& level, double drawn_gbps) {
  return !level.shares.empty() && drawn_gbps >= kShareKnee * rising(level.shares).back().gbps;
}

double share_drawn_gbps(const MemoryLevelSpec& level, int all_sms, double drawn_gbps, int sms) {
  if (all_sms <= 0 || sms <= 0) return std::numeric_limits<double>::quiet_NaN();
  const double needed = share_curve_sms(level, drawn_gbps);
  return std::isnan(needed) ? needed : share_curve_gbps(level, needed * sms / all_sms);
}

std::optional<ShareFit> fit_share_run(const MemoryLevelSpec& level, int all_sms, double bytes_all,
                                      double seconds_all, int few_sms, double bytes_few,
                                      double seconds_few) {
  if (level.shares.empty() || all_sms <= 0 || few_sms <= 0 || few_sms >= all_sms ||
      !(bytes_all > 0) || !(bytes_few > 0) || !(seconds_all > 0) || !(seconds_few > seconds_all))
    return std::nullopt;
  const std::vector<ShareBandwidth> curve = rising(level.shares);
  const auto stream_seconds = [&](double bytes, double sms) {
    return bytes / (curve_at(curve, sms) * 1e9);
  };
  // How much longer the share run took than all the SMs, less what the fit says: falls as
  // per_sm rises (both streams draw more, the few SMs' more steeply), flat once the few SMs
  // reach the curve's top.
  const auto excess = [&](double per_sm) {
    return stream_seconds(bytes_few, per_sm * few_sms) -
           stream_seconds(bytes_all, per_sm * all_sms) - (seconds_few - seconds_all);
  };
  double low = 1e-6;
  double high = static_cast<double>(curve.back().sms) / few_sms;
  if (excess(high) > 0) {
    low = high;  // the share run was no slower than the curve's top allows: per_sm at least this
  } else {
    for (int i = 0; i < 200 && high - low > 1e-9 * high; ++i) {
      const double mid = 0.5 * (low + high);
      (excess(mid) > 0 ? low : high) = mid;
    }
  }
  ShareFit fit;
  fit.per_sm = low;
  fit.fixed_seconds = seconds_all - stream_seconds(bytes_all, fit.per_sm * all_sms);
  if (!(fit.fixed_seconds >= 0) || !std::isfinite(fit.fixed_seconds)) return std::nullopt;
  return fit;
}

double share_fit_seconds(const MemoryLevelSpec& level, const ShareFit& fit, double bytes, int sms) {
  return bytes / (share_curve_gbps(level, fit.per_sm * sms) * 1e9) + fit.fixed_seconds;
}

SpecChoice on_sm_share(SpecChoice choice, int sms) {
  if (!choice.measured.key.empty()) choice.measured = with_sm_count(choice.measured, sms);
  if (!choice.projection) choice.spec = with_sm_count(choice.spec, sms);
  return choice;
}

}  // namespace roofline
