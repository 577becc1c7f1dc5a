// Statistics for comparing measurements: pure functions on samples and distributions, no report
// types. Used by the noise model (noise_model.hpp) and the verdicts (compare.hpp).
#pragma once

#include <cstddef>
#include <limits>
#include <vector>

namespace roofline {

inline constexpr double kInfiniteDf = std::numeric_limits<double>::infinity();

// Median (the mean of the two middle values for an even count); NaN for an empty sample.
double median(std::vector<double> values);
// Linearly interpolated percentile, `fraction` in [0, 1] (0.5: the median); NaN for an empty
// sample.
double percentile(std::vector<double> values, double fraction);
// Arithmetic mean; NaN for an empty sample.
double mean(const std::vector<double>& values);
// Unbiased sample variance (n − 1 in the denominator); NaN for fewer than two values.
double sample_variance(const std::vector<double>& values);

// Standard normal distribution: P(Z <= z), and its inverse for 0 < p < 1.
double normal_cdf(double z);
double normal_quantile(double p);

// Regularised incomplete beta function I_x(a, b), a, b > 0, 0 <= x <= 1 (continued fraction).
double incomplete_beta(double a, double b, double x);

// Student's t distribution with `df` > 0 degrees of freedom (kInfiniteDf: the normal):
// P(T <= t), and its inverse for 0 < p < 1.
double student_t_cdf(double t, double df);
double student_t_quantile(double p, double df);

// An estimate with the variance of its error and that variance's degrees of freedom
// (kInfiniteDf for a variance known in advance).
struct Estimate {
  double value = 0;
  double variance = 0;
  double df = kInfiniteDf;
};

// Estimate of a mean from a sample: the sample mean, variance s²/n with n − 1 degrees of
// freedom. One value: variance 0 with 0 degrees of freedom (unknown noise).
Estimate mean_estimate(const std::vector<double>& values);

// Test of head.value − base.value against 0 when the two errors are independent and
// `extra_variance` (known, e.g. a noise floor) adds to them: Welch's t with the
// Welch–Satterthwaite degrees of freedom (terms with infinite df add to the variance only).
struct DifferenceTest {
  double difference = 0;      // head − base
  double standard_error = 0;  // sqrt of the summed variances
  double df = kInfiniteDf;
  double t = 0;        // difference / standard_error (0 when both are 0)
  double p_value = 1;  // two-sided
};
DifferenceTest difference_test(const Estimate& base, const Estimate& head,
                               double extra_variance = 0);

// Smallest true difference that a difference_test with this standard error and df detects with
// probability `power`, when detection needs both p < alpha and |difference| > threshold:
//   max(threshold, t(1 − alpha/2) · se) + t(power) · se.
double minimum_detectable_difference(double standard_error, double df, double alpha, double power,
                                     double threshold);

}  // namespace roofline
