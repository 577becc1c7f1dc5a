#include <doctest/doctest.h>

#include <cmath>

#include "lib/core/model/roofline.hpp"

using namespace roofline;

TEST_CASE("roofline: intensity, ridge, attainable, factor") {
  CHECK(arithmetic_intensity(1000, 10) == 100);
  CHECK(std::isnan(arithmetic_intensity(1000, 0)));
  CHECK(ridge_point(312e12, 2039e9) == doctest::Approx(153.016).epsilon(1e-5));
  CHECK(ridge_point(989.4e12, 3350e9) == doctest::Approx(295.34).epsilon(1e-4));
  // Below the ridge the slope binds, above it the ceiling.
  CHECK(attainable_flops_per_second(64, 2039e9, 312e12) == doctest::Approx(130.496e12));
  CHECK(attainable_flops_per_second(1000, 2039e9, 312e12) == 312e12);
  CHECK(ridge_factor(20, 153) == doctest::Approx(0.130719));
  CHECK(describe_ridge_factor(4.6 / 35) == "7.6× below");
  CHECK(describe_ridge_factor(2.1) == "2.1× above");
  CHECK(describe_ridge_factor(1.01) == "at ridge");
  CHECK(describe_ridge_factor(std::nan("")) == "-");
  CHECK(seconds_at(2e12, 1e12) == 2);
  CHECK(peak_at_clock(713.7e12, 1980e6, 1800e6) == doctest::Approx(648.818e12));
}
