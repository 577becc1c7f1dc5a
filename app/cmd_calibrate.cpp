// `cuflash-roofline calibrate`: measure the achievable roofs of the GPU present with
// micro-kernels and write them as a spec overlay (`run|model|plot --ceilings calibrated
// --calibration FILE`). Prints each roof beside the spec sheet's figure.
#include <cmath>
#include <memory>
#include <optional>

#include <spdlog/spdlog.h>
#include <nlohmann/json.hpp>

#include "app/commands.hpp"
#include "app/help.hpp"
#include "app/options.hpp"
#include "lib/core/base/errors.hpp"
#include "lib/core/base/output.hpp"
#include "lib/core/base/text.hpp"
#include "lib/core/model/roofline.hpp"
#include "lib/core/report/calibration.hpp"
#include "lib/gpu/calibration_runner.hpp"
#include "lib/gpu/device.hpp"

namespace roofline::app {
namespace {

struct CalibrateCliOptions {
  std::string output = "calibration.json";
  int device = 0;
  int reps = 10;
};

std::string percent(double share) {
  return std::isfinite(share) ? format_fixed(100 * share, 1) + "%" : "-";
}

// roof | measured | spec sheet | share | at clock | spread | kernel
std::string render_calibration_table(const CalibrationOverlay& overlay, const GpuSpec& sheet) {
  const std::vector<std::string> header = {"roof",  "measured", "spec sheet", "of sheet",
                                           "clock", "spread",   "kernel"};
  const std::vector<bool> right = {false, true, true, true, true, true, false};
  std::vector<std::vector<std::string>> rows;
  for (const CalibrationMeasurement& m : overlay.measurements) {
    double sheet_rate = std::nan("");
    double sheet_clock = std::nan("");
    std::string roof = m.target;
    const bool xu = m.target == kXuTarget;
    if (xu) {
      roof = "XU exp2 rate";
      if (sheet.exp2_per_second() > 0) {
        sheet_rate = sheet.exp2_per_second();
        sheet_clock = sheet.boost_clock_mhz;
      }
    } else if (auto level = parse_memory_level(m.target)) {
      roof = std::string(display_name(*level)) + " bandwidth";
      if (const MemoryLevelSpec* s = sheet.level(*level)) sheet_rate = s->bandwidth_gbps * 1e9;
    } else {
      for (const ComputeCeiling& c : sheet.compute)
        if (c.id() == m.target) {
          sheet_rate = c.peak_tflops * 1e12;
          sheet_clock = c.clock_mhz;
          roof = c.label();
        }
      if (roof == m.target)
        for (const ComputeCeiling& c : overlay.compute)
          if (c.id() == m.target) roof = c.label();
    }
    const double rate = m.rate_per_second();
    const double unit = m.flops ? 1e12 : 1e9;
    const char* suffix = xu ? " T exp2/s" : m.flops ? " TFLOP/s" : " GB/s";
    std::string share = percent(rate / sheet_rate);
    // A compute peak is also compared at the clock it ran at (same per-cycle rate).
    if (m.flops && std::isfinite(sheet_clock) && m.sm_clock_mhz > 0)
      share += " (" +
               percent(rate / peak_at_clock(sheet_rate, sheet_clock * 1e6, m.sm_clock_mhz * 1e6)) +
               " at clock)";
    const int digits = xu ? 3 : 1;
    rows.push_back(
        {roof + " [" + m.id + "]", format_fixed(rate / unit, digits) + suffix,
         std::isfinite(sheet_rate) ? format_fixed(sheet_rate / unit, digits) + suffix : "-", share,
         m.sm_clock_mhz > 0 ? format_fixed(m.sm_clock_mhz, 0) + " MHz" : "-",
         percent(m.relative_range()), m.method});
  }
  std::vector<std::size_t> widths(header.size());
  for (std::size_t c = 0; c < header.size(); ++c) {
    widths[c] = display_width(header[c]);
    for (const auto& row : rows) widths[c] = std::max(widths[c], display_width(row[c]));
  }
  std::string out;
  auto line = [&](const std::vector<std::string>& cells) {
    for (std::size_t c = 0; c < cells.size(); ++c)
      out +=
          (c ? "  " : "") + (c + 1 == cells.size() ? cells[c] : pad(cells[c], widths[c], right[c]));
    out += "\n";
  };
  line(header);
  for (const auto& row : rows) line(row);
  return out;
}

int run_calibrate(const CalibrateCliOptions& options, const GlobalOptions& global) {
  check_output_path(options.output);
  global.specs.check_outputs({{"-o", options.output}});
  const SpecRegistry registry = global.specs.load();
  const DeviceInfo device = gpu::detect_device(options.device);
  gpu::SpecChoice choice = gpu::choose_spec(registry, device, options.device, std::nullopt);
  if (!choice.note.empty()) spdlog::warn("{}", choice.note);

  gpu::CalibrateOptions run;
  run.device = options.device;
  run.reps = options.reps;
  run.progress = [](const std::string& line) { spdlog::info("calibrate: {}", line); };
  CalibrationOverlay overlay = gpu::calibrate(run, device, choice.spec.key);
  const ReportContext context = make_context("calibrate");
  overlay.tool_version = context.tool_version;
  overlay.time_utc = context.time_utc;
  overlay.host = context.host;
  derive_ceilings(overlay);  // again: the sources name the time, known only now

  OutputSet outputs;  // written together (output.hpp)
  outputs.add(options.output, to_json(overlay).dump(2) + "\n");
  if (!writes_stdout(options.output))
    outputs.add("-", "calibrated " + device.name + " (" + std::to_string(device.sm_count) +
                         " SMs) in " + format_fixed(overlay.duration_seconds, 1) + " s against " +
                         choice.spec.name + " [" + choice.spec.key + "]; median of " +
                         std::to_string(options.reps) + " launches each, at the running clock\n" +
                         render_calibration_table(overlay, choice.spec) + "wrote " +
                         options.output + " (use: --ceilings calibrated --calibration " +
                         options.output + ")\n");
  outputs.commit();
  return 0;
}

}  // namespace

void setup_calibrate(CLI::App& root, const GlobalOptions& global, int* exit_code) {
  auto options = std::make_shared<CalibrateCliOptions>();
  CLI::App* sub = root.add_subcommand(
      "calibrate",
      "Measure the GPU's achievable DRAM, L2 and L1/shared bandwidth and FP32, FP16, mma.sync "
      "and wgmma peaks with micro-kernels; write them as a spec overlay");
  sub->add_option("-o,--output", options->output, "Write the overlay to PATH (- for stdout)")
      ->type_name("PATH|-")
      ->check(kNonEmptyPath)
      ->capture_default_str();
  sub->add_option("--device", options->device, "CUDA device ordinal")->capture_default_str();
  sub->add_option("--reps", options->reps, "Timed launches per micro-kernel (median kept)")
      ->check(decimal_in(1, 1000))
      ->capture_default_str();
  set_command_help(*sub,
                   {"calibrate -o h200-calibrated.json",
                    "run --ceilings calibrated --calibration h200-calibrated.json"},
                   {kExitOk, kExitUsage, kExitNoGpu, kExitInternal, kExitSignal});
  sub->callback([options, &global, exit_code] { *exit_code = run_calibrate(*options, global); });
}

}  // namespace roofline::app
