// Comparing two reports (or two kernels of one report) row by row, for CI: a verdict per row
// and an exit code that gates the merge. The noise each verdict is judged against is
// noise_model.hpp's; the statistics are statistics.hpp's.
//
// What is compared:
//   - Time. Each side's time is the mean log of its round medians (TimeSide); the change is
//     exp(head − base) − 1. It is tested with Welch's t on those logs, each side's between-round
//     variance plus the process-noise floor of both (difference_test). A change counts when it
//     exceeds the practical `threshold` AND p < alpha:
//       faster / slower  both;  same  |change| <= threshold (a real but smaller change gets a
//       note);  ambiguous  |change| > threshold but p >= alpha: this pair cannot tell.
//     Every row also gets the smallest change it could have detected with probability `power`
//     (minimum_detectable_difference).
//   - Counted quantities (QuantityDef), when both sides counted them: a gated quantity that
//     grows by more than quantity_margin (tolerance + both reports' noise) is "more work", a
//     regression, except FLOPs of one pipe when the total counted FLOPs did not grow beyond the
//     tolerance (work moved between pipes) and any quantity the base counted as 0 (new work on
//     another pipe): those are notes. On a row that is significantly `faster`, more work is a
//     note too (the time says what the extra work cost), unless fail_on_more_work. A row of
//     the same speed (or ambiguous) that does more work stays a regression.
//   - Rows that stopped working (base ok, head incorrect / too_large / error) are `failed`, a
//     regression; rows that the base could not judge are `not compared`.
//
// Units: times in seconds, tolerances and thresholds as fractions (0.05 = 5%).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "lib/core/base/statistics.hpp"
#include "lib/core/compare/noise_model.hpp"
#include "lib/core/compare/row_match.hpp"
#include "lib/core/report/report.hpp"

namespace roofline {

inline constexpr double kDefaultTolerance = 0.01;    // counted quantities
inline constexpr double kDefaultThreshold = 0.04;    // time, practical significance
inline constexpr double kSignificanceLevel = 0.05;   // alpha
inline constexpr double kDefaultPower = 0.80;        // for the detectable change
inline constexpr double kMaxClockDifference = 0.10;  // median SM clock, base vs head

struct CompareOptions {
  double tolerance = kDefaultTolerance;
  double threshold = kDefaultThreshold;
  double alpha = kSignificanceLevel;
  double power = kDefaultPower;
  NoiseModel noise;
  bool allow_mismatch = false;  // compare across devices / clocks anyway (with a warning)
  // More work (a gated quantity beyond its margin) is a regression even on a row that is
  // significantly faster; without it such a row is `faster` and the extra work a note.
  bool fail_on_more_work = false;
  // Compare two kernels: base rows of `kernel_base` against head rows of `kernel_head`,
  // matched by workload and spec. Empty: rows are matched by kernel name too. When only one is
  // given, the other defaults to it (compare that kernel alone).
  std::string kernel_base;
  std::string kernel_head;
  // Two `profile` reports are compared by group of launches (launch_groups.hpp), not launch by
  // launch; false keeps the launches apart (the chart's arrows).
  bool group_launches = true;
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

struct TimeComparison {
  TimeSide base;
  TimeSide head;
  double relative_change = 0;  // exp(head − base log centers) − 1: positive is slower
  double standard_error = 0;   // of the log difference (about the relative change's)
  double df = kInfiniteDf;     // Welch–Satterthwaite
  double p_value = 1;          // two-sided
  bool exceeds_threshold = false;
  bool significant = false;
  // Smallest slowdown (relative) this pair detects with probability `power` (never below the
  // threshold).
  double detectable_change = 0;
  Verdict verdict = Verdict::kSame;
  std::string note;  // ambiguous: why; same: a real change below the threshold
};

// One counted quantity, base vs head.
struct QuantityChange {
  std::string id;     // QuantityDef::id
  std::string label;  // "L2 bytes"
  std::string unit;   // "bytes", "flops"
  QuantityKind kind = QuantityKind::kExact;
  bool gated = true;
  double base = 0;
  double head = 0;
  std::size_t base_counts = 1;  // ranges behind each value
  std::size_t head_counts = 1;
  double base_spread = 0;  // (max − min) / value over those ranges
  double head_spread = 0;
  double relative_change = 0;  // head / base − 1; +inf when base is 0 and head is not
  double margin = 0;           // relative growth beyond which a gated quantity counts as more
  bool changed = false;        // |relative_change| beyond the margin (tolerance when not gated)
  bool increased = false;      // more work: a regression
};

struct RowComparison {
  std::string kernel_base;
  std::string kernel_head;
  Workload workload;
  std::string point;  // the workload's label, or a launch group's (launch_group_label)
  std::string spec_base;
  std::string spec_head;
  std::size_t base_index = 0;  // into the base report's rows
  std::size_t head_index = 0;
  Verdict verdict = Verdict::kNotCompared;
  std::optional<TimeComparison> time;
  std::vector<QuantityChange> quantities;  // every quantity both sides measured
  std::vector<std::string> notes;          // pipe shifts, quantities measured on one side only
  bool more_work = false;                  // a gated quantity increased beyond its margin
  bool regressed = false;  // slower, failed, or more_work (on a faster row: fail_on_more_work)
};

struct UnmatchedRow {
  std::string kernel;
  Workload workload;
  std::string point;
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
  std::vector<std::string> notes;     // about the method, e.g. a report timed in one round

  std::size_t count(Verdict verdict) const;
  // Rows with a time comparison, and how many of them could detect a change of `level`.
  std::size_t timed_count() const;
  std::size_t detectable_count(double level) const;
  std::size_t more_work_count() const;
  bool regressed() const;
  int exit_code() const;  // 1 when any row regressed, else 0
};

// Throws InputError, one line, for reports that cannot be compared: no rows; different devices
// or median SM clocks more than kMaxClockDifference apart (unless options.allow_mismatch, then
// a warning in the result); a matched row with a verdict but no timing samples.
Comparison compare_reports(const Report& base, const Report& head, const CompareOptions& options,
                           const std::string& base_origin, const std::string& head_origin);

// Median measured SM clock over the report's rows, in MHz (counter sm_clock_hz, else the mean of
// the timing's readings before and after the launches); NaN when no row has one.
double median_sm_clock_mhz(const Report& report);

}  // namespace roofline
