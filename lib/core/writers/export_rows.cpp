#include <cmath>
#include <map>

#include "lib/core/base/errors.hpp"
#include "lib/core/base/statistics.hpp"
#include "lib/core/compare/noise_model.hpp"
#include "lib/core/verdict/analysis.hpp"
#include "lib/core/writers/exports.hpp"

namespace roofline {
namespace {

constexpr double kConfidence = 0.95;

void add(ExportRow& out, const char* name, double value) {
  if (std::isfinite(value)) out.counters.emplace_back(name, value);
}

}  // namespace

std::vector<ExportRow> export_rows(const JudgedReport& report) {
  std::vector<ExportRow> out;
  std::map<std::string, int> seen;
  for (const Row& row : report.rows()) {
    if (!row.timing || row.timing->samples_seconds.empty()) continue;
    const RowAnalysis& a = report.of(row);
    if (!a.has_verdict) continue;
    ExportRow e;
    e.name = row.kernel + " " + row_label(row) + " [" + row.spec_key + "]";
    if (const int n = ++seen[e.name]; n > 1) e.name += " #" + std::to_string(n);

    const TimeSide side = time_side(*row.timing);
    const Estimate& log_time = side.log_center;
    e.samples = side.samples;
    e.seconds = std::exp(log_time.value);
    e.lower_seconds = e.upper_seconds = e.seconds;
    if (log_time.df > 0 && log_time.variance > 0 && std::isfinite(log_time.variance)) {
      const double half =
          student_t_quantile(0.5 + kConfidence / 2, log_time.df) * std::sqrt(log_time.variance);
      e.lower_seconds = std::exp(log_time.value - half);
      e.upper_seconds = std::exp(log_time.value + half);
      e.bounded = true;
    }

    // Rates at the exported time (the table's are at the median; the two differ by the
    // rounds' skew only).
    e.flops = a.bandwidth_only ? 0 : a.flops;
    e.dram_bytes = a.dram() != nullptr ? a.dram()->bytes : 0;
    e.fraction_of_bound = a.time_floor_seconds > 0 ? a.time_floor_seconds / e.seconds : 0;
    if (e.flops > 0) {
      add(e, "flops", e.flops);
      add(e, "flops_per_second", e.flops / e.seconds);
      if (a.algorithmic_flops > 0)
        add(e, "algorithmic_flops_per_second", a.algorithmic_flops / e.seconds);
      if (a.peak_flops_per_second > 0)
        add(e, "compute_utilisation", e.flops / e.seconds / a.peak_flops_per_second);
    }
    if (e.dram_bytes > 0) {
      add(e, "dram_bytes", e.dram_bytes);
      add(e, "dram_bytes_per_second", e.dram_bytes / e.seconds);
      if (a.dram()->peak_bandwidth_bytes_per_second > 0)
        add(e, "dram_utilisation",
            e.dram_bytes / e.seconds / a.dram()->peak_bandwidth_bytes_per_second);
      if (e.flops > 0) add(e, "dram_intensity_flops_per_byte", e.flops / e.dram_bytes);
    }
    if (a.attainable_flops_per_second > 0 && !a.bandwidth_only)
      add(e, "attainable_flops_per_second", a.attainable_flops_per_second);
    if (a.time_floor_seconds > 0) {
      add(e, "time_floor_seconds", a.time_floor_seconds);
      add(e, "fraction_of_bound", e.fraction_of_bound);
    }
    add(e, "compute_bound", a.compute_bound ? 1 : 0);
    out.push_back(std::move(e));
  }
  if (out.empty())
    throw InputError(
        "--export: the report has no timed rows to export (an analytic model report has no "
        "measured time, or every row failed)");
  return out;
}

}  // namespace roofline
