// Judging a kernel's outputs against an FP32 reference: flash-attention's rule (error at most
// twice that of a plain implementation of the same function in the same dtype: FP16, or BF16
// for a BF16 workload) with an absolute floor, as
// torch.testing.assert_close and numpy.allclose combine atol and rtol, so that an output whose
// reference is exactly zero (dK with a single key) does not turn rounding into `incorrect`.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "lib/core/report/report.hpp"

namespace roofline {

// Error statistics of one output tensor (all over its `count` elements).
struct OutputErrors {
  std::string name;         // "o", "dq", ...
  std::size_t count = 0;    // elements
  double max_abs = 0;       // max |kernel − reference|
  double l2_diff = 0;       // ‖kernel − reference‖₂
  double l2_ref = 0;        // ‖reference‖₂
  double fp16_max_abs = 0;  // the same for the plain implementation (FP16 or BF16)
  double fp16_l2_diff = 0;
};

// The absolute floor: torch.testing.assert_close's default atol for the dtype times the largest
// RMS among the pass's reference outputs when that is above 1 (an exactly zero output is judged
// on the scale of its siblings). torch's atol is 1e-5 for float16 and for bfloat16 alike (meant
// for values of order 1); against ‖ref‖₂ it adds 1e-5 to the relative error allowed, far below
// either type's own rounding (FP16 ≈ 3e-4 with 11 significand bits, BF16 ≈ 2.4e-3 with 8).
double verification_atol(const std::vector<OutputErrors>& outputs, DType dtype = DType::kFp16);

// Passed when, for every output, ‖err‖₂ ≤ 2·‖err_plain‖₂ + atol·√count and
// max|err| ≤ 2·max|err_plain| + atol, err_plain being the plain implementation's in `dtype`.
// The tolerance is per dtype through that baseline: a BF16 plain implementation rounds S, P
// and O to 8 significand bits, so its error (and the allowance) is about 8× FP16's, which is
// what BF16 kernels lose too; comparing a BF16 kernel with the FP16 baseline would fail every
// correct one. Relative errors are reported against max(‖ref‖₂, atol·√count). The worst
// output (largest ratio to its allowance) is kept.
Verification judge_verification(const std::vector<OutputErrors>& outputs,
                                DType dtype = DType::kFp16);

// "error 3.21e-3 in dk exceeds 2× the FP16 reference's 1.10e-3 (+ atol 9.8e-4)": one line
// (BF16 reference's for a BF16 row).
std::string describe_failure(const Verification& verification, DType dtype = DType::kFp16);

// A number for a sentence: 3 significant digits, scientific outside [1e-3, 1e5).
std::string format_number(double value);

}  // namespace roofline
