// `cuflash-roofline specs list | show NAME | validate FILE...`
#include <cmath>
#include <cstdio>
#include <iostream>
#include <memory>
#include <sstream>

#include "app/commands.hpp"
#include "app/help.hpp"
#include "app/terminal_width.hpp"
#include "lib/core/base/errors.hpp"
#include "lib/core/base/table_layout.hpp"
#include "lib/core/base/text.hpp"
#include "lib/core/model/roofline.hpp"

namespace roofline::app {
namespace {

template <typename... Args>
void print(const char* format, Args... args) {
  char line[512];
  std::snprintf(line, sizeof line, format, args...);
  std::cout << line;
}

std::string best_tensor(const GpuSpec& spec, const ComputeCeiling** out) {
  const ComputeCeiling* best = spec.ceiling(ComputePath::kTensorFp16);
  *out = best;
  return best ? format_fixed(best->peak_tflops, 1) : "-";
}

int run_list(const GlobalOptions& global) {
  const SpecRegistry registry = global.specs.load();
  // Fitted to the terminal: the key and the peaks are the last to go, the name is cut first.
  static const std::vector<TableColumn> columns = {
      {"key", "key", false, 0, 0},          {"name", "name", false, 3, 14, 9},
      {"chip", "chip", false, 6, 0},        {"cc", "CC", false, 5, 0},
      {"sms", "SMs", true, 4, 0},           {"dram", "DRAM GB/s", true, 0, 0},
      {"fp16", "FP16 TFLOP/s", true, 0, 0}, {"ridge", "ridge FLOP/B", true, 2, 0},
  };
  std::vector<std::vector<std::string>> rows;
  for (const GpuSpec& spec : registry.all()) {
    const ComputeCeiling* tensor = nullptr;
    const std::string peak = best_tensor(spec, &tensor);
    const double ridge =
        tensor ? ridge_point(tensor->peak_tflops * 1e12, spec.dram().bandwidth_gbps * 1e9)
               : std::nan("");
    // A spec file's text is printed escaped (one_line): no control character reaches the
    // terminal.
    rows.push_back({one_line(spec.key), one_line(spec.name), one_line(spec.chip),
                    one_line(spec.compute_capability), std::to_string(spec.sm_count),
                    format_fixed(spec.dram().bandwidth_gbps, 0), peak, format_fixed(ridge, 1)});
  }
  const std::size_t width = terminal_columns();
  const FittedTable table = fit_table(columns, rows, {width, {}});
  std::string footer =
      "FP16 TFLOP/s: best dense tensor FP16 ceiling; ridge: that ceiling over "
      "DRAM bandwidth.";
  if (!table.left_out.empty() || table.cut)
    footer += std::string(" Fitted to ") + std::to_string(width) + " columns" +
              (table.left_out.empty() ? "" : " (left out: " + join(table.left_out, ", ") + ")") +
              (table.cut ? ", names cut (…)" : "") + ": `specs show KEY` has everything.";
  std::cout << table.text << wrap_words(footer, width);
  return 0;
}

int run_show(const std::string& name, const GlobalOptions& global) {
  const SpecRegistry registry = global.specs.load();
  const GpuSpec& spec = registry.find(name);
  // Every line fitted to the terminal: a longer one (a source) breaks at spaces, its
  // continuation lines indented under its text.
  const std::size_t width = terminal_columns();
  auto line = [width](const std::string& text, std::string_view indent) {
    if (width == 0 || display_width(text) <= width)
      std::cout << text << "\n";
    else
      std::cout << wrap_words(text, width, indent);
  };
  auto number = [](double value) {  // as a stream prints it: 1980, 1.5
    std::ostringstream out;
    out << value;
    return out.str();
  };
  line(one_line(spec.name) + "  [" + one_line(spec.key) + "]  " + one_line(spec.file), "    ");
  line("  aliases: " + one_line(join(spec.aliases, ", ")), "    ");
  line("  device names: " + one_line(join(spec.device_names, ", ")), "    ");
  line("  chip " + one_line(spec.chip) + ", compute capability " +
           one_line(spec.compute_capability) + ", " + std::to_string(spec.sm_count) + " SMs",
       "    ");
  line("  clocks: boost " + number(spec.boost_clock_mhz) + " MHz, base " +
           number(spec.base_clock_mhz) + " MHz; L2 " +
           format_si(static_cast<double>(spec.l2_cache_bytes)) + "B; memory " +
           format_si(static_cast<double>(spec.memory_bytes)) + "B; TDP " + number(spec.tdp_watts) +
           " W",
       "    ");
  // The floors no target goes below (advice.hpp), where measured.
  if (spec.launch_floor_us > 0 || spec.node_floor_us > 0)
    line("  floors: a launch " +
             (spec.launch_floor_us > 0 ? number(spec.launch_floor_us) + " µs" : "not measured") +
             ", a graph node " +
             (spec.node_floor_us > 0 ? number(spec.node_floor_us) + " µs" : "not measured"),
         "    ");
  for (const auto& [key, source] : spec.sources)
    line("    " + one_line(key) + ": " + one_line(source), "        ");
  std::cout << "  memory levels:\n";
  for (const MemoryLevelSpec& level : spec.memory)
    line("    " + std::string(display_name(level.level)) + "  " +
             format_fixed(level.bandwidth_gbps, 0) + " GB/s  (" + one_line(level.source) + ")",
         "        ");
  std::cout << "  compute ceilings (ridge against DRAM):\n";
  for (const ComputeCeiling& c : spec.compute)
    line("    " + c.label() + "  " + format_fixed(c.peak_tflops, 1) + " TFLOP/s at " +
             format_fixed(c.clock_mhz, 0) + " MHz, ridge " +
             format_fixed(ridge_point(c.peak_tflops * 1e12, spec.dram().bandwidth_gbps * 1e9), 1) +
             " FLOP/B  (" + one_line(c.source) + ")",
         "        ");
  return 0;
}

int run_validate(const std::vector<std::string>& files) {
  int failures = 0;
  SpecRegistry registry;
  for (const std::string& file : files) {
    try {
      GpuSpec spec = load_gpu_spec_file(file);
      std::string name = spec.name;
      registry.add(std::move(spec));  // also catches aliases shared between the given files
      std::cout << "ok: " << one_line(file) << " (" << one_line(name) << ")\n";
    } catch (const InputError& error) {
      std::cerr << "error: " << one_line(error.what()) << "\n";
      ++failures;
    }
  }
  return failures == 0 ? 0 : static_cast<int>(ExitCode::kUsage);
}

}  // namespace

void setup_specs(CLI::App& root, const GlobalOptions& global, int* exit_code) {
  CLI::App* specs = root.add_subcommand("specs", "List, show and validate GPU spec files");
  specs->require_subcommand(1);
  const std::vector<ExitLine> codes = {kExitOk, kExitUsage, kExitInternal};
  set_command_help(*specs, {"specs list", "specs show h200", "specs validate my-gpu.json"}, codes);
  CLI::App* list = specs->add_subcommand("list", "List the known GPU specs");
  set_command_help(*list, {"specs list", "specs list --specs-dir my-specs/"}, codes);
  list->callback([&global, exit_code] { *exit_code = run_list(global); });
  auto name = std::make_shared<std::string>();
  CLI::App* show = specs->add_subcommand("show", "Show one GPU spec with its sources");
  show->add_option("name", *name, "GPU name or alias")->required()->type_name("NAME");
  set_command_help(*show, {"specs show h200", "specs show a100 --spec my-a100.json"}, codes);
  show->callback([name, &global, exit_code] { *exit_code = run_show(*name, global); });
  auto files = std::make_shared<std::vector<std::string>>();
  CLI::App* validate = specs->add_subcommand("validate", "Validate spec files");
  validate->add_option("files", *files, "Spec files")
      ->required()
      ->check(CLI::ExistingFile)
      ->type_name("FILE");
  set_command_help(
      *validate, {"specs validate my-gpu.json", "specs validate gpu_specs/*.json"},
      {kExitOk, {"2", "a file is not a valid spec (each named on stderr)"}, kExitInternal});
  validate->callback([files, exit_code] { *exit_code = run_validate(*files); });
}

}  // namespace roofline::app
