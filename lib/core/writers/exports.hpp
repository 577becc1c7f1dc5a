// A report in the formats that CI dashboards ingest (docs/ci-exports.md):
//   - Google Benchmark's JSON (--benchmark_format=json): read by github-action-benchmark's
//     `googlecpp` tool, Google Benchmark's own tools/compare.py and Bencher's
//     `cpp_google` adapter. One entry per timed row, the roofline numbers as user counters.
//     export_gbench.cpp.
//   - Bencher Metric Format (BMF) JSON (`bencher run --adapter json`): one benchmark per timed
//     row, each measure with value and the 95% confidence bounds of the time behind it.
//     export_bmf.cpp.
// What is exported (the names, the time and its bounds, the numbers) is decided once here,
// so that both formats say the same.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "lib/core/verdict/judged_report.hpp"

namespace roofline {

struct ExportRow {
  // "flash-v2 B1 H8 N4096 d64 causal fwd [h200-sxm]": kernel, row_label(), spec key; made
  // unique within the report by a " #2", " #3" suffix (a program's repeated launches).
  std::string name;
  // The time compare judges (noise_model.hpp's TimeSide): exp of the mean log of the round
  // medians (with one round, of the samples), in seconds; lower/upper: its 95% confidence
  // bounds (Student's t on the logs). `bounded` is false when the spread is unknown (one
  // sample, one round of one): then lower = upper = seconds.
  double seconds = 0;
  double lower_seconds = 0;
  double upper_seconds = 0;
  bool bounded = false;
  std::size_t samples = 0;  // timed repetitions behind it
  // The roofline numbers at `seconds` (analysis.hpp), each finite, in the order written:
  // name and value. Names are snake_case with their unit ("flops_per_second").
  std::vector<std::pair<std::string, double>> counters;
  // FLOPs and DRAM bytes behind the rates (0 when not known), for bounds of rates.
  double flops = 0;
  double dram_bytes = 0;
  double fraction_of_bound = 0;  // time floor ÷ time; 0 when unknown
};

// The rows of `report` that were timed and judged, in report order. Throws InputError when
// there is none (an analytic model report, or every row failed): an export would be empty.
std::vector<ExportRow> export_rows(const JudgedReport& report);

// Google Benchmark-compatible JSON: {"context": {...}, "benchmarks": [...]}.
std::string render_gbench_json(const JudgedReport& report);
// Bencher Metric Format JSON: {"<benchmark>": {"<measure>": {"value", "lower_value",
// "upper_value"}}}.
std::string render_bmf_json(const JudgedReport& report);

}  // namespace roofline
