#include "lib/core/base/statistics.hpp"

#include <algorithm>
#include <cmath>

namespace roofline {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Continued fraction of the incomplete beta function (modified Lentz's method), for
// x < (a + 1) / (a + b + 2), where it converges fast.
double beta_continued_fraction(double a, double b, double x) {
  constexpr double kTiny = 1e-300;
  constexpr double kEpsilon = 1e-15;
  double c = 1;
  double d = 1 - (a + b) * x / (a + 1);
  if (std::fabs(d) < kTiny) d = kTiny;
  d = 1 / d;
  double result = d;
  for (int m = 1; m <= 10000; ++m) {
    const double m2 = 2.0 * m;
    // Even step: d_{2m} = m (b − m) x / ((a + 2m − 1)(a + 2m)).
    double coefficient = m * (b - m) * x / ((a + m2 - 1) * (a + m2));
    d = 1 + coefficient * d;
    c = 1 + coefficient / c;
    if (std::fabs(d) < kTiny) d = kTiny;
    if (std::fabs(c) < kTiny) c = kTiny;
    d = 1 / d;
    result *= d * c;
    // Odd step: d_{2m+1} = −(a + m)(a + b + m) x / ((a + 2m)(a + 2m + 1)).
    coefficient = -(a + m) * (a + b + m) * x / ((a + m2) * (a + m2 + 1));
    d = 1 + coefficient * d;
    c = 1 + coefficient / c;
    if (std::fabs(d) < kTiny) d = kTiny;
    if (std::fabs(c) < kTiny) c = kTiny;
    d = 1 / d;
    const double delta = d * c;
    result *= delta;
    if (std::fabs(delta - 1) < kEpsilon) break;
  }
  return result;
}

// Inverse of a continuous increasing cdf by bisection, after widening the bracket.
template <typename Cdf>
double invert(Cdf cdf, double p) {
  double low = -1, high = 1;
  while (cdf(low) > p && low > -1e300) low *= 2;
  while (cdf(high) < p && high < 1e300) high *= 2;
  for (int i = 0; i < 200; ++i) {
    const double mid = (low + high) / 2;
    (cdf(mid) < p ? low : high) = mid;
    if (high - low <= 1e-14 * std::max(1.0, std::fabs(mid))) break;
  }
  return (low + high) / 2;
}

}  // namespace

double median(std::vector<double> values) {
  if (values.empty()) return kNaN;
  std::sort(values.begin(), values.end());
  const std::size_t mid = values.size() / 2;
  return values.size() % 2 == 1 ? values[mid] : (values[mid - 1] + values[mid]) / 2;
}

double percentile(std::vector<double> values, double fraction) {
  if (values.empty()) return kNaN;
  std::sort(values.begin(), values.end());
  const double position = fraction * static_cast<double>(values.size() - 1);
  const auto lower = static_cast<std::size_t>(std::floor(position));
  const auto upper = static_cast<std::size_t>(std::ceil(position));
  const double weight = position - static_cast<double>(lower);
  return values[lower] * (1 - weight) + values[upper] * weight;
}

double mean(const std::vector<double>& values) {
  if (values.empty()) return kNaN;
  double sum = 0;
  for (double v : values) sum += v;
  return sum / static_cast<double>(values.size());
}

double sample_variance(const std::vector<double>& values) {
  if (values.size() < 2) return kNaN;
  const double m = mean(values);
  double sum = 0;
  for (double v : values) sum += (v - m) * (v - m);
  return sum / static_cast<double>(values.size() - 1);
}

double normal_cdf(double z) {
  return 0.5 * std::erfc(-z / std::sqrt(2.0));
}

double normal_quantile(double p) {
  if (!(p > 0 && p < 1)) return p == 0 ? -INFINITY : (p == 1 ? INFINITY : kNaN);
  return invert(normal_cdf, p);
}

double incomplete_beta(double a, double b, double x) {
  if (!(a > 0 && b > 0) || !(x >= 0 && x <= 1)) return kNaN;
  if (x == 0 || x == 1) return x;
  // x^a (1 − x)^b / (a B(a, b)), in logs.
  const double front = std::exp(std::lgamma(a + b) - std::lgamma(a) - std::lgamma(b) +
                                a * std::log(x) + b * std::log1p(-x));
  if (x < (a + 1) / (a + b + 2)) return front * beta_continued_fraction(a, b, x) / a;
  // Symmetry: I_x(a, b) = 1 − I_{1−x}(b, a).
  return 1 - front * beta_continued_fraction(b, a, 1 - x) / b;
}

double student_t_cdf(double t, double df) {
  if (std::isnan(t) || !(df > 0)) return kNaN;
  if (std::isinf(df)) return normal_cdf(t);
  if (std::isinf(t)) return t > 0 ? 1 : 0;
  // P(|T| > |t|) = I_{df / (df + t²)}(df / 2, 1/2).
  const double tail = 0.5 * incomplete_beta(df / 2, 0.5, df / (df + t * t));
  return t > 0 ? 1 - tail : tail;
}

double student_t_quantile(double p, double df) {
  if (!(p > 0 && p < 1) || !(df > 0)) return kNaN;
  if (std::isinf(df)) return normal_quantile(p);
  return invert([df](double t) { return student_t_cdf(t, df); }, p);
}

Estimate mean_estimate(const std::vector<double>& values) {
  Estimate e;
  e.value = mean(values);
  if (values.size() < 2) {
    e.variance = 0;
    e.df = 0;
    return e;
  }
  e.variance = sample_variance(values) / static_cast<double>(values.size());
  e.df = static_cast<double>(values.size() - 1);
  return e;
}

DifferenceTest difference_test(const Estimate& base, const Estimate& head, double extra_variance) {
  DifferenceTest out;
  out.difference = head.value - base.value;
  const double variance = base.variance + head.variance + std::max(0.0, extra_variance);
  out.standard_error = std::sqrt(variance);
  // Welch–Satterthwaite: (Σ v)² / Σ (v² / df), over the terms with finite df.
  double denominator = 0;
  for (const Estimate* e : {&base, &head})
    if (e->variance > 0 && std::isfinite(e->df)) denominator += e->variance * e->variance / e->df;
  out.df = denominator > 0 ? variance * variance / denominator : kInfiniteDf;
  if (out.standard_error > 0) {
    out.t = out.difference / out.standard_error;
    out.p_value = std::min(1.0, 2 * (1 - student_t_cdf(std::fabs(out.t), out.df)));
  } else {
    // No noise at all: any difference is certain, none is no evidence.
    out.t = out.difference == 0 ? 0 : std::copysign(INFINITY, out.difference);
    out.p_value = out.difference == 0 ? 1 : 0;
  }
  return out;
}

double minimum_detectable_difference(double standard_error, double df, double alpha, double power,
                                     double threshold) {
  if (!(standard_error >= 0) || !(alpha > 0 && alpha < 1) || !(power > 0 && power < 1)) return kNaN;
  if (standard_error == 0) return threshold;
  const double critical = student_t_quantile(1 - alpha / 2, df);
  return std::max(threshold, critical * standard_error) +
         student_t_quantile(power, df) * standard_error;
}

}  // namespace roofline
