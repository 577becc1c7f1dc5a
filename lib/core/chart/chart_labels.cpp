#include "lib/core/chart/chart_labels.hpp"

#include <cmath>
#include <cstdio>

#include "lib/core/base/text.hpp"

namespace roofline {

std::string number_text(double value, int significant) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.*g", significant, value);
  return buffer;
}

std::string decade_text(int exponent) {
  if (exponent >= 0 && exponent <= 5)
    return "1" + std::string(static_cast<std::size_t>(exponent), '0');
  if (exponent < 0 && exponent >= -3)
    return "0." + std::string(static_cast<std::size_t>(-exponent - 1), '0') + "1";
  return "1e" + std::to_string(exponent);
}

std::string bandwidth_text(double bytes_per_second) {
  if (bytes_per_second >= 1e12) return number_text(bytes_per_second / 1e12, 3) + " TB/s";
  return format_fixed(bytes_per_second / 1e9, 0) + " GB/s";
}

std::string peak_text(double flops_per_second) {
  return format_fixed(flops_per_second / 1e12, 1) + " TFLOP/s";
}

std::string seq_text(int n) {
  if (n >= 1024 && n % 1024 == 0) return std::to_string(n / 1024) + "k";
  return std::to_string(n);
}

std::string change_text(double change) {
  const double pct = 100 * change;
  const std::string digits = format_fixed(std::fabs(pct), std::fabs(pct) >= 10 ? 0 : 1);
  if (digits.find_first_not_of("0.") == std::string::npos) return digits + "%";
  return (pct > 0 ? "+" : "-") + digits + "%";
}

}  // namespace roofline
