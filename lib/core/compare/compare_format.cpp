#include "lib/core/compare/compare_format.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include "lib/core/base/statistics.hpp"
#include "lib/core/base/text.hpp"

namespace roofline {

std::string signed_percent(double fraction, int digits) {
  if (std::isnan(fraction)) return "-";
  if (std::isinf(fraction)) return fraction > 0 ? "new" : "gone";
  std::string text = format_fixed(100 * fraction, digits);
  const bool zero = text.find_first_not_of("-0.") == std::string::npos;
  if (zero && text.front() == '-') text.erase(0, 1);  // "-0.0" reads as a change; it is none
  return (fraction > 0 && !zero ? "+" : "") + text + "%";
}

std::string percent(double fraction) {
  // 0.05 -> "5%", 0.025 -> "2.5%"
  std::string text = format_fixed(100 * fraction, 2);
  while (!text.empty() && text.back() == '0') text.pop_back();
  if (!text.empty() && text.back() == '.') text.pop_back();
  return text + "%";
}

std::string p_text(double p) {
  if (p < 0.001) return "p < 0.001";
  return "p = " + format_fixed(p, p < 0.01 ? 4 : 3);
}

std::string time_text(double seconds) {
  if (std::isnan(seconds)) return "-";
  if (seconds < 1e-3) return format_fixed(seconds * 1e6, 1) + " µs";
  if (seconds < 1) return format_fixed(seconds * 1e3, 3) + " ms";
  return format_fixed(seconds, 3) + " s";
}

std::string kernel_cell(const RowComparison& row) {
  return row.kernel_base == row.kernel_head ? one_line(row.kernel_base)
                                            : one_line(row.kernel_base + " → " + row.kernel_head);
}

std::string time_cell(double median_seconds, double spread) {
  return time_text(median_seconds) + " ±" + format_fixed(100 * spread, 1) + "%";
}

std::string noise_cell(const TimeComparison& t) {
  return "±" + format_fixed(100 * t.standard_error, 1) + "%, " + p_text(t.p_value);
}

std::string detectable_cell(const TimeComparison& t) {
  if (std::isnan(t.detectable_change)) return "-";
  return "≥" + format_fixed(100 * t.detectable_change, 1) + "%";
}

std::string quantities_cell(const RowComparison& row) {
  if (row.quantities.empty()) return "-";
  std::vector<std::string> parts;
  for (const QuantityChange& q : row.quantities)
    if (q.changed) parts.push_back(q.label + " " + signed_percent(q.relative_change));
  return parts.empty() ? "=" : join(parts, ", ");
}

std::string row_note(const RowComparison& row) {
  std::vector<std::string> parts;
  if (row.time && !row.time->note.empty()) parts.push_back(row.time->note);
  for (const std::string& note : row.notes) parts.push_back(note);
  return one_line(join(parts, "; "));
}

std::string summary_line(const Comparison& c) {
  std::vector<std::string> parts;
  for (Verdict v : {Verdict::kSlower, Verdict::kFailed, Verdict::kFaster, Verdict::kSame,
                    Verdict::kAmbiguous, Verdict::kNotCompared}) {
    const std::size_t n = c.count(v);
    if (n > 0 || v == Verdict::kSlower || v == Verdict::kFaster || v == Verdict::kSame)
      parts.push_back(std::to_string(n) + " " + std::string(to_string(v)));
  }
  std::string out = std::to_string(c.rows.size()) + " rows compared: " + join(parts, ", ");
  out += "; " + std::to_string(c.more_work_count()) + " with more bytes or FLOPs";
  if (!c.only_base.empty()) out += "; " + std::to_string(c.only_base.size()) + " only in base";
  if (!c.only_head.empty()) out += "; " + std::to_string(c.only_head.size()) + " only in head";
  return out;
}

std::string detectable_line(const Comparison& c) {
  const std::size_t timed = c.timed_count();
  if (timed == 0) return "";
  std::vector<double> changes;
  for (const RowComparison& row : c.rows)
    if (row.time) changes.push_back(row.time->detectable_change);
  std::sort(changes.begin(), changes.end());
  // The smallest whole percent that at least 90% of the rows could detect.
  const std::size_t rank = (9 * timed + 9) / 10 - 1;
  const double level = std::ceil(100 * changes[rank] - 1e-9) / 100;
  return "this pair could detect a change of " + percent(level) + " or more on " +
         std::to_string(c.detectable_count(level)) + " of " + std::to_string(timed) +
         " rows (median " + format_fixed(100 * median(changes), 1) + "%, largest " +
         format_fixed(100 * changes.back(), 1) + "%; α " + format_fixed(c.options.alpha, 2) +
         ", power " + percent(c.options.power) + ")";
}

std::string method_line(const Comparison& c) {
  return "time: mean log of the round medians, Welch's t with each report's between-round "
         "variance and a process noise of " +
         percent(c.options.noise.process_noise) + " per report; a change counts when it exceeds " +
         percent(c.options.threshold) + " and p < " + format_fixed(c.options.alpha, 2) +
         ". Bytes and FLOPs: counted; more than " + percent(c.options.tolerance) +
         " plus both reports' noise (cache-dependent bytes: their spread, " +
         percent(c.options.noise.cache_floor) + " and " +
         format_si(c.options.noise.cache_floor_bytes) + "B a side) is a regression" +
         (c.options.fail_on_more_work
              ? std::string(" (--fail-on-more-work: also on a faster row)")
              : std::string(", except on a row that is significantly faster (a note)")) +
         "; DRAM writes are listed, not gated.";
}

std::string side_text(const std::string& origin, const std::string& device, double clock_mhz) {
  std::string out =
      one_line(origin) + " (" + (device.empty() ? "analytic model" : one_line(device));
  if (!std::isnan(clock_mhz)) out += ", SM " + format_fixed(clock_mhz, 0) + " MHz";
  return out + ")";
}

}  // namespace roofline
