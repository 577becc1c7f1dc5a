// Bencher Metric Format JSON (bencher.dev/bmf.json: an object of benchmarks, each an object
// of measures, each {"value" (required), "lower_value", "upper_value"}, all numbers), read by
// `bencher run --adapter json`. Measures: the built-in `latency` (nanoseconds) and `throughput`
// (operations per second: here FLOP/s), and two of our own that Bencher creates on first use.
#include <nlohmann/json.hpp>

#include "lib/core/writers/exports.hpp"

namespace roofline {
namespace {

nlohmann::ordered_json metric(double value, double lower, double upper, bool bounded) {
  nlohmann::ordered_json out = {{"value", value}};
  if (bounded) {
    out["lower_value"] = lower;
    out["upper_value"] = upper;
  }
  return out;
}

}  // namespace

std::string render_bmf_json(const JudgedReport& report) {
  using json = nlohmann::ordered_json;
  json root = json::object();
  for (const ExportRow& row : export_rows(report)) {
    json measures = json::object();
    measures["latency"] =
        metric(row.seconds * 1e9, row.lower_seconds * 1e9, row.upper_seconds * 1e9, row.bounded);
    // Rates move against the time: the slowest bound gives the lowest rate.
    if (row.flops > 0)
      measures["throughput"] = metric(row.flops / row.seconds, row.flops / row.upper_seconds,
                                      row.flops / row.lower_seconds, row.bounded);
    if (row.dram_bytes > 0)
      measures["dram-bytes-per-second"] =
          metric(row.dram_bytes / row.seconds, row.dram_bytes / row.upper_seconds,
                 row.dram_bytes / row.lower_seconds, row.bounded);
    if (row.fraction_of_bound > 0) {
      const double floor = row.fraction_of_bound * row.seconds;
      measures["fraction-of-bound"] = metric(row.fraction_of_bound, floor / row.upper_seconds,
                                             floor / row.lower_seconds, row.bounded);
    }
    root[row.name] = std::move(measures);
  }
  return root.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

}  // namespace roofline
