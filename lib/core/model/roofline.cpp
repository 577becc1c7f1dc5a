#include "lib/core/model/roofline.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "lib/core/base/text.hpp"

namespace roofline {

namespace {
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
}

double arithmetic_intensity(double flops, double bytes) {
  return bytes > 0 ? flops / bytes : kNaN;
}

double ridge_point(double peak_flops_per_second, double bandwidth_bytes_per_second) {
  return bandwidth_bytes_per_second > 0 ? peak_flops_per_second / bandwidth_bytes_per_second : kNaN;
}

double attainable_flops_per_second(double intensity, double bandwidth_bytes_per_second,
                                   double peak_flops_per_second) {
  if (std::isnan(intensity) || std::isnan(bandwidth_bytes_per_second)) return kNaN;
  return std::min(peak_flops_per_second, intensity * bandwidth_bytes_per_second);
}

double ridge_factor(double intensity, double ridge) {
  return ridge > 0 ? intensity / ridge : kNaN;
}

std::string describe_ridge_factor(double factor) {
  if (std::isnan(factor) || factor <= 0) return "-";
  if (factor > 0.95 && factor < 1.05) return "at ridge";
  if (factor < 1) return format_fixed(1 / factor, 1) + "× below";
  return format_fixed(factor, 1) + "× above";
}

double seconds_at(double work, double rate_per_second) {
  return rate_per_second > 0 ? work / rate_per_second : kNaN;
}

double peak_at_clock(double peak_flops_per_second, double spec_clock_hz, double clock_hz) {
  if (!(spec_clock_hz > 0) || std::isnan(clock_hz)) return kNaN;
  return peak_flops_per_second * clock_hz / spec_clock_hz;
}

}  // namespace roofline
