#include "app/common.hpp"

#include <unistd.h>
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <span>

#include <spdlog/spdlog.h>

#include "app/export_option.hpp"
#include "lib/core/base/errors.hpp"
#include "lib/core/base/output.hpp"
#include "lib/core/base/text.hpp"
#include "lib/core/chart/svg_chart.hpp"
#include "lib/core/chart/terminal_chart.hpp"
#include "lib/core/model/model.hpp"
#include "lib/core/report/calibration.hpp"
#include "lib/core/verdict/report_notes.hpp"
#include "lib/core/writers/kernel_section.hpp"
#include "lib/core/writers/report_writers.hpp"
#include "lib/core/writers/stall_section.hpp"
#include "lib/core/writers/summary.hpp"

namespace roofline::app {

void SpecOptions::add_to(CLI::App& app) {
  app.add_option("--specs-dir", dirs, "Also load every *.json spec in DIR")
      ->type_name("DIR")
      ->check(CLI::ExistingDirectory)
      ->group("Every command");
  app.add_option("--spec", files, "Also load this GPU spec file")
      ->type_name("FILE")
      ->check(CLI::ExistingFile)
      ->group("Every command");
}

SpecRegistry SpecOptions::load() const {
  SpecRegistry registry;
  registry.add_directory(default_specs_dir());
  // A user's spec replaces a shipped one of the same key; two of the user's with one key are
  // ambiguous (which one judges depends on the order of the options), so they are refused.
  SpecRegistry given;
  for (const std::string& dir : dirs) given.add_directory(dir, SpecRegistry::SameKey::kRefuse);
  for (const std::string& file : files) given.add_file(file, SpecRegistry::SameKey::kRefuse);
  for (const GpuSpec& spec : given.all()) registry.add(spec);
  return registry;
}

void SpecOptions::check_outputs(const std::vector<OutputPath>& outputs) const {
  namespace fs = std::filesystem;
  std::vector<std::string> spec_dirs = dirs;
  spec_dirs.push_back(default_specs_dir().string());
  for (const OutputPath& output : outputs) {
    if (output.path.empty() || writes_stdout(output.path)) continue;
    std::error_code error;
    const fs::path path(output.path);
    for (const std::string& file : files)
      if (fs::equivalent(path, file, error))
        throw InputError(
            one_line(output.option + " " + output.path + " would replace the --spec file " + file));
    if (path.extension() != ".json") continue;
    const fs::path parent = path.has_parent_path() ? path.parent_path() : fs::path(".");
    for (const std::string& dir : spec_dirs)
      if (fs::equivalent(parent, dir, error))
        throw InputError(one_line(output.option + " " + output.path +
                                  " would put a .json file into the spec folder " + dir +
                                  ", where every later command reads it as a GPU spec"));
  }
}

namespace {

// Decimal integers only: CLI11 alone also takes 0x400, 0b1 and 1e3.
const CLI::Validator kDecimal(
    [](std::string& text) -> std::string {
      std::size_t start = !text.empty() && (text[0] == '-' || text[0] == '+') ? 1 : 0;
      const bool ok = text.size() > start && text.size() - start <= 10 &&
                      std::all_of(text.begin() + static_cast<std::ptrdiff_t>(start), text.end(),
                                  [](char c) { return c >= '0' && c <= '9'; });
      return ok ? std::string() : "must be a decimal integer (got " + quote_text(text) + ")";
    },
    "INT");

// "1024,4096": decimal integers, no empty item, each given once (unless `repeats`).
std::vector<int> parse_int_list(const std::string& option, const std::string& text,
                                bool repeats = false) {
  std::vector<int> out;
  for (std::string item : split(text, ',')) {
    if (item.empty())
      throw CLI::ValidationError(option, "empty item in " + quote_text(text) + " (write N,N,...)");
    const std::string error = kDecimal(item);
    if (!error.empty()) throw CLI::ValidationError(option, error);
    const long long value = std::stoll(item);
    if (value < std::numeric_limits<int>::min() || value > std::numeric_limits<int>::max())
      throw CLI::ValidationError(option, quote_text(item) + " is out of range");
    if (!repeats && std::find(out.begin(), out.end(), static_cast<int>(value)) != out.end())
      throw CLI::ValidationError(option, item + " is given twice");
    out.push_back(static_cast<int>(value));
  }
  return out;
}

// Names given twice would produce duplicate rows.
void require_distinct(const std::string& option, const std::vector<std::string>& names) {
  for (std::size_t i = 0; i < names.size(); ++i)
    for (std::size_t j = 0; j < i; ++j)
      if (names[i] == names[j])
        throw InputError(option + ": " + quote_text(names[i]) + " is given twice");
}

}  // namespace

const char* const kWorkloadGroup = "Workloads and kernels";
const char* const kDecodeGroup = "Decode workloads";
const char* const kOutputGroup = "Output";

const CLI::Validator kNonEmptyPath(
    [](std::string& text) { return text.empty() ? std::string("a path must not be empty") : ""; },
    "PATH");

void SweepOptions::add_to(CLI::App& app) {
  std::string seq_default;
  for (int n : seq_lens) seq_default += (seq_default.empty() ? "" : ",") + std::to_string(n);
  // Parsed here rather than with CLI11's delimiter, which drops empty items ("1,,2").
  app.add_option_function<std::string>(
         "--seq",
         [this](const std::string& text) {
           seq_lens = parse_int_list("--seq", text);
           seq_given = true;
         },
         "Sequence lengths N, comma-separated (decode: KV cache lengths)")
      ->type_name("N,...")
      ->default_str(seq_default)
      ->group(kWorkloadGroup);
  app.add_option("--batch", batch, "Batch size B")
      ->check(kDecimal)
      ->capture_default_str()
      ->group(kWorkloadGroup);
  app.add_option("--heads", heads, "Attention heads H")
      ->check(kDecimal)
      ->capture_default_str()
      ->group(kWorkloadGroup);
  app.add_option("--head-dim", head_dim, "Head dimension d: 32, 64 or 128")
      ->check(kDecimal)
      ->capture_default_str()
      ->group(kWorkloadGroup);
  auto* causal =
      app.add_flag("--causal", causal_only, "Causal workloads only")->group(kWorkloadGroup);
  auto* non_causal = app.add_flag("--no-causal", non_causal_only, "Non-causal workloads only")
                         ->group(kWorkloadGroup);
  causal->excludes(non_causal);
  app.add_option("--pass", passes, "Passes: fwd, bwd or fwd,bwd")
      ->delimiter(',')
      ->type_name("fwd|bwd")
      ->capture_default_str()
      ->group(kWorkloadGroup);
  app.add_option("--kernel", kernels,
                 "Kernels, comma-separated: " + known_kernel_names() + " (default: all)")
      ->delimiter(',')
      ->type_name("NAME,...")
      ->group(kWorkloadGroup);
  app.add_option("--dtype", dtype,
                 "Element type of Q, K, V, O and the gradients: fp16 or bf16 (bf16: standard, "
                 "flash-v2 and flash-v3)")
      ->check(CLI::IsMember({"fp16", "bf16"}))
      ->type_name("fp16|bf16")
      ->capture_default_str()
      ->group(kWorkloadGroup);
  app.add_option_function<std::string>(
         "--q-len", [this](const std::string& text) { q_lens = parse_int_list("--q-len", text); },
         "Decode: new query tokens per sequence (1-16), comma-separated; --seq gives the KV "
         "cache's length (kernel flash-decode)")
      ->type_name("N,...")
      ->group(kDecodeGroup);
  app.add_option("--kv-heads", kv_heads,
                 "Decode: key/value heads (GQA; --heads a multiple of it; default --heads)")
      ->check(kDecimal)
      ->group(kDecodeGroup);
  app.add_option("--page-size", page_size,
                 "Decode: tokens a page of a paged KV cache, 16-256 (default 0: contiguous)")
      ->check(kDecimal)
      ->group(kDecodeGroup);
  app.add_option_function<std::string>(
         "--kv-splits",
         [this](const std::string& text) { kv_splits = parse_int_list("--kv-splits", text); },
         "Decode: split-KV parts per sequence, comma-separated, each a row (0: chosen for the "
         "GPU's SMs; 1: off)")
      ->type_name("N,...")
      ->default_str("0")
      ->group(kDecodeGroup);
  app.add_option_function<std::string>(
         "--kv-lens",
         [this](const std::string& text) { kv_lens = parse_int_list("--kv-lens", text, true); },
         "Decode: each sequence's KV cache length (ragged batch), comma-separated, --batch of "
         "them; replaces --seq")
      ->type_name("N,...")
      ->group(kDecodeGroup);
}

Workload SweepOptions::base_workload(int seq_len, bool causal, Pass pass) const {
  Workload w;
  w.batch = batch;
  w.heads = heads;
  w.seq_len = seq_len;
  w.head_dim = head_dim;
  w.causal = causal;
  w.pass = pass;
  w.dtype = parse_dtype(dtype).value_or(DType::kFp16);  // CLI11 checked the name
  return w;
}

std::vector<Workload> SweepOptions::decode_workloads() const {
  if (!kv_lens.empty() && seq_given)
    throw InputError("--kv-lens gives the cache lengths: drop --seq");
  if (!kv_lens.empty() && kv_lens.size() != static_cast<std::size_t>(batch))
    throw InputError("--kv-lens needs one length per sequence (--batch " + std::to_string(batch) +
                     "; got " + std::to_string(kv_lens.size()) + ")");
  for (const std::string& pass : passes)
    if (pass != "fwd")
      throw InputError("decode workloads (--q-len) have a forward pass only (got --pass " + pass +
                       ")");
  std::vector<int> lengths = seq_lens;
  if (!kv_lens.empty()) lengths = {*std::max_element(kv_lens.begin(), kv_lens.end())};
  std::vector<bool> causal_values;
  if (!non_causal_only) causal_values.push_back(true);
  if (!causal_only) causal_values.push_back(false);
  std::vector<Workload> out;
  for (int q : q_lens)
    for (int n : lengths)
      for (int splits : kv_splits)
        for (bool causal : causal_values) {
          // With one new token the mask changes nothing: one row, not two alike.
          if (q == 1 && causal && causal_values.size() == 2) continue;
          Workload w = base_workload(n, causal, Pass::kForward);
          w.q_len = q;
          w.kv_heads = kv_heads > 0 ? kv_heads : heads;
          w.page_size = page_size;
          w.kv_splits = splits;
          w.kv_lens = kv_lens;
          w.validate();
          out.push_back(w);
        }
  return out;
}

std::vector<Workload> SweepOptions::workloads() const {
  if (decode()) return decode_workloads();
  if (kv_heads != 0 || page_size != 0 || !kv_lens.empty() || kv_splits != std::vector<int>{0})
    throw InputError(
        "--kv-heads, --page-size, --kv-splits and --kv-lens describe decode "
        "workloads: give --q-len too");
  std::vector<Workload> out;
  std::vector<bool> causal_values;
  if (!non_causal_only) causal_values.push_back(true);
  if (!causal_only) causal_values.push_back(false);
  if (seq_lens.empty()) throw InputError("--seq needs at least one sequence length");
  require_distinct("--pass", passes);
  for (const std::string& pass_name : passes) {
    auto pass = parse_pass(pass_name);
    if (!pass) throw InputError("--pass must be fwd or bwd (got \"" + pass_name + "\")");
    for (int n : seq_lens)
      for (bool causal : causal_values) {
        Workload w = base_workload(n, causal, *pass);
        w.validate();
        out.push_back(w);
      }
  }
  return out;
}

std::vector<std::string> SweepOptions::kernel_names() const {
  const bool bf16 = dtype == "bf16";
  if (kernels.empty()) {
    std::vector<std::string> all;
    for (const KernelModel& model : kernel_models())
      if ((!bf16 || model.supports_bf16) && model.decode_only == decode())
        all.push_back(model.name);
    return all;
  }
  for (const std::string& name : kernels) {
    const KernelModel& model = find_kernel_model(name);  // throws with the list
    if (bf16 && !model.supports_bf16)
      throw InputError("--dtype bf16: " + name +
                       " runs FP16 only (BF16 kernels: " + bf16_kernel_names() + ")");
    if (model.decode_only && !decode())
      throw InputError(name + " runs decode workloads: give --q-len (new tokens per sequence)");
    if (!model.decode_only && decode())
      throw InputError("--q-len makes decode workloads, which " + name +
                       " does not run (decode kernels: flash-decode)");
  }
  require_distinct("--kernel", kernels);
  return kernels;
}

void OutputOptions::add_to(CLI::App& app, bool with_plots) {
  app.add_option("--json", json_path, "Write the report as JSON to PATH (- for stdout)")
      ->type_name("PATH|-")
      ->check(kNonEmptyPath)
      ->group(kOutputGroup);
  app.add_option("--csv", csv_path, "Write the report as CSV to PATH (- for stdout)")
      ->type_name("PATH|-")
      ->check(kNonEmptyPath)
      ->group(kOutputGroup);
  if (with_plots) {
    app.add_option("--svg", svg_path, "Draw the roofline chart as SVG to PATH")
        ->type_name("PATH")
        ->check(kNonEmptyPath)
        ->group(kOutputGroup);
    app.add_flag("--plot", ascii_plot, "Print a roofline chart in the terminal")
        ->group(kOutputGroup);
  }
  table.add_to(app, report_table_columns(), true);
}

void OutputOptions::add_export_to(CLI::App& app) {
  add_export_option(app, exports);
}

void OutputOptions::check(const std::vector<std::string>& inputs, const SpecOptions& specs) const {
  table.check(report_table_columns());
  if (json_path == "-" && csv_path == "-")
    throw InputError("--json - and --csv - cannot both write to stdout");
  if (writes_stdout(svg_path)) throw InputError("--svg needs a file path");
  std::vector<OutputPath> outputs = {
      {"--json", json_path}, {"--csv", csv_path}, {"--svg", svg_path}};
  for (const OutputPath& path : export_paths(export_targets(exports))) outputs.push_back(path);
  check_output_paths(outputs, inputs);
  specs.check_outputs(outputs);
  for (const OutputPath& output : outputs)
    if (!output.path.empty()) check_output_path(output.path);
}

void OutputOptions::emit(const Report& report, const std::string* terminal) const {
  // Everything rendered first, then written together (output.hpp): all or nothing.
  OutputSet outputs;
  const JudgedReport judged(report);  // every verdict made once, read by every writer
  if (!json_path.empty()) outputs.add(json_path, render_json(judged));
  if (!csv_path.empty()) outputs.add(csv_path, render_csv(judged));
  if (!svg_path.empty()) {
    PlotOptions plot;
    plot.flops = table.convention();
    outputs.add(svg_path, render_svg(std::span(&judged, 1), plot));
  }
  bool export_to_stdout = false;
  for (const ExportTarget& target : export_targets(exports)) {
    outputs.add(target.path, render_export(target, judged));
    export_to_stdout = export_to_stdout || writes_stdout(target.path);
  }
  // The table only where stdout gets no report (so that it never follows one on a pipe).
  if (!writes_stdout(json_path) && !writes_stdout(csv_path) && !export_to_stdout &&
      terminal != nullptr) {
    outputs.add("-", *terminal);
  } else if (!writes_stdout(json_path) && !writes_stdout(csv_path) && !export_to_stdout) {
    const TableFit fit = table.fit();
    TableOptions options;
    options.color = colour_wanted();
    options.max_width = fit.max_width;
    options.columns = fit.columns;
    options.flops = table.convention();
    std::string text;
    if (summary_top > 0 && report.rows.size() > 1)
      text =
          render_summary(summarize(judged, GroupBy::kFunctor), summary_top, fit.max_width) + "\n";
    text += render_table(judged, options);
    if (const std::string kernels = render_kernels(report, fit.max_width); !kernels.empty())
      text += "\n" + kernels;
    if (const std::string stalls = render_stalls(judged, {fit.max_width}); !stalls.empty())
      text += "\n" + stalls;
    if (ascii_plot) text += "\n" + render_ascii_plot(judged, 72, 22, options.flops, fit.max_width);
    outputs.add("-", std::move(text));
  }
  outputs.commit();
  // Once per cause, with the rows it concerns, on stderr (silenced by -q).
  for (const ReportNote& warning : report_warnings(judged)) spdlog::warn("{}", describe(warning));
}

void CeilingOptions::add_to(CLI::App& app, bool keep_recorded_choice) {
  keep_recorded = keep_recorded_choice;
  app.add_option("--ceilings", ceilings,
                 std::string("Judge against the spec sheet's ceilings or those measured by "
                             "`calibrate` (calibrated needs --calibration FILE unless the report "
                             "carries them; default: ") +
                     (keep_recorded ? "as the report was written" : "spec") + ")")
      ->check(CLI::IsMember({"spec", "calibrated"}))
      ->type_name("spec|calibrated")
      ->group("Ceilings");
  app.add_option("--calibration", calibrations,
                 "Calibration file written by `cuflash-roofline calibrate`: its ceilings are "
                 "embedded beside the spec's (charts draw both), and with `calibrate --energy` "
                 "its energy coefficients model each counted row's joules; it replaces a "
                 "calibration the report already carries")
      ->type_name("FILE")
      ->group("Ceilings");
}

std::vector<CalibrationOverlay> CeilingOptions::load() const {
  if (ceilings == "calibrated" && calibrations.empty() && !keep_recorded)
    throw InputError(
        "--ceilings calibrated needs --calibration FILE (written by `cuflash-roofline "
        "calibrate`)");
  std::vector<CalibrationOverlay> overlays;
  for (const std::string& file : calibrations) {
    overlays.push_back(load_calibration_file(file));
    // Two calibrations of one GPU: which would judge is a guess, so neither does.
    const CalibrationOverlay& added = overlays.back();
    for (std::size_t i = 0; i + 1 < overlays.size(); ++i)
      if (iequals(overlays[i].spec_key, added.spec_key) ||
          iequals(overlays[i].device.name, added.device.name))
        throw InputError(one_line("--calibration " + overlays[i].file + " and --calibration " +
                                  added.file + " both calibrate " + added.spec_key + " (" +
                                  added.device.name + "): give one"));
  }
  return overlays;
}

void CeilingOptions::apply(Report& report, const std::vector<CalibrationOverlay>& overlays) const {
  if (ceilings.empty() && overlays.empty()) return;
  const std::string choice = ceilings.empty() ? report.context.ceilings : ceilings;
  apply_ceilings(report, choice == "calibrated" ? Ceilings::kCalibrated : Ceilings::kSpec,
                 overlays);
}

bool stderr_is_tty() {
  return isatty(STDERR_FILENO) == 1;
}
bool stdout_is_tty() {
  return isatty(STDOUT_FILENO) == 1;
}

bool colour_wanted() {
  const char* no_color = std::getenv("NO_COLOR");
  return stdout_is_tty() && (no_color == nullptr || *no_color == '\0');
}

std::string display_path(const std::string& path) {
  const std::filesystem::path given(path);
  if (!given.is_absolute()) return path;
  std::error_code error;
  const std::filesystem::path here = std::filesystem::current_path(error);
  if (error) return path;
  const std::filesystem::path relative = given.lexically_normal().lexically_relative(here);
  if (relative.empty() || *relative.begin() == "..") return path;
  return relative.string();
}

}  // namespace roofline::app
