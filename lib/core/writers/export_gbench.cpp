// Google Benchmark's JSON as its reporter writes it (field list: its user guide's "Output
// Formats" and json_reporter), read by github-action-benchmark (`tool: googlecpp`: name,
// real_time, time_unit, iterations, cpu_time, threads) and Bencher's `cpp_google` adapter
// (context.caches, name, real_time, time_unit).
#include <nlohmann/json.hpp>

#include "lib/core/base/version.hpp"
#include "lib/core/writers/exports.hpp"

namespace roofline {

std::string render_gbench_json(const JudgedReport& judged) {
  const Report& report = judged.report();
  using json = nlohmann::ordered_json;
  const std::vector<ExportRow> rows = export_rows(judged);
  const ReportContext& c = report.context;
  // The host's CPU (num_cpus, mhz_per_cpu, load_avg) is not recorded: the times are the GPU's.
  json context = {{"date", c.time_utc},
                  {"host_name", c.host},
                  {"executable", "cuflash-roofline"},
                  {"library_build_type", "release"},
                  {"caches", json::array()},
                  {"cuflash_roofline_version", std::string(kToolVersion)},
                  {"command_line", c.command_line},
                  {"device", c.device ? json(c.device->name) : json(nullptr)}};
  json benchmarks = json::array();
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const ExportRow& row = rows[i];
    const double microseconds = row.seconds * 1e6;
    // GPU time by CUDA events; no CPU time is measured, so cpu_time repeats it.
    json entry = {{"name", row.name},
                  {"family_index", i},
                  {"per_family_instance_index", 0},
                  {"run_name", row.name},
                  {"run_type", "iteration"},
                  {"repetitions", 1},
                  {"repetition_index", 0},
                  {"threads", 1},
                  {"iterations", row.samples},
                  {"real_time", microseconds},
                  {"cpu_time", microseconds},
                  {"time_unit", "us"}};
    if (row.bounded) {
      entry["real_time_lower_95"] = row.lower_seconds * 1e6;
      entry["real_time_upper_95"] = row.upper_seconds * 1e6;
    }
    // User counters: numbers beside the fixed fields, as Google Benchmark writes them.
    for (const auto& [name, value] : row.counters) entry[name] = value;
    benchmarks.push_back(std::move(entry));
  }
  json root = {{"context", std::move(context)}, {"benchmarks", std::move(benchmarks)}};
  return root.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

}  // namespace roofline
