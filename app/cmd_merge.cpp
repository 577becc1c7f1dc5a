// `cuflash-roofline merge A.json B.json ... -o all.json`: one report from the reports of shards
// (`run --shard`), devices and hosts. The rules are merge_reports' (lib/core/report/merge.hpp):
// identical duplicates collapse, conflicting ones are an input error (exit 2), and each row
// keeps the context of the device it was measured on.
#include <iostream>
#include <memory>

#include "app/commands.hpp"
#include "lib/core/base/errors.hpp"
#include "lib/core/report/merge.hpp"
#include "lib/core/base/output.hpp"
#include "lib/core/report/report_io.hpp"

namespace roofline::app {
namespace {

struct MergeCliOptions {
  std::vector<std::string> reports;
  std::string json_path;
  std::string csv_path;
};

int run_merge(const MergeCliOptions& options) {
  if (options.json_path == "-" && options.csv_path == "-")
    throw InputError("-o - and --csv - cannot both write to stdout");
  for (const std::string* path : {&options.json_path, &options.csv_path})
    if (!path->empty()) check_output_path(*path);
  std::vector<Report> reports;
  for (const std::string& path : options.reports) reports.push_back(read_report_file(path));
  const Report merged = merge_reports(reports, options.reports);
  // Render both before writing either, so that a failure leaves no file behind.
  const std::string json = render_json(merged);
  const std::string csv = options.csv_path.empty() ? "" : render_csv(merged);
  write_output(options.json_path, json);
  if (!csv.empty()) write_output(options.csv_path, csv);
  return 0;
}

}  // namespace

void setup_merge(CLI::App& root, const GlobalOptions& /*global*/, int* exit_code) {
  auto options = std::make_shared<MergeCliOptions>();
  CLI::App* sub = root.add_subcommand(
      "merge",
      "Combine reports of shards, devices and hosts into one (identical duplicate rows collapse; "
      "conflicting ones are an error)");
  sub->add_option("reports", options->reports, "Reports written with --json")
      ->required()
      ->type_name("REPORT.json");
  sub->add_option("-o,--output", options->json_path, "Write the merged report as JSON to PATH")
      ->required()
      ->type_name("PATH|-");
  sub->add_option("--csv", options->csv_path, "Also write it as CSV to PATH (- for stdout)")
      ->type_name("PATH|-");
  sub->callback([options, exit_code] { *exit_code = run_merge(*options); });
}

}  // namespace roofline::app
