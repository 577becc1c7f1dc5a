#include "lib/core/report/verification.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace roofline {
namespace {
// torch.testing.assert_close's default atol: 1e-5 for float16 and for bfloat16.
constexpr double kAtolFp16 = 1e-5;
constexpr double kAtolBf16 = 1e-5;
}  // namespace

std::string format_number(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  char buffer[32];
  const double magnitude = std::fabs(value);
  if (value == 0 || (magnitude >= 1e-3 && magnitude < 1e5))
    std::snprintf(buffer, sizeof buffer, "%.3g", value);
  else
    std::snprintf(buffer, sizeof buffer, "%.2e", value);
  return buffer;
}

double verification_atol(const std::vector<OutputErrors>& outputs, DType dtype) {
  double scale = 0;
  for (const OutputErrors& out : outputs)
    if (out.count > 0)
      scale = std::max(scale, out.l2_ref / std::sqrt(static_cast<double>(out.count)));
  return (dtype == DType::kBf16 ? kAtolBf16 : kAtolFp16) * std::max(1.0, scale);
}

Verification judge_verification(const std::vector<OutputErrors>& outputs, DType dtype) {
  const double atol = verification_atol(outputs, dtype);
  Verification v;
  v.passed = true;
  double worst = -1;
  for (const OutputErrors& out : outputs) {
    const double root_n = std::sqrt(static_cast<double>(std::max<std::size_t>(out.count, 1)));
    const double l2_allowed = 2 * out.fp16_l2_diff + atol * root_n;
    const double max_allowed = 2 * out.fp16_max_abs + atol;
    const bool ok = std::isfinite(out.l2_diff) && std::isfinite(out.max_abs) &&
                    out.l2_diff <= l2_allowed && out.max_abs <= max_allowed;
    const double ratio = std::isfinite(out.l2_diff)
                             ? std::max(out.l2_diff / l2_allowed, out.max_abs / max_allowed)
                             : INFINITY;
    // Keep the worst output: the first failing one, else the one closest to its allowance.
    if ((!ok && v.passed) || (ok == v.passed && ratio > worst)) {
      worst = ratio;
      const double norm = std::max(out.l2_ref, atol * root_n);
      v.relative_l2_error = out.l2_diff / norm;
      v.max_abs_error = out.max_abs;
      v.fp16_relative_l2_error = out.fp16_l2_diff / norm;
      v.fp16_max_abs_error = out.fp16_max_abs;
      v.worst_output = out.name;
    }
    v.passed = v.passed && ok;
  }
  return v;
}

std::string describe_failure(const Verification& v, DType dtype) {
  return "error " + format_number(v.relative_l2_error) + " (max " + format_number(v.max_abs_error) +
         ") in " + v.worst_output + " exceeds 2× the " + (dtype == DType::kBf16 ? "BF16" : "FP16") +
         " reference's " + format_number(v.fp16_relative_l2_error) + " (max " +
         format_number(v.fp16_max_abs_error) + ") plus the absolute floor";
}

}  // namespace roofline
