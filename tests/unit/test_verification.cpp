// Verification verdicts at the corners: exact zeros in the reference, readable numbers.
#include <doctest/doctest.h>

#include <cmath>

#include "lib/core/report/verification.hpp"

using namespace roofline;

TEST_CASE("verification: an exactly zero reference output passes on its siblings' scale") {
  // run --verify --seq 1 --pass bwd: dK is exactly 0 in the reference (softmax over one key);
  // the kernel returns 6e-8, the plain FP16 implementation exactly 0.
  const std::size_t n = 64;  // one row of d = 64
  const OutputErrors dq{"dq", n, 2e-4, 8e-4, 1.0, 1.5e-4, 6e-4};
  const OutputErrors dk{"dk", n, 6e-8, 6e-8 * 8, 0.0, 0.0, 0.0};
  const OutputErrors dv{"dv", n, 3e-4, 1e-3, 2.0, 2e-4, 8e-4};
  const Verification v = judge_verification({dq, dk, dv});
  CHECK(v.passed);
  CHECK(std::isfinite(v.relative_l2_error));
  CHECK(v.relative_l2_error < 1);
  // The floor: 1e-5 at unit scale (the largest reference RMS here is dv's 2/√64 = 0.25).
  CHECK(verification_atol({dq, dk, dv}) == doctest::Approx(1e-5));
  const OutputErrors large{"dv", n, 3e-2, 1e-1, 800.0, 2e-2, 8e-2};  // RMS 100
  CHECK(verification_atol({dq, large}) == doctest::Approx(1e-3));
}

TEST_CASE("verification: a zero output that is wrong on the outputs' scale still fails") {
  const std::size_t n = 64;
  const OutputErrors dq{"dq", n, 2e-4, 8e-4, 1.0, 1.5e-4, 6e-4};
  const OutputErrors dk{"dk", n, 0.05, 0.2, 0.0, 0.0, 0.0};
  const Verification v = judge_verification({dq, dk});
  CHECK_FALSE(v.passed);
  CHECK(v.worst_output == "dk");
  const std::string message = describe_failure(v);
  CHECK(message.find("in dk") != std::string::npos);
  CHECK(message.size() < 160);  // no 30-digit numbers
}

TEST_CASE("verification: twice the FP16 error is the limit away from zero") {
  const OutputErrors ok{"o", 1 << 20, 1e-3, 0.9, 1000.0, 6e-4, 0.5};
  CHECK(judge_verification({ok}).passed);
  const OutputErrors bad{"o", 1 << 20, 1e-3, 1.5, 1000.0, 6e-4, 0.5};  // 3× the FP16 error
  CHECK_FALSE(judge_verification({bad}).passed);
  const OutputErrors nan{"o", 16, NAN, NAN, 1.0, 1e-4, 1e-4};
  CHECK_FALSE(judge_verification({nan}).passed);
}

TEST_CASE("verification: numbers read as numbers") {
  CHECK(format_number(3.2098e23) == "3.21e+23");
  CHECK(format_number(0.00123) == "0.00123");
  CHECK(format_number(6e-8) == "6.00e-08");
  CHECK(format_number(12.5) == "12.5");
  CHECK(format_number(0) == "0");
  CHECK(format_number(NAN) == "nan");
}
