// Text pieces shared by the compare writers (table, Markdown) and the verdict notes: percentages,
// times, p-values and the cells of a compared row.
#pragma once

#include <string>

#include "lib/core/compare/compare.hpp"

namespace roofline {

// +12.3% / -4.0% / 0.0%; "new" / "gone" for ±inf; "-" for NaN.
std::string signed_percent(double fraction, int digits = 1);
// 0.05 -> "5%", 0.025 -> "2.5%".
std::string percent(double fraction);
// "p < 0.001", "p = 0.0123", "p = 0.456".
std::string p_text(double p);
// 12.3 µs, 4.567 ms, 1.234 s; "-" for NaN.
std::string time_text(double seconds);
std::string kernel_cell(const RowComparison& row);  // "flash-v2" or "flash-v1 → flash-v2"
std::string time_cell(double median_seconds, double spread);
// "±1.2%, p = 0.034": the standard error of the change and its p-value.
std::string noise_cell(const TimeComparison& time);
// "≥4.3%": the smallest change this row could detect.
std::string detectable_cell(const TimeComparison& time);
// "DRAM bytes +12.0%, FP32 FLOPs -3.1%"; "=" when everything is within tolerance; "-" when
// nothing was counted.
std::string quantities_cell(const RowComparison& row);
std::string row_note(const RowComparison& row);
std::string summary_line(const Comparison& comparison);
// "this pair could detect a change of 5% or more on 46 of 48 rows (...)"; empty without timed
// rows.
std::string detectable_line(const Comparison& comparison);
std::string method_line(const Comparison& comparison);
std::string side_text(const std::string& origin, const std::string& device, double clock_mhz);

}  // namespace roofline
