// Comparing two reports (or two kernels of one report) row by row, for CI: a verdict per row
// and an exit code that gates the merge.
//
// What is compared:
//   - Deterministic quantities (counted bytes per memory level and FLOPs per pipe, from
//     Row::counters) against a relative tolerance: more than `tolerance` more of any of them is
//     a regression. Tensor FLOPs are compared as one total (mma.sync + wgmma), so moving work
//     from one tensor instruction to the other is reported but is not a regression.
//   - Time, statistically, from the per-repetition samples. A change counts when it is larger
//     than the practical `threshold` (relative change of the median) AND larger than the noise
//     of the two runs:
//       * both sides with >= kMinSamplesForUTest samples: a two-sided Mann–Whitney U test, normal
//         approximation with tie correction and continuity correction (mann_whitney_u below);
//       * otherwise the spreads [min, max] must not overlap. Disjoint ranges are a test too: for
//         n and m samples of one distribution the chance that they do not overlap is
//         2 / C(n+m, n), so with too few samples (fewer than 4 a side) even disjoint ranges are
//         not significant at alpha = 0.05.
//     Verdicts: faster / slower (both), same (neither), ambiguous (one of the two; the note
//     says which).
//   - Rows that stopped working (base ok, head incorrect / too_large / error) are `failed`, a
//     regression; rows that the base could not judge are `not compared`.
//
// Units: times in seconds, tolerances and thresholds as fractions (0.05 = 5%).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "lib/core/report.hpp"
#include "lib/core/row_match.hpp"
#include "lib/core/statistics.hpp"

namespace roofline {

inline constexpr double kDefaultTolerance = 0.01;    // deterministic quantities
inline constexpr double kDefaultThreshold = 0.05;    // time, practical significance
inline constexpr double kSignificanceLevel = 0.05;   // alpha
inline constexpr double kMaxClockDifference = 0.10;  // median SM clock, base vs head
inline constexpr int kMinSamplesForUTest = 9;        // per side

// ---- comparison ------------------------------------------------------------------------------

struct CompareOptions {
  double tolerance = kDefaultTolerance;
  double threshold = kDefaultThreshold;
  double alpha = kSignificanceLevel;
  bool allow_mismatch = false;  // compare across devices / clocks anyway (with a warning)
  // Compare two kernels: base rows of `kernel_base` against head rows of `kernel_head`,
  // matched by workload and spec. Empty: rows are matched by kernel name too. When only one is
  // given, the other defaults to it (compare that kernel alone).
  std::string kernel_base;
  std::string kernel_head;
};

enum class Verdict {
  kFaster,
  kSlower,
  kSame,
  kAmbiguous,
  kFailed,       // base judged, head did not run correctly: a regression
  kNotCompared,  // the base row has no verdict (error, too large, incorrect)
};
std::string_view to_string(Verdict verdict);  // "faster", ..., "failed", "not compared"

enum class SignificanceTest { kMannWhitney, kRanges };
std::string_view to_string(SignificanceTest test);  // "mann-whitney", "ranges"

struct TimeComparison {
  std::size_t base_samples = 0;
  std::size_t head_samples = 0;
  double base_median_seconds = 0;
  double head_median_seconds = 0;
  double base_min_seconds = 0, base_max_seconds = 0;
  double head_min_seconds = 0, head_max_seconds = 0;
  double base_relative_spread = 0;  // Timing::relative_spread
  double head_relative_spread = 0;
  double relative_change = 0;  // head median / base median − 1: positive is slower
  SignificanceTest test = SignificanceTest::kRanges;
  double p_value = 1;
  bool ranges_overlap = true;
  bool exceeds_threshold = false;
  bool significant = false;
  Verdict verdict = Verdict::kSame;
  std::string note;  // for ambiguous: which half of the rule failed
};

// One deterministic quantity, base vs head.
struct QuantityChange {
  std::string id;     // "dram_bytes", "l2_bytes", "tensor_flops", "fp32_flops", ...
  std::string label;  // "DRAM bytes"
  std::string unit;   // "bytes", "flops"
  double base = 0;
  double head = 0;
  double relative_change = 0;  // head / base − 1; +inf when base is 0 and head is not
  bool beyond_tolerance = false;
  bool increased = false;  // beyond tolerance and more: a regression
};

struct RowComparison {
  std::string kernel_base;
  std::string kernel_head;
  Workload workload;
  std::string spec_base;
  std::string spec_head;
  std::size_t base_index = 0;  // into the base report's rows
  std::size_t head_index = 0;
  Verdict verdict = Verdict::kNotCompared;
  std::optional<TimeComparison> time;
  std::vector<QuantityChange> quantities;  // every quantity both sides measured
  std::vector<std::string> notes;          // pipe shifts, quantities measured on one side only
  bool more_work = false;                  // a quantity increased beyond tolerance
  bool regressed = false;                  // slower, failed, or more_work
};

struct UnmatchedRow {
  std::string kernel;
  Workload workload;
  std::string spec_key;
};

struct Comparison {
  std::string base_origin;  // file names, for messages and output
  std::string head_origin;
  CompareOptions options;
  std::string base_device;  // device name, or "analytic model"
  std::string head_device;
  double base_sm_clock_mhz = 0;  // median measured SM clock; NaN when unknown
  double head_sm_clock_mhz = 0;
  std::vector<RowComparison> rows;
  std::vector<UnmatchedRow> only_base;
  std::vector<UnmatchedRow> only_head;
  std::vector<std::string> warnings;  // mismatches compared anyway (--allow-mismatch)

  std::size_t count(Verdict verdict) const;
  std::size_t more_work_count() const;
  bool regressed() const;
  int exit_code() const;  // 1 when any row regressed, else 0
};

// Throws InputError, one line, for reports that cannot be compared: no rows; different devices
// or median SM clocks more than kMaxClockDifference apart (unless options.allow_mismatch, then
// a warning in the result); a matched row with a verdict but no timing samples.
Comparison compare_reports(const Report& base, const Report& head, const CompareOptions& options,
                           const std::string& base_origin, const std::string& head_origin);

// Median measured SM clock over the report's rows, in MHz (counter sm_clock_hz, else the
// timing's clocks); NaN when no row has one.
double median_sm_clock_mhz(const Report& report);

}  // namespace roofline
