// `cuflash-roofline plot REPORT.json... -o chart.svg | --plot`: roofline charts of saved reports.
// With two or more reports, arrows join each row to the same row of the next report.
#include <filesystem>
#include <memory>

#include "app/commands.hpp"
#include "app/help.hpp"
#include "app/terminal_width.hpp"
#include "lib/core/base/errors.hpp"
#include "lib/core/base/limits.hpp"
#include "lib/core/base/output.hpp"
#include "lib/core/base/text.hpp"
#include "lib/core/chart/svg_chart.hpp"
#include "lib/core/chart/terminal_chart.hpp"
#include "lib/core/report/report_read.hpp"

namespace roofline::app {
namespace {

constexpr int kAsciiWidth = 72;
constexpr int kAsciiHeight = 22;

struct PlotCliOptions {
  std::vector<std::string> reports;
  std::string svg_path;
  bool ascii = false;
  std::string kernel_base;
  std::string kernel_head;
  std::string flops = "algorithmic";
  CeilingOptions ceilings;
};

// Refuses a report larger than kMaxPlotInputBytes before any of it is read. Paths that are not
// regular files, or cannot be examined, are left to the reader and its messages.
void check_plot_input_size(const std::string& path) {
  std::error_code error;
  if (!std::filesystem::is_regular_file(path, error)) return;
  const std::uintmax_t size = std::filesystem::file_size(path, error);
  if (error || size <= kMaxPlotInputBytes) return;
  throw InputError(path + ": " + format_fixed(static_cast<double>(size) / (1 << 20), 1) +
                   " MiB is above plot's limit of " + std::to_string(kMaxPlotInputBytes >> 20) +
                   " MiB (about 30,000 model rows); plot a part: a `run` or `model` report "
                   "with fewer points, or `merge`'s inputs one at a time");
}

int run_plot(const PlotCliOptions& options, const GlobalOptions& global) {
  if (writes_stdout(options.svg_path) && options.ascii)
    throw InputError("-o - and --plot cannot both write to stdout");
  std::vector<std::string> inputs = options.reports;
  inputs.insert(inputs.end(), options.ceilings.calibrations.begin(),
                options.ceilings.calibrations.end());
  check_output_paths({{"-o", options.svg_path}}, inputs);
  global.specs.check_outputs({{"-o", options.svg_path}});
  if (!options.svg_path.empty()) check_output_path(options.svg_path);
  for (const std::string& path : options.reports) check_plot_input_size(path);
  const std::vector<CalibrationOverlay> calibrations = options.ceilings.load();
  std::vector<Report> reports;
  for (const std::string& path : options.reports) {
    // Read here rather than checked with CLI::ExistingFile: one message for missing and
    // unreadable files alike.
    reports.push_back(read_report_file(path));
    if (reports.back().rows.empty()) throw InputError(path + ": the report has no rows");
    options.ceilings.apply(reports.back(), calibrations);
  }
  PlotOptions plot;
  plot.kernel_base = options.kernel_base;
  plot.kernel_head = options.kernel_head;
  plot.report_labels = options.reports;
  plot.flops = parse_flop_convention(options.flops).value_or(FlopConvention::kAlgorithmic);
  const std::string svg = options.svg_path.empty() ? "" : render_svg(reports, plot);
  std::string ascii;
  if (options.ascii || options.svg_path.empty())
    for (std::size_t i = 0; i < reports.size(); ++i)
      ascii +=
          (i > 0 ? "\n" : "") + (reports.size() > 1 ? options.reports[i] + ":\n" : "") +
          render_ascii_plot(reports[i], kAsciiWidth, kAsciiHeight, plot.flops, terminal_columns());
  OutputSet outputs;
  if (!svg.empty()) outputs.add(options.svg_path, svg);
  if (!ascii.empty()) outputs.add("-", ascii);
  outputs.commit();
  return 0;
}

}  // namespace

void setup_plot(CLI::App& root, const GlobalOptions& global, int* exit_code) {
  auto options = std::make_shared<PlotCliOptions>();
  CLI::App* sub = root.add_subcommand(
      "plot", "Roofline chart of saved reports: SVG (-o) or in the terminal (--plot, default)");
  sub->add_option("reports", options->reports,
                  "Reports written with --json; two or more: arrows from each to the next")
      ->required()
      ->type_name("REPORT.json");
  sub->add_option("-o,--output", options->svg_path, "Write the chart as SVG to PATH")
      ->type_name("PATH")
      ->check(kNonEmptyPath);
  sub->add_flag("--plot", options->ascii, "Print the chart in the terminal (also without -o)");
  sub->add_option("--kernel-base", options->kernel_base,
                  "Arrows from this kernel's points (with --kernel-head), within each report")
      ->type_name("NAME");
  sub->add_option("--kernel-head", options->kernel_head, "... to this kernel's points")
      ->type_name("NAME");
  sub->add_option("--flops", options->flops,
                  "The points' FLOPs: algorithmic (the FlashAttention convention, as the table "
                  "prints by default) or pipe (executed on the kernel's own pipe, the roofs' "
                  "unit)")
      ->check(CLI::IsMember({"algorithmic", "pipe"}))
      ->capture_default_str();
  options->ceilings.add_to(*sub, true);
  set_command_help(*sub,
                   {"plot report.json", "plot report.json -o roofline.svg",
                    "plot base.json head.json -o change.svg"},
                   {kExitOk, kExitUsage, kExitInternal});
  sub->callback([options, &global, exit_code] { *exit_code = run_plot(*options, global); });
}

}  // namespace roofline::app
