// The plain numbers of a row's model and verification blocks in report JSON, key and member:
// one table for the writer (writers/row_json.cpp) and the reader (report/row_read.cpp) alike.
#pragma once

#include "lib/core/base/limits.hpp"
#include "lib/core/report/report.hpp"
#include "lib/core/report/verification.hpp"

namespace roofline::row_fields {

struct PredictionNumber {
  const char* key;
  double Prediction::*member;
  const Bound* bound;
};
inline constexpr PredictionNumber kModelNumbers[] = {
    {"algorithmic_flops", &Prediction::algorithmic_flops, &kFlops},
    {"flops", &Prediction::model_flops, &kFlops},
    {"dram_bytes", &Prediction::model_dram_bytes, &kBytes},
    {"compulsory_dram_bytes", &Prediction::compulsory_dram_bytes, &kBytes},
};

struct VerificationNumber {
  const char* key;
  double Verification::*member;
};
inline constexpr VerificationNumber kVerificationNumbers[] = {
    {"relative_l2_error", &Verification::relative_l2_error},
    {"max_abs_error", &Verification::max_abs_error},
    {"fp16_relative_l2_error", &Verification::fp16_relative_l2_error},
    {"fp16_max_abs_error", &Verification::fp16_max_abs_error},
};

}  // namespace roofline::row_fields
