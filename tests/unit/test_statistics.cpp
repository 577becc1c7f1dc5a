// Statistics: known values of the distributions, ties and tiny samples, the difference test and
// the detectable change.
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "lib/core/base/statistics.hpp"

using namespace roofline;

TEST_CASE("statistics: median, mean and variance with ties and tiny samples") {
  CHECK(std::isnan(median({})));
  CHECK(median({4.0}) == 4.0);
  CHECK(median({3.0, 1.0}) == 2.0);
  CHECK(median({2.0, 2.0, 1.0, 2.0}) == 2.0);  // ties
  CHECK(median({5.0, 1.0, 3.0, 3.0, 9.0}) == 3.0);
  CHECK(std::isnan(mean({})));
  CHECK(mean({1.0, 2.0, 6.0}) == 3.0);
  CHECK(std::isnan(sample_variance({7.0})));
  CHECK(sample_variance({2.0, 2.0, 2.0}) == 0.0);
  CHECK(sample_variance({1.0, 2.0, 3.0, 4.0, 5.0}) == doctest::Approx(2.5));
}

TEST_CASE("statistics: normal and Student's t distributions against tabulated values") {
  CHECK(normal_cdf(0) == doctest::Approx(0.5));
  CHECK(normal_cdf(1.959963985) == doctest::Approx(0.975).epsilon(1e-9));
  CHECK(normal_cdf(-1) == doctest::Approx(0.158655254).epsilon(1e-8));
  CHECK(normal_quantile(0.975) == doctest::Approx(1.959963985).epsilon(1e-8));
  CHECK(normal_quantile(0.8) == doctest::Approx(0.841621234).epsilon(1e-8));
  CHECK(normal_quantile(0.5) == doctest::Approx(0).epsilon(1e-12));
  CHECK(std::isnan(normal_quantile(1.5)));

  // I_x(2, 3) = 1 − (1 − x)^4 − 4x(1 − x)^3; I_x(1, 1) = x.
  CHECK(incomplete_beta(2, 3, 0.5) == doctest::Approx(0.6875).epsilon(1e-12));
  CHECK(incomplete_beta(2, 3, 0.9) == doctest::Approx(1 - 0.0001 - 4 * 0.9 * 0.001));
  CHECK(incomplete_beta(1, 1, 0.3) == doctest::Approx(0.3));
  CHECK(incomplete_beta(5, 0.5, 0) == 0);
  CHECK(incomplete_beta(5, 0.5, 1) == 1);

  // Two-sided 95% critical values of t.
  CHECK(student_t_quantile(0.975, 1) == doctest::Approx(12.70620474).epsilon(1e-7));
  CHECK(student_t_quantile(0.975, 4) == doctest::Approx(2.776445105).epsilon(1e-8));
  CHECK(student_t_quantile(0.975, 10) == doctest::Approx(2.228138852).epsilon(1e-8));
  CHECK(student_t_quantile(0.8, 8) == doctest::Approx(0.889).epsilon(1e-3));
  CHECK(student_t_cdf(2.228138852, 10) == doctest::Approx(0.975).epsilon(1e-9));
  CHECK(student_t_cdf(-2.776445105, 4) == doctest::Approx(0.025).epsilon(1e-8));
  CHECK(student_t_cdf(0, 3) == doctest::Approx(0.5));
  // Cauchy (df 1): P(T <= 1) = 3/4.
  CHECK(student_t_cdf(1, 1) == doctest::Approx(0.75).epsilon(1e-12));
  // Many degrees of freedom: the normal.
  CHECK(student_t_cdf(1.96, 1e7) == doctest::Approx(normal_cdf(1.96)).epsilon(1e-6));
  CHECK(student_t_cdf(1.96, kInfiniteDf) == normal_cdf(1.96));
}

TEST_CASE("statistics: Welch's difference test") {
  // a: mean 3, s² 2.5; b: mean 5, s² 2.5; n = 5 each: se = 1, df = 8, t = 2.
  const Estimate a = mean_estimate({1, 2, 3, 4, 5});
  const Estimate b = mean_estimate({3, 4, 5, 6, 7});
  CHECK(a.value == 3);
  CHECK(a.variance == doctest::Approx(0.5));
  CHECK(a.df == 4);
  const DifferenceTest d = difference_test(a, b);
  CHECK(d.difference == 2);
  CHECK(d.standard_error == doctest::Approx(1));
  CHECK(d.df == doctest::Approx(8));
  CHECK(d.t == doctest::Approx(2));
  CHECK(d.p_value == doctest::Approx(0.0805162).epsilon(1e-6));
  // Symmetric.
  CHECK(difference_test(b, a).p_value == doctest::Approx(d.p_value));
  CHECK(difference_test(b, a).t == doctest::Approx(-2));

  // Unequal variances: df from Welch–Satterthwaite.
  const Estimate wide = mean_estimate({0, 10, 20});  // variance 100/3, df 2
  const DifferenceTest w = difference_test(a, wide);
  const double va = 0.5, vw = 100.0 / 3;
  CHECK(w.df == doctest::Approx((va + vw) * (va + vw) / (va * va / 4 + vw * vw / 2)));

  // A known extra variance adds to the error but not to the degrees of freedom' terms.
  const DifferenceTest x = difference_test(a, b, 3.0);
  CHECK(x.standard_error == doctest::Approx(2));
  CHECK(x.df == doctest::Approx(16 / (0.25 / 4 + 0.25 / 4)));
}

TEST_CASE("statistics: ties and tiny samples in the difference test") {
  // Every value tied, no extra variance: equal means are no evidence, different ones certain.
  const Estimate twos = mean_estimate({2, 2, 2});
  CHECK(twos.variance == 0);
  CHECK(difference_test(twos, twos).p_value == 1);
  CHECK(difference_test(twos, mean_estimate({3, 3, 3})).p_value == 0);
  // With a known noise floor, a tie is judged against the floor (normal, df infinite).
  const DifferenceTest floor = difference_test(twos, mean_estimate({2.02, 2.02}), 1e-4);
  CHECK(std::isinf(floor.df));
  CHECK(floor.t == doctest::Approx(2));
  CHECK(floor.p_value == doctest::Approx(2 * (1 - normal_cdf(2))).epsilon(1e-9));
  // One value a side: no variance known (df 0); only the extra variance can judge it.
  const Estimate one = mean_estimate({1.0});
  CHECK(one.df == 0);
  CHECK(one.variance == 0);
  CHECK(difference_test(one, mean_estimate({1.1}), 0.01).p_value ==
        doctest::Approx(2 * (1 - normal_cdf(1))).epsilon(1e-9));
}

TEST_CASE("statistics: minimum detectable difference") {
  // Normal, no threshold: (z(0.975) + z(0.8)) · se.
  CHECK(minimum_detectable_difference(0.01, kInfiniteDf, 0.05, 0.8, 0) ==
        doctest::Approx(0.0280158).epsilon(1e-5));
  // A threshold above the critical value: threshold + z(0.8) · se.
  CHECK(minimum_detectable_difference(0.01, kInfiniteDf, 0.05, 0.8, 0.05) ==
        doctest::Approx(0.0584162).epsilon(1e-5));
  // Few degrees of freedom widen it: (t(0.975, 4) + t(0.8, 4)) · se.
  CHECK(minimum_detectable_difference(0.01, 4, 0.05, 0.8, 0) ==
        doctest::Approx(0.01 * (2.776445105 + 0.941)).epsilon(1e-3));
  // No noise: the threshold itself.
  CHECK(minimum_detectable_difference(0, 8, 0.05, 0.8, 0.03) == 0.03);
  CHECK(std::isnan(minimum_detectable_difference(0.01, 8, 0, 0.8, 0.03)));
}
