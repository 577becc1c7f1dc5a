// `cuflash-roofline show REPORT.json...`: a saved report (run, model, profile, merge) printed
// again: where its time goes (the summary by kernel, summary.hpp), its rows as the table, or
// both; the rows chosen by --kernel-regex and ordered by --sort can be written out again as
// JSON or CSV.
#include <algorithm>
#include <cmath>
#include <iostream>
#include <memory>
#include <numeric>
#include <optional>
#include <regex>

#include "app/commands.hpp"
#include "app/common.hpp"
#include "app/export_option.hpp"
#include "app/help.hpp"
#include "app/options.hpp"
#include "app/projection_output.hpp"
#include "lib/core/base/errors.hpp"
#include "lib/core/base/json_reader.hpp"
#include "lib/core/base/limits.hpp"
#include "lib/core/base/output.hpp"
#include "lib/core/base/text.hpp"
#include "lib/core/compare/compare_rows.hpp"
#include "lib/core/compare/share_runs.hpp"
#include "lib/core/domain/sm_share.hpp"
#include "lib/core/report/report_read.hpp"
#include "lib/core/verdict/analysis.hpp"
#include "lib/core/writers/kernel_section.hpp"
#include "lib/core/writers/report_writers.hpp"
#include "lib/core/writers/stall_section.hpp"
#include "lib/core/writers/summary.hpp"
#include "lib/core/writers/summary_markdown.hpp"

namespace roofline::app {
namespace {

struct ShowOptions {
  std::vector<std::string> reports;
  std::string view;  // table|summary|both; empty: both for profiled launches, else table
  std::string group_by = "functor";
  std::string sort;  // empty: the summary by time, the rows as written
  std::size_t top = 15;
  std::string kernel_regex;
  std::string json_path;
  std::string csv_path;
  std::string markdown_path;
  std::vector<std::string> exports;
  TableChoice table;        // --wide, --columns, --flops
  bool source = false;      // --source: the hottest lines' text under each sampled row
  std::string gpus;         // --gpu: specs to project the program onto, comma-separated
  int sms = 0;              // --sms: each --gpu spec on this many of its SMs; 0: all of them
  std::string share_run;    // --share-run: the same points measured on a few SMs
  CeilingOptions ceilings;  // --ceilings, --calibration (the energy model's coefficients too)
};

GroupBy group_by_of(const std::string& text) {
  if (text == "name") return GroupBy::kName;
  if (text == "shape") return GroupBy::kShape;
  if (text == "nvtx") return GroupBy::kNvtx;
  return GroupBy::kFunctor;
}

SummarySort sort_of(const std::string& text) {
  if (text == "gain") return SummarySort::kGain;
  if (text == "launch") return SummarySort::kLaunch;
  return SummarySort::kTime;  // time and share order alike
}

// The rows `regex` chooses (kernel or full name), judged, in the order `sort` asks.
JudgedReport select_rows(Report report, const std::optional<std::regex>& regex,
                         const std::string& sort) {
  if (regex) {
    auto kept = std::remove_if(report.rows.begin(), report.rows.end(), [&](const Row& row) {
      const std::string& full = row.launch ? row.launch->demangled_name : row.kernel;
      return !std::regex_search(row.kernel, *regex) && !std::regex_search(full, *regex);
    });
    report.rows.erase(kept, report.rows.end());
  }
  JudgedReport judged(std::move(report));
  if (sort.empty() || sort == "launch") return judged;  // as written: launch order
  const std::size_t n = judged.rows().size();
  std::vector<double> time(n);
  std::vector<double> gain(n);
  for (std::size_t i = 0; i < n; ++i) {
    const RowAnalysis& a = judged.at(i);
    time[i] = a.has_verdict ? a.time_seconds : 0;
    gain[i] = a.has_verdict && std::isfinite(a.time_floor_seconds)
                  ? std::max(0.0, a.time_seconds - a.time_floor_seconds)
                  : 0;
  }
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  const std::vector<double>& key = sort == "gain" ? gain : time;
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return key[a] > key[b]; });
  return judged.select(order);
}

// The --gpu names as specs, each on --sms of its SMs when given.
std::vector<GpuSpec> projection_specs(const ShowOptions& options, const SpecRegistry& registry) {
  std::vector<GpuSpec> specs;
  for (const std::string& name : split(options.gpus, ',')) {
    if (trim(name).empty())
      throw InputError("--gpu " + quote_text(options.gpus, 80) +
                       ": an empty name (spec names, comma-separated: h100,b200)");
    const GpuSpec& spec = registry.find(trim(name));  // InputError for an unknown name
    if (options.sms == 0) {
      specs.push_back(spec);
      continue;
    }
    try {
      specs.push_back(with_sm_count(spec, options.sms));
    } catch (const InputError& error) {
      throw InputError(std::string("--sms: ") + error.what());
    }
  }
  return specs;
}

// --gpu: the program's time measured and projected onto each spec, by group (projection_table);
// with one spec, --json and --csv write the report projected onto it.
int show_projection(const ShowOptions& options, const GlobalOptions& global,
                    const JudgedReport& measured) {
  const SpecRegistry registry = global.specs.load();
  ProgramProjection projection =
      project_program(measured, projection_specs(options, registry), group_by_of(options.group_by),
                      options.top, options.table.fit().max_width, options.reports.front());
  OutputSet files;
  if (!options.json_path.empty()) files.add(options.json_path, render_json(*projection.only));
  if (!options.csv_path.empty()) files.add(options.csv_path, render_csv(*projection.only));
  files.commit();
  for (const std::string* path : {&options.json_path, &options.csv_path})
    if (writes_stdout(*path)) return 0;
  std::cout << projection.text;
  return 0;
}

int run_show(const ShowOptions& options, const GlobalOptions& global) {
  options.table.check(report_table_columns());
  if (!options.gpus.empty()) {
    if (options.reports.size() != 1) throw InputError("--gpu projects one report; give one");
    if (!options.markdown_path.empty())
      throw InputError("--gpu prints the projection; it writes no --markdown");
    if (!options.exports.empty()) throw InputError("--gpu prints the projection; no --export");
    if ((!options.json_path.empty() || !options.csv_path.empty()) &&
        split(options.gpus, ',').size() != 1)
      throw InputError(
          "--gpu with --json or --csv writes the report projected onto one spec; name one");
  } else if (options.sms > 0) {
    throw InputError("--sms takes the SMs of the --gpu specs; give --gpu");
  }
  if (!options.share_run.empty() && options.sms == 0)
    throw InputError(
        "--share-run serves a projection onto a share of the SMs; give --gpu and --sms");
  const std::vector<ExportTarget> exports = export_targets(options.exports);
  std::vector<OutputPath> outputs = {{"--json", options.json_path},
                                     {"--csv", options.csv_path},
                                     {"--markdown", options.markdown_path}};
  for (const OutputPath& path : export_paths(exports)) outputs.push_back(path);
  std::vector<std::string> inputs = options.reports;
  if (!options.share_run.empty()) inputs.push_back(options.share_run);
  check_output_paths(outputs, inputs);
  global.specs.check_outputs(outputs);
  for (const OutputPath& output : outputs)
    if (!output.path.empty()) check_output_path(output.path);
  std::optional<std::regex> regex;
  if (!options.kernel_regex.empty()) {
    // The guard `profile` applies: no pattern that backtracks exponentially, none too long.
    check_kernel_regex(options.kernel_regex);
    try {
      regex.emplace(options.kernel_regex, std::regex::ECMAScript);
    } catch (const std::regex_error& error) {
      throw InputError("--kernel-regex " + quote_text(options.kernel_regex, 80) +
                       " is not a regular expression: " + error.what());
    }
  }
  const std::vector<CalibrationOverlay> calibrations = options.ceilings.load();
  std::optional<Report> few;
  if (!options.share_run.empty())
    few = report_from_text(read_json_input(options.share_run), options.share_run);
  std::vector<JudgedReport> reports;
  for (const std::string& path : options.reports) {
    // Each file is read once, and a report is parsed row by row (not as one JSON tree).
    const std::string text = read_json_input(path);
    Report report;
    try {
      report = report_from_text(text, path);
    } catch (const InputError&) {
      // A saved `compare --json` prints its rows as compare judged them (one file, no options).
      if (options.reports.size() != 1 ||
          text.find("\"cuflash-roofline compare\"") == std::string::npos)
        throw;
      const nlohmann::json document = parse_json_text(text, path);
      if (!is_compare_json(document)) throw;
      for (const OutputPath& output : outputs)
        if (!output.path.empty())
          throw InputError(path + ": a compare document has no report rows: " + output.option +
                           " writes reports only");
      std::cout << render_compare_rows(document, display_path(path), options.table.fit());
      return 0;
    }
    options.ceilings.apply(report, calibrations);
    if (few) report = with_share_runs(std::move(report), *few, options.share_run, path);
    reports.push_back(select_rows(std::move(report), regex, options.sort));
    if (reports.back().rows().empty())
      throw InputError(path +
                       (regex ? ": no row matches --kernel-regex" : ": the report has no rows"));
  }
  if (!options.gpus.empty()) return show_projection(options, global, reports.front());
  // Files first, then stdout, so that a failed write leaves the terminal's output unprinted.
  // Everything rendered first, then written together (output.hpp): all or nothing.
  if (reports.size() == 1) {
    OutputSet files;
    if (!options.json_path.empty()) files.add(options.json_path, render_json(reports.front()));
    if (!options.csv_path.empty()) files.add(options.csv_path, render_csv(reports.front()));
    if (!options.markdown_path.empty())
      files.add(options.markdown_path,
                markdown_for(options.markdown_path,
                             render_summary_markdown(
                                 summarize(reports.front(), group_by_of(options.group_by),
                                           sort_of(options.sort)),
                                 options.top, display_path(options.reports.front()))));
    for (const ExportTarget& target : exports)
      files.add(target.path, render_export(target, reports.front()));
    files.commit();
  }
  for (const OutputPath& output : outputs)
    if (writes_stdout(output.path)) return 0;
  const TableFit fit = options.table.fit();
  TableOptions table;
  table.color = colour_wanted();
  table.max_width = fit.max_width;
  table.columns = fit.columns;
  table.flops = options.table.convention();
  for (std::size_t i = 0; i < reports.size(); ++i) {
    const JudgedReport& report = reports[i];
    const bool profiled = std::any_of(report.rows().begin(), report.rows().end(),
                                      [](const Row& row) { return row.launch.has_value(); });
    const std::string view = options.view.empty() ? (profiled ? "both" : "table") : options.view;
    if (reports.size() > 1) std::cout << (i > 0 ? "\n" : "") << options.reports[i] << ":\n";
    if (view != "table")
      std::cout << render_summary(
          summarize(report, group_by_of(options.group_by), sort_of(options.sort)), options.top,
          fit.max_width);
    if (view == "both") std::cout << "\n";
    if (view != "summary") std::cout << render_table(report, table);
    StallSectionOptions stall_options;
    stall_options.max_width = fit.max_width;
    stall_options.source = options.source;
    if (options.source) stall_options.listed = kStallListed;
    if (view != "summary")
      if (const std::string kernels = render_kernels(report.report(), fit.max_width);
          !kernels.empty())
        std::cout << "\n" << kernels;
    if (const std::string stalls = render_stalls(report, stall_options); !stalls.empty())
      std::cout << "\n" << stalls;
  }
  return 0;
}

}  // namespace

void setup_show(CLI::App& root, const GlobalOptions& global, int* exit_code) {
  auto options = std::make_shared<ShowOptions>();
  CLI::App* sub = root.add_subcommand(
      "show", "Print saved reports again: where the time goes by kernel, and the rows");
  sub->add_option("reports", options->reports, "Reports written with --json")
      ->required()
      ->type_name("REPORT.json");
  sub->add_option("--view", options->view,
                  "summary (time by kernel group), table (the rows) or both; default: both for "
                  "profiled programs, table otherwise")
      ->check(CLI::IsMember({"table", "summary", "both"}))
      ->type_name("table|summary|both");
  sub->add_option("--group-by", options->group_by,
                  "functor: the kernel and the functor its template names (PyTorch's "
                  "element-wise kernels apart); name; shape: name and launch shape or workload; "
                  "nvtx: the innermost NVTX range")
      ->check(CLI::IsMember({"functor", "name", "shape", "nvtx"}))
      ->capture_default_str();
  sub->add_option("--sort", options->sort,
                  "time (or share): largest first; gain: most time above the floor first; "
                  "launch: in launch order (default: groups by time, rows as written)")
      ->check(CLI::IsMember({"time", "share", "gain", "launch"}))
      ->type_name("time|share|gain|launch");
  sub->add_option("--top", options->top, "Summary groups shown (0: all)")
      ->check(decimal_in(0, 1000000))
      ->capture_default_str();
  sub->add_flag("--source", options->source,
                "Under each row sampled with --stalls: every listed source line with its text "
                "(where the file is readable here) and the hottest instructions");
  sub->add_option("--gpu", options->gpus,
                  "Project the program onto these GPUs' specs (comma-separated, e.g. h100,b200): "
                  "its time by group, measured and projected, and what binds it there; with one "
                  "spec, --json and --csv write the projected report")
      ->type_name("NAMES");
  sub->add_option("--sms", options->sms,
                  "With --gpu: each spec on N of its SMs (compute and L1 roofs scaled by N over "
                  "its SM count; DRAM and L2 by the level's share curve where the spec has one, "
                  "else kept), as a green context of N SMs (run --sms) would measure")
      ->type_name("N")
      ->check(decimal_in(1, kMaxSmCount));
  sub->add_option("--share-run", options->share_run,
                  "With --sms: the same points measured on a few SMs (run --sms 16 --json): a "
                  "memory-bound row's bytes in flight per SM, read from there, which a row that "
                  "fills DRAM on every SM cannot show")
      ->type_name("REPORT.json");
  sub->add_option("--kernel-regex", options->kernel_regex,
                  "Only rows whose kernel or full name matches (ECMAScript, search)")
      ->type_name("REGEX");
  sub->add_option("--json", options->json_path,
                  "Write the chosen rows as a report to PATH (- for stdout)")
      ->type_name("PATH")
      ->check(kNonEmptyPath)
      ->group(kOutputGroup);
  sub->add_option("--csv", options->csv_path, "Write the chosen rows as CSV to PATH (- for stdout)")
      ->type_name("PATH")
      ->check(kNonEmptyPath)
      ->group(kOutputGroup);
  sub->add_option("--markdown", options->markdown_path,
                  "Write the summary by kernel group and what to try next as Markdown to PATH "
                  "(- for stdout; $GITHUB_STEP_SUMMARY in a GitHub Actions job)")
      ->type_name("PATH")
      ->check(kNonEmptyPath)
      ->group(kOutputGroup);
  add_export_option(*sub, options->exports);
  options->table.add_to(*sub, report_table_columns(), true);
  options->ceilings.add_to(*sub, true);
  set_command_help(*sub,
                   {"show report.json", "show profile.json --view summary --top 5",
                    "show profile.json --kernel-regex gemm --sort gain --csv gemm.csv",
                    "show report.json --wide", "show profile.json --gpu h100,b200",
                    "show report.json --gpu h200 --sms 66 --group-by shape --top 0",
                    "show report.json --gpu h200 --sms 66 --share-run report_16sm.json"},
                   {kExitOk, kExitUsage, kExitInternal});
  sub->callback([options, &global, exit_code] {
    if ((!options->json_path.empty() || !options->csv_path.empty() ||
         !options->markdown_path.empty() || !options->exports.empty()) &&
        options->reports.size() > 1)
      throw InputError(
          "--json, --csv, --markdown and --export write one report: give one REPORT.json (or "
          "merge first)");
    *exit_code = run_show(*options, global);
  });
}

}  // namespace roofline::app
