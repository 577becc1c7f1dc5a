// `cuflash-roofline compare BASE.json HEAD.json`: row-by-row verdicts between two reports (or two
// kernels of one report) and an exit code that gates CI. The statistics live in
// lib/core/compare/compare.hpp; this file parses, reads, and writes.
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <memory>

#include <spdlog/spdlog.h>

#include "app/commands.hpp"
#include "app/help.hpp"
#include "app/table_options.hpp"
#include "lib/core/base/errors.hpp"
#include "lib/core/base/output.hpp"
#include "lib/core/base/text.hpp"
#include "lib/core/compare/compare.hpp"
#include "lib/core/compare/compare_writers.hpp"
#include "lib/core/compare/device_compare.hpp"
#include "lib/core/report/report_read.hpp"

namespace roofline::app {
namespace {

constexpr const char* kCompareNotes =
    "Verdicts (time: each report's round medians, Welch's t on their logs with each report's\n"
    "between-round variance plus --process-noise per report):\n"
    "  faster / slower  the change exceeds --threshold AND p < 0.05\n"
    "  same             the change is within --threshold\n"
    "  ambiguous        it exceeds --threshold but not the noise\n"
    "  failed           the head row did not run correctly (incorrect, too large, error)\n"
    "Every row also gives the smallest change it could detect (80% power).\n"
    "Two profiles are compared by group of launches (kernel, grid, block; graph nodes apart):\n"
    "each launch one sample, with --launch-noise (or --launch-floor-us) per launch.\n"
    "Counted bytes and FLOPs: more than --tolerance plus both reports' noise is a regression,\n"
    "except on a row that is significantly faster (a note there; --fail-on-more-work: a\n"
    "regression too). DRAM writes are listed, not gated.";

struct CompareCliOptions {
  std::vector<std::string> reports;
  double tolerance_percent = 100 * kDefaultTolerance;
  double threshold_percent = 100 * kDefaultThreshold;
  double process_noise_percent = 100 * kDefaultProcessNoise;
  double launch_noise_percent = 100 * kDefaultLaunchNoise;
  double launch_floor_us = 1e6 * kDefaultLaunchFloorSeconds;
  bool allow_mismatch = false;
  std::string kernel_base;
  std::string kernel_head;
  std::string markdown_path;
  std::string json_path;
  TableChoice table;  // --wide, --columns
  bool across_devices = false;
  bool fail_on_more_work = false;
};

// "5%" and "5" both mean five percent.
std::string strip_percent_sign(std::string value) {
  if (!value.empty() && value.back() == '%') value.pop_back();
  return value;
}

// A finite, non-negative percentage of at most 1e6 (CLI::NonNegativeNumber lets NaN through,
// and a NaN threshold would judge every pair "same").
const CLI::Validator kPercent(
    [](std::string& text) -> std::string {
      char* end = nullptr;
      const double value = std::strtod(text.c_str(), &end);
      const bool ok = !text.empty() && end == text.c_str() + text.size() && std::isfinite(value) &&
                      value >= 0 && value <= 1e6;
      return ok ? std::string()
                : "must be a percentage from 0 to 1000000 (got " + quote_text(text) + ")";
    },
    "PCT");

// Microseconds of one launch's noise: finite, from 0 to 1000.
const CLI::Validator kMicroseconds(
    [](std::string& text) -> std::string {
      char* end = nullptr;
      const double value = std::strtod(text.c_str(), &end);
      const bool ok = !text.empty() && end == text.c_str() + text.size() && std::isfinite(value) &&
                      value >= 0 && value <= 1000;
      return ok ? std::string()
                : "must be microseconds from 0 to 1000 (got " + quote_text(text) + ")";
    },
    "US");

int run_compare(const CompareCliOptions& options, const GlobalOptions& global) {
  options.table.check(options.across_devices ? device_comparison_columns()
                                             : compare_table_columns());
  if (options.markdown_path == "-" && options.json_path == "-")
    throw InputError("--markdown - and --json - cannot both write to stdout");
  check_output_paths({{"--markdown", options.markdown_path}, {"--json", options.json_path}},
                     options.reports);
  global.specs.check_outputs(
      {{"--markdown", options.markdown_path}, {"--json", options.json_path}});
  for (const std::string* path : {&options.markdown_path, &options.json_path})
    if (!path->empty()) check_output_path(*path);
  const bool one_report = options.reports.size() == 1;
  if (one_report && (options.kernel_base.empty() || options.kernel_head.empty()))
    throw InputError(
        "compare needs two reports, or one report with --kernel-base and --kernel-head");
  if (one_report && options.kernel_base == options.kernel_head)
    throw InputError("--kernel-base and --kernel-head name the same kernel \"" +
                     options.kernel_base + "\"");

  // Reports are read here rather than with CLI::ExistingFile, so that a missing file gets the
  // same one-line message as an unreadable one.
  const std::string& base_path = options.reports.front();
  const std::string& head_path = options.reports.back();
  const Report base = read_report_file(base_path);
  const Report head = one_report ? base : read_report_file(head_path);

  if (options.across_devices) {
    if (one_report || !options.markdown_path.empty() || !options.json_path.empty())
      throw InputError("--across-devices compares two reports and writes a table only");
    write_stdout(render_device_comparison_table(compare_devices(base, head, base_path, head_path),
                                                options.table.fit()));
    return 0;
  }

  CompareOptions compare;
  compare.tolerance = options.tolerance_percent / 100;
  compare.threshold = options.threshold_percent / 100;
  compare.noise.process_noise = options.process_noise_percent / 100;
  compare.noise.launch_noise = options.launch_noise_percent / 100;
  compare.noise.launch_floor_seconds = options.launch_floor_us * 1e-6;
  compare.allow_mismatch = options.allow_mismatch;
  compare.fail_on_more_work = options.fail_on_more_work;
  compare.kernel_base = options.kernel_base;
  compare.kernel_head = options.kernel_head;
  const Comparison comparison =
      compare_reports(base, head, compare, display_path(base_path), display_path(head_path));
  for (const std::string& warning : comparison.warnings) spdlog::warn("{}", warning);

  // Everything rendered first, then written together (output.hpp): all or nothing.
  OutputSet outputs;
  if (!options.markdown_path.empty())
    outputs.add(options.markdown_path,
                markdown_for(options.markdown_path, render_compare_markdown(comparison)));
  if (!options.json_path.empty()) outputs.add(options.json_path, render_compare_json(comparison));
  if (!writes_stdout(options.markdown_path) && !writes_stdout(options.json_path))
    outputs.add("-", render_compare_table(comparison, options.table.fit()));
  outputs.commit();
  return comparison.exit_code();
}

}  // namespace

void setup_compare(CLI::App& root, const GlobalOptions& global, int* exit_code) {
  auto options = std::make_shared<CompareCliOptions>();
  CLI::App* sub = root.add_subcommand(
      "compare",
      "Compare two reports row by row (or two kernels of one report); exit 1 on a "
      "regression");
  sub->add_option("reports", options->reports,
                  "Two reports written by `run --json`, or one with --kernel-base and "
                  "--kernel-head")
      ->required()
      ->expected(1, 2)
      ->type_name("BASE.json [HEAD.json]");
  sub->add_option("--tolerance", options->tolerance_percent,
                  "Counted bytes and FLOPs: allowed relative change, in percent")
      ->transform(strip_percent_sign)
      ->check(kPercent)
      ->type_name("PCT")
      ->capture_default_str();
  sub->add_option("--threshold", options->threshold_percent,
                  "Time: smallest change of the median that counts, in percent")
      ->transform(strip_percent_sign)
      ->check(kPercent)
      ->type_name("PCT")
      ->capture_default_str();
  sub->add_option("--process-noise", options->process_noise_percent,
                  "Time: run-to-run noise of one report that its rounds do not show (relative "
                  "standard deviation), in percent")
      ->transform(strip_percent_sign)
      ->check(kPercent)
      ->type_name("PCT")
      ->capture_default_str();
  sub->add_option("--launch-noise", options->launch_noise_percent,
                  "Profiles: one launch's time noise between processes (relative standard "
                  "deviation), in percent")
      ->transform(strip_percent_sign)
      ->check(kPercent)
      ->type_name("PCT")
      ->capture_default_str();
  sub->add_option("--launch-floor-us", options->launch_floor_us,
                  "Profiles: one launch's time noise in microseconds, where larger than "
                  "--launch-noise")
      ->check(kMicroseconds)
      ->type_name("US")
      ->capture_default_str();
  sub->add_flag("--fail-on-more-work", options->fail_on_more_work,
                "More counted bytes or FLOPs is a regression even on a row that is "
                "significantly faster");
  sub->add_flag("--allow-mismatch", options->allow_mismatch,
                "Compare reports from different devices or SM clocks more than 10% apart");
  sub->add_option("--kernel-base", options->kernel_base,
                  "Base rows of this kernel (with --kernel-head: compare two kernels)")
      ->type_name("NAME");
  sub->add_option("--kernel-head", options->kernel_head, "Head rows of this kernel")
      ->type_name("NAME");
  sub->add_option("--markdown", options->markdown_path,
                  "Write a Markdown summary (pull-request comment) to PATH (- for stdout)")
      ->type_name("PATH|-")
      ->check(kNonEmptyPath);
  sub->add_option("--json", options->json_path,
                  "Write the comparison as JSON to PATH (- for stdout)")
      ->type_name("PATH|-")
      ->check(kNonEmptyPath);
  options->table.add_to(*sub, compare_table_columns(), false);
  sub->add_flag("--across-devices", options->across_devices,
                "The same sweep on two GPU types: time, speed-up and roof per row side by side "
                "(exit 0; not a regression verdict); its --columns: " +
                    column_keys_text(device_comparison_columns()));
  set_command_help(
      *sub,
      {"compare base.json head.json",
       "compare base.json head.json --markdown \"$GITHUB_STEP_SUMMARY\" --json verdicts.json",
       "compare report.json --kernel-base flash-v1 --kernel-head flash-v2",
       "compare base.json head.json --columns kernel,workload,change,verdict"},
      {{"0", "no regression"},
       {"1", "a regression: a row slower, failed, or doing more work (see above)"},
       {"2", "usage or input error: unreadable or incompatible reports; nothing written"},
       kExitInternal},
      kCompareNotes);
  sub->callback([options, &global, exit_code] { *exit_code = run_compare(*options, global); });
}

}  // namespace roofline::app
