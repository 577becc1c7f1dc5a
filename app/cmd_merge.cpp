// `cuflash-roofline merge A.json B.json ... -o all.json`: one report from the reports of shards
// (`run --shard`), devices and hosts. The rules are merge_reports' (lib/core/report/merge.hpp):
// identical duplicates collapse, conflicting ones are an input error (exit 2), and each row
// keeps the context of the device it was measured on.
#include <atomic>
#include <exception>
#include <filesystem>
#include <memory>
#include <mutex>
#include <thread>

#include "app/commands.hpp"
#include "app/help.hpp"
#include "lib/core/base/errors.hpp"
#include "lib/core/base/limits.hpp"
#include "lib/core/base/output.hpp"
#include "lib/core/report/merge.hpp"
#include "lib/core/report/report_read.hpp"
#include "lib/core/writers/report_writers.hpp"

namespace roofline::app {
namespace {

struct MergeCliOptions {
  std::vector<std::string> reports;
  std::string json_path;
  std::string csv_path;
};

// The reports of `paths`, read by two threads (reading is most of a merge's time; two, so that
// at most two texts are in memory beside the reports). The error is that of the first file
// that fails, as if they were read in order.
std::vector<Report> read_reports(const std::vector<std::string>& paths) {
  std::vector<Report> reports(paths.size());
  std::atomic<std::size_t> next{0};
  std::mutex mutex;
  std::size_t failed = paths.size();
  std::exception_ptr error;
  auto read = [&] {
    for (std::size_t i; (i = next++) < paths.size();) {
      try {
        reports[i] = read_report_file(paths[i]);
      } catch (...) {
        const std::lock_guard<std::mutex> lock(mutex);
        if (i < failed) {
          failed = i;
          error = std::current_exception();
        }
      }
    }
  };
  if (paths.size() > 1 && std::thread::hardware_concurrency() > 1) {
    std::thread helper(read);
    read();
    helper.join();
  } else {
    read();
  }
  if (error) std::rethrow_exception(error);
  return reports;
}

[[noreturn]] void too_large(const std::string& output, const std::string& size) {
  throw InputError("-o " + output + ": the merged report would be " + size +
                   " MiB, above the readers' limit of " + std::to_string(kMaxInputFileBytes >> 20) +
                   " MiB: merge fewer reports at a time");
}

int run_merge(const MergeCliOptions& options, const GlobalOptions& global) {
  if (writes_stdout(options.json_path) && writes_stdout(options.csv_path))
    throw InputError("-o - and --csv - cannot both write to stdout");
  check_output_paths({{"-o", options.json_path}, {"--csv", options.csv_path}}, options.reports);
  global.specs.check_outputs({{"-o", options.json_path}, {"--csv", options.csv_path}});
  for (const std::string* path : {&options.json_path, &options.csv_path})
    if (!path->empty()) check_output_path(*path);
  const std::vector<Report> reports = read_reports(options.reports);
  Report merged = merge_reports(reports, options.reports);
  // Rows from several places: the report is this command's (each origin keeps its own line).
  if (!merged.origins.empty()) merged.context.command_line = global.command_line();
  // Never write what the readers refuse: refused before rendering where the inputs' bytes per
  // row say that the merged report is well above the limit, else after, by its exact size.
  double input_bytes = 0;
  std::size_t input_rows = 0;
  for (std::size_t i = 0; i < reports.size(); ++i) {
    std::error_code error;
    const std::uintmax_t size = std::filesystem::file_size(options.reports[i], error);
    if (!error) input_bytes += static_cast<double>(size);
    input_rows += reports[i].rows.size();
  }
  const double estimate = input_rows == 0 ? 0
                                          : input_bytes * static_cast<double>(merged.rows.size()) /
                                                static_cast<double>(input_rows);
  if (estimate > 1.05 * static_cast<double>(kMaxInputFileBytes))
    too_large(options.json_path, "about " + std::to_string(static_cast<long long>(estimate) >> 20));
  // Everything rendered first, then written together (output.hpp): all or nothing.
  std::string json = render_json(merged);
  if (json.size() > kMaxInputFileBytes)
    too_large(options.json_path, std::to_string(json.size() >> 20));
  OutputSet outputs;
  outputs.add(options.json_path, std::move(json));
  if (!options.csv_path.empty()) outputs.add(options.csv_path, render_csv(merged));
  outputs.commit();
  return 0;
}

}  // namespace

void setup_merge(CLI::App& root, const GlobalOptions& global, int* exit_code) {
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
      ->type_name("PATH|-")
      ->check(kNonEmptyPath);
  sub->add_option("--csv", options->csv_path, "Also write it as CSV to PATH (- for stdout)")
      ->type_name("PATH|-")
      ->check(kNonEmptyPath);
  set_command_help(*sub,
                   {"merge shard0.json shard1.json -o all.json",
                    "merge h200.json a100.json -o both.json --csv both.csv"},
                   {kExitOk, kExitUsage, kExitInternal});
  sub->callback([options, &global, exit_code] { *exit_code = run_merge(*options, global); });
}

}  // namespace roofline::app
