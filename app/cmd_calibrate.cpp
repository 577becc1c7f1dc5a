// `cuflash-roofline calibrate`: measure the achievable roofs of the GPU present with
// micro-kernels and write them as a spec overlay (`run|model|plot --ceilings calibrated
// --calibration FILE`). Prints each roof beside the spec sheet's figure.
#include <algorithm>
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
#include "lib/core/report/calibration_energy.hpp"
#include "lib/gpu/calibration_runner.hpp"
#include "lib/gpu/device.hpp"

namespace roofline::app {
namespace {

struct CalibrateCliOptions {
  std::string output = "calibration.json";
  int device = 0;
  int reps = 10;
  bool energy = false;
  bool power_cap = false;
};

std::string percent(double share) {
  return std::isfinite(share) ? format_fixed(100 * share, 1) + "%" : "-";
}

// The dynamic energy per unit of a measurement's work, "12.3 pJ/FLOP"; "-" when not measured.
std::string energy_cell(const CalibrationMeasurement& m, const CalibrationOverlay& overlay) {
  if (!m.energy || !overlay.static_power) return "-";
  const double joules = dynamic_joules_per_unit(m.energy->watts, overlay.static_power->energy.watts,
                                                m.energy->seconds_per_launch, m.work);
  if (!std::isfinite(joules)) return "-";
  return format_fixed(joules * 1e12, 2) + (m.target == kXuTarget    ? " pJ/exp2"
                                           : m.target == kIntTarget ? " pJ/instruction"
                                           : m.flops                ? " pJ/FLOP"
                                                                    : " pJ/byte");
}

// The rate sustained back to back and whether it is the roof: "824.6 TFLOP/s" (the capped
// roof), "611.8 TFLOP/s (above burst: the roof)" when the burst ran at a lower clock, "990.0
// TFLOP/s (not below burst)" when the burst figure stays the roof; "-" without a window.
std::string power_cap_cell(const CalibrationMeasurement& m, double unit, const char* suffix,
                           int digits) {
  const double rate = m.power_cap_rate_per_second();
  if (!(rate > 0)) return "-";
  std::string out = format_fixed(rate / unit, digits) + suffix;
  if (m.target == kXuTarget || m.target == kIntTarget) return out;
  const bool clocked = m.power_cap->sm_clock_mhz > 0;
  if (clocked && rate > m.rate_per_second())
    out += " (above burst: the roof)";
  else if (!(clocked && rate < m.rate_per_second()))
    out += " (not below burst)";
  return out;
}

// The DRAM level's stream curve, when measured: each size's time and its share of the level's
// bandwidth, a few sizes a line.
std::string render_stream(const CalibrationOverlay& overlay) {
  const auto dram =
      std::find_if(overlay.memory.begin(), overlay.memory.end(),
                   [](const MemoryLevelSpec& l) { return l.level == MemoryLevel::kDram; });
  const auto point =
      std::find_if(overlay.measurements.begin(), overlay.measurements.end(),
                   [](const CalibrationMeasurement& m) { return !m.stream_of.empty(); });
  if (dram == overlay.memory.end() || dram->stream.empty() || point == overlay.measurements.end())
    return "";
  std::string out = "DRAM stream (" + point->stream_of +
                    ", one pass over each size after run's L2 flush, timed as run times a "
                    "launch): the least time a launch moves that many bytes in, and its share of "
                    "the " +
                    format_fixed(dram->bandwidth_gbps, 1) + " GB/s above\n";
  for (std::size_t i = 0; i < dram->stream.size(); ++i) {
    const StreamPoint& p = dram->stream[i];
    out += std::string(i % 3 == 0 ? "  " : "    ") +
           pad(format_fixed(p.bytes / (1 << 20), 0) + " MiB", 8, true) + " " +
           pad(format_fixed(p.seconds * 1e6, 1) + " µs", 9, true) + " " +
           pad(percent(p.bytes / p.seconds / (dram->bandwidth_gbps * 1e9)), 4, true) +
           (i % 3 == 2 || i + 1 == dram->stream.size() ? "\n" : "");
  }
  return out;
}

// roof | measured | spec sheet | share | at clock | spread | [at the power cap | its clock]
// | [power | energy] | kernel
std::string render_calibration_table(const CalibrationOverlay& overlay, const GpuSpec& sheet) {
  // With `--power-cap` or `--energy`: "measured" is the burst figure, beside the sustained one.
  const bool capped =
      std::any_of(overlay.measurements.begin(), overlay.measurements.end(),
                  [](const CalibrationMeasurement& m) { return m.power_cap.has_value(); });
  std::vector<std::string> header = {
      "roof", capped ? "burst" : "measured", "spec sheet", "of sheet", "clock", "spread", "kernel"};
  std::vector<bool> right = {false, true, true, true, true, true, false};
  if (capped) {
    header.insert(header.end() - 1, {"at the power cap", "its clock"});
    right.insert(right.end() - 1, {true, true});
  }
  // With `--energy`: the power under each kernel and its energy per unit of work.
  const bool energy = overlay.static_power.has_value();
  if (energy) {
    header.insert(header.end() - 1, {"power", "energy"});
    right.insert(right.end() - 1, {true, true});
  }
  std::vector<std::vector<std::string>> rows;
  for (const CalibrationMeasurement& m : overlay.measurements) {
    if (!m.stream_of.empty()) continue;  // the stream curve's points: listed below the table
    double sheet_rate = std::nan("");
    double sheet_clock = std::nan("");
    std::string roof = m.target;
    const bool xu = m.target == kXuTarget;
    const bool integer = m.target == kIntTarget;
    if (integer) {
      roof = "integer instructions";  // no sheet figure: an energy coefficient, not a roof
    } else if (xu) {
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
    const char* suffix = xu        ? " T exp2/s"
                         : integer ? " T instructions/s"
                         : m.flops ? " TFLOP/s"
                                   : " GB/s";
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
    if (capped)
      rows.back().insert(rows.back().end() - 1,
                         {power_cap_cell(m, unit, suffix, digits),
                          m.power_cap && m.power_cap->sm_clock_mhz > 0
                              ? format_fixed(m.power_cap->sm_clock_mhz, 0) + " MHz"
                              : "-"});
    if (energy)
      rows.back().insert(
          rows.back().end() - 1,
          {m.energy ? format_fixed(m.energy->watts, 1) + " W" : "-", energy_cell(m, overlay)});
  }
  if (energy) {
    const EnergyMeasurement& idle = overlay.static_power->energy;
    std::vector<std::string> row(header.size(), "");
    row[0] = "static power [active_idle]";
    row[1] = format_fixed(idle.watts, 1) + " W";
    row[2] = row[3] = row[4] = "-";
    row[5] = percent(idle.relative_spread);
    row[header.size() - 3] = format_fixed(idle.watts, 1) + " W";
    row[header.size() - 2] = "-";
    if (capped) row[6] = row[7] = "-";
    row.back() = overlay.static_power->method;
    rows.push_back(std::move(row));
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
  return out + render_stream(overlay);
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
  run.energy = options.energy;
  run.power_cap = options.power_cap || options.energy;
  run.progress = [](const std::string& line) { spdlog::info("calibrate: {}", line); };
  CalibrationOverlay overlay = gpu::calibrate(run, device, choice.spec.key);
  for (const std::string& line : drop_above_sheet(overlay, choice.spec))
    spdlog::warn("calibrate: {}: left out of the overlay (run calibrate again)", line);
  const ReportContext context = make_context("calibrate");
  overlay.tool_version = context.tool_version;
  overlay.time_utc = context.time_utc;
  overlay.host = context.host;
  derive_ceilings(overlay);             // again: the sources name the time, known only now
  derive_energy_coefficients(overlay);  // likewise; the runner warned of any left out

  OutputSet outputs;  // written together (output.hpp)
  outputs.add(options.output, to_json(overlay).dump(2) + "\n");
  if (!writes_stdout(options.output))
    outputs.add(
        "-",
        "calibrated " + device.name + " (" + std::to_string(device.sm_count) + " SMs) in " +
            format_fixed(overlay.duration_seconds, 1) + " s against " + choice.spec.name + " [" +
            choice.spec.key + "]; median of " + std::to_string(options.reps) +
            " launches each, at the running clock" +
            (overlay.static_power ? "; power: NVML's energy counter over each kernel back to back, "
                                    "energy = (power − static power) × time ÷ work, on operands "
                                    "like the bundled kernels' (FP16 in [-1, 1), changing from "
                                    "one instruction or beat to the next)"
                                  : "") +
            (std::any_of(overlay.measurements.begin(), overlay.measurements.end(),
                         [](const CalibrationMeasurement& m) { return m.power_cap.has_value(); })
                 ? "; at the power cap: each compute kernel back to back, its clock NVML's "
                   "median over the window (the roof is the lower figure)"
                 : "") +
            "\n" + render_calibration_table(overlay, choice.spec) + "wrote " + options.output +
            " (use: --ceilings calibrated --calibration " + options.output + ")\n");
  outputs.commit();
  return 0;
}

}  // namespace

void setup_calibrate(CLI::App& root, const GlobalOptions& global, int* exit_code) {
  auto options = std::make_shared<CalibrateCliOptions>();
  CLI::App* sub = root.add_subcommand(
      "calibrate",
      "Measure the GPU's achievable DRAM, L2 and L1/shared bandwidth and FP32, FP16, mma.sync "
      "and wgmma peaks with micro-kernels, and what a pure DRAM read of 4 MiB to 1 GiB takes; "
      "write them as a spec overlay");
  sub->add_option("-o,--output", options->output, "Write the overlay to PATH (- for stdout)")
      ->type_name("PATH|-")
      ->check(kNonEmptyPath)
      ->capture_default_str();
  sub->add_option("--device", options->device, "CUDA device ordinal")->capture_default_str();
  sub->add_option("--reps", options->reps, "Timed launches per micro-kernel (median kept)")
      ->check(decimal_in(1, 1000))
      ->capture_default_str();
  sub->add_flag("--energy", options->energy,
                "Also measure each micro-kernel's power (NVML's energy counter over 1.2 s back "
                "to back) and the active idle power; write energy per FLOP and per byte and the "
                "static power into the overlay (the energy roofline); a compute kernel that drew "
                "the power limit is measured again on half, a quarter, an eighth of the SMs, below "
                "the cap, for its FLOP's price; implies --power-cap");
  sub->add_flag("--power-cap", options->power_cap,
                "Also run each compute micro-kernel back to back for 1.2 s while NVML samples the "
                "SM clock: the roofs the GPU sustains at its power cap, used as the compute "
                "ceilings where below the burst figures");
  set_command_help(
      *sub,
      {"calibrate -o h200-calibrated.json", "calibrate --power-cap -o h200-capped.json",
       "calibrate --energy -o h200-energy.json",
       "run --ceilings calibrated --calibration h200-calibrated.json"},
      {kExitOk,
       kExitUsage,
       {"3", "no usable GPU (calibrate reads no counters)"},
       kExitInternal,
       kExitSignal});
  sub->callback([options, &global, exit_code] { *exit_code = run_calibrate(*options, global); });
}

}  // namespace roofline::app
