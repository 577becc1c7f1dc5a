// Measured ceilings: the spec overlay that `cuflash-roofline calibrate` writes, read like a spec.
//
// An overlay holds what micro-kernels reached on one device at its running clock (raw samples
// per measurement) and, derived from them, memory levels and compute ceilings in the spec
// format. Applied to a spec it yields a calibrated spec: every level and ceiling the overlay
// measured replaces the sheet's figure (or fills a level the sheet lacks); the rest stays the
// sheet's, each figure with its own source.
//
// File format (JSON, `format_version` 1):
//   {"format": "cuflash-roofline calibration", "format_version": 1, "tool_version": "...",
//    "time_utc": "...", "host": "...", "spec": "<key of the spec it calibrates>",
//    "device": {"name", "chip", "compute_capability", "sm_count", "driver_version",
//               "runtime_version"},
//    "duration_seconds": s,
//    "measurements": [{"id", "target", "method", "unit": "bytes"|"flops", "work",
//                      "samples_seconds": [...], "sm_clock_mhz"}],
//    "memory_levels": [spec entries], "compute_ceilings": [spec entries]}
// With `calibrate --energy` (calibration_energy.hpp), keys that a reader without them refuses
// rather than misreads, so the version stays 1:
//   each measurement's "energy": the kernel back to back while NVML's energy counter was read
//   (report JSON's row "energy" object: joules_per_launch, watts, seconds_per_launch,
//   window_seconds, updates, relative_spread);
//   "static_power": {"method", "energy": {the same object}, "power_limit_watts" (optional)}: the
//   active idle power, and the power limit the board enforced;
//   "energy_coefficients": the derived coefficients, a spec's entry (energy_coefficients.hpp).
// A stream measurement (a pure read of one size, timed as `run` times a launch) has "stream_of"
// (the id of the same kernel's whole-device measurement); the DRAM level's spec entry then has
// "stream" and "stream_source" (gpu_spec.hpp). A reader without them refuses the file rather
// than misreads it, so the version stays 1.
// A memory measurement on a share of the SMs has "sms" (the SMs of its green context) and
// "share_of" (the id of the same kernel's whole-device measurement); its level's spec entry
// then has "shares" and "shares_source" (gpu_spec.hpp). A reader without them refuses the
// file rather than misreads it, so the version stays 1.
// With `calibrate --power-cap` (implied by --energy), a compute measurement's "power_cap":
//   {"seconds_per_launch", "window_seconds", "launches", "sm_clock_mhz", "clock_samples",
//    "clock_limit"}: the kernel back to back for over a second (PowerCapMeasurement); refused,
//   not misread, by a reader without it, so the version stays 1. Its compute ceiling is then
//   the lower of the two rates, marked "at_power_cap": true in the spec entry when it is the
//   sustained one.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "lib/core/domain/gpu_spec.hpp"
#include "lib/core/report/report.hpp"

namespace roofline {

// The `format_version` of calibration files; readers refuse any other. Bumped under the same rule
// as kReportSchemaVersion (report.hpp): when a reader of the previous version would misread a
// file of the new one; a key old readers may ignore does not bump it.
inline constexpr int kCalibrationFormatVersion = 1;

// One micro-kernel's timings. `target` is a memory level ("dram", "l2", "l1"), a ceiling id
// ("fp32", "tensor_fp16.mma_sync") or kXuTarget; several measurements may share a target (the
// best counts).
// The exponential unit's measurement (unit "results" in the file, `flops` true: a compute
// rate quoted at its clock): it calibrates the spec's xu_exp2_per_clock_per_sm.
inline constexpr const char* kXuTarget = "xu";
// The integer-instruction measurement (unit "instructions": thread instructions, `flops` true: a
// rate quoted at its clock): it prices an instruction that is neither a FLOP nor a byte for the
// energy model (energy_coefficients.hpp) and calibrates no roof.
inline constexpr const char* kIntTarget = "int";
// The DRAM stream read by bulk copies (TMA) into shared memory: its rate is a DRAM ceiling like
// the others; its energy prices the bytes that bypass L1 (joules_per_bulk_dram_byte), not the
// DRAM coefficient.
inline constexpr const char* kDramBulkId = "dram_read_bulk";
// The write-only DRAM stream: a DRAM ceiling too; its energy prices a DRAM byte written
// (joules_per_dram_write_byte).
inline constexpr const char* kDramWriteId = "dram_write";
// FP32 reductions into a buffer resident in L2: no ceiling (a reduction's rate is not the L2
// read roof); its energy prices a byte reduced in L2 (joules_per_l2_reduction_byte).
inline constexpr const char* kL2ReduceId = "l2_reduce";

// A micro-kernel launched back to back for a settling start and a window of over a second
// (gpu/energy_window.hpp): the rate the pipe sustains once the board has settled at its power
// cap, and the SM clock it settled at. Raw; the rate is work ÷ seconds_per_launch.
struct PowerCapMeasurement {
  double seconds_per_launch = 0;  // GPU time per launch over the window, the gaps included
  double window_seconds = 0;      // the window's length (the settling start excluded)
  long long launches = 0;         // launches inside the window
  double sm_clock_mhz = 0;        // median of NVML's SM clock samples over the window
  int clock_samples = 0;          // how many samples that median is of
  // Why NVML said the clock was held down during the window (ClockSamples::limit: "power cap",
  // "thermal", "power cap, thermal", "none"); empty when NVML did not say.
  std::string clock_limit;

  friend bool operator==(const PowerCapMeasurement&, const PowerCapMeasurement&) = default;
};

struct CalibrationMeasurement {
  std::string id;      // "dram_read", "dram_copy", "l2_read", "fp32_ffma", ...
  std::string target;  // what it measures
  std::string method;  // one line: what the kernel does
  bool flops = false;  // work is FLOPs (else bytes)
  double work = 0;     // FLOPs or bytes per launch
  std::vector<double> samples_seconds;
  double sm_clock_mhz = 0;  // measured inside the kernel (cycles ÷ elapsed); 0 when unknown
  // `calibrate --energy`: the kernel launched back to back while the board's energy counter
  // was read (raw); absent otherwise.
  std::optional<EnergyMeasurement> energy;
  // `calibrate --power-cap` (or --energy), compute kernels only: the same launch back to back
  // at the power cap; absent otherwise.
  std::optional<PowerCapMeasurement> power_cap;
  // A share of the SMs: the kernel of measurement `share_of` (on the whole device) run in a
  // green context of `sms` SMs; 0 and empty for a whole-device measurement. A share measures
  // its level's share curve, never the level itself.
  int sms = 0;
  std::string share_of;
  // A point of the DRAM level's stream curve: the kernel of measurement `stream_of` (on the whole
  // device) reading `work` bytes once, after `run`'s L2 flush, timed as `run` times a launch;
  // empty for any other measurement. Never a ceiling (its rate includes the launch and ramp).
  std::string stream_of;

  double median_seconds() const;
  double rate_per_second() const;  // work ÷ median: FLOP/s or bytes/s (the burst rate)
  // work ÷ power_cap->seconds_per_launch; 0 without a power-cap measurement.
  double power_cap_rate_per_second() const;
  // (max − min) ÷ median over the samples.
  double relative_range() const;
};

struct CalibrationOverlay {
  std::string tool_version;
  std::string time_utc;
  std::string host;
  std::string spec_key;  // the spec this calibrates (the one the device matched)
  DeviceInfo device;     // memory_bytes and l2_cache_bytes are not stored
  double duration_seconds = 0;
  std::vector<CalibrationMeasurement> measurements;
  std::vector<MemoryLevelSpec> memory;
  std::vector<ComputeCeiling> compute;
  // exp2 results per clock and SM measured by the XU micro-kernel (0: not measured), and its
  // source line.
  double xu_exp2_per_clock_per_sm = 0;
  std::string xu_source;
  // `calibrate --energy`: the active idle power (method: what ran) and, derived from it and
  // each measurement's energy (calibration_energy.hpp), the energy roofline's coefficients.
  struct StaticPower {
    std::string method;
    EnergyMeasurement energy;
    double power_limit_watts = 0;  // the board's enforced power limit (NVML); 0: not known
  };
  std::optional<StaticPower> static_power;
  std::optional<EnergyCoefficients> energy;
  std::string file;  // where it was read from; empty when built in memory
};

// Fills `memory` and `compute` from `measurements`: per target the whole-device measurement of
// the highest (burst) rate (stream measurements left out); a level's share curve from the share
// measurements of the kernel (share_of) with the most of them, its whole-device rate the last
// point; the DRAM level's stream curve from the stream measurements (per size the least time); a
// compute ceiling is quoted at the SM clock its measurement ran at. Where that measurement has a
// power-cap window (with a clock) whose rate is below the burst rate, the ceiling is the sustained
// one, at_power_cap, quoted at the window's median NVML clock, its source naming both; a sustained
// rate at or above the burst rate leaves the burst ceiling (the lower of the two; the window stays
// in the measurement as measured). The XU rate is per clock and stays the burst's. Throws
// InputError for a target that is neither a level nor a ceiling id, or a compute measurement
// without a clock.
void derive_ceilings(CalibrationOverlay& overlay);

// The DRAM bandwidth no memory can exceed: a measurement above the spec sheet's DRAM figure (its
// pin rate) by more than kAboveSheetTolerance measured something else (one H100's bulk-copy
// kernel read 116% of the sheet once, 2026-12-06, and 97.5% in every later run). Removes every
// such whole-device or share measurement from `overlay.measurements` and returns one line per
// removal, saying what and by how much; nothing when the sheet has no DRAM figure.
inline constexpr double kAboveSheetTolerance = 0.03;
std::vector<std::string> drop_above_sheet(CalibrationOverlay& overlay, const GpuSpec& sheet);

nlohmann::json to_json(const CalibrationOverlay& overlay);
// Throws InputError("<origin>: <key>: <what is wrong>").
CalibrationOverlay parse_calibration(const nlohmann::json& json, const std::string& origin);
CalibrationOverlay load_calibration_file(const std::filesystem::path& file);

// Whether `overlay` was made on the GPU `spec` describes (its spec key, or a device name of it).
bool calibrates(const CalibrationOverlay& overlay, const GpuSpec& spec);

// The calibrated spec: key "<key>.calibrated", name "<name> (calibrated)", calibrated_from
// = spec.key, no aliases or device names; measured levels and ceilings replace or extend the
// sheet's; the overlay's energy coefficients, when it has them, replace the sheet's.
GpuSpec apply_calibration(const GpuSpec& spec, const CalibrationOverlay& overlay);

enum class Ceilings { kSpec, kCalibrated };
std::string_view to_string(Ceilings ceilings);  // "spec", "calibrated"

// Judges `report`'s rows against the sheet or the calibrated ceilings. Every spec the rows use
// gets its calibrated twin (from `overlays`, or already in the report) embedded beside it, so
// charts can draw both; an overlay given for a spec replaces the twin the report carries (a
// report judged again with a newer calibration: its ceilings and energy coefficients). Rows are
// pointed at the one `choice` names, and context.ceilings says which. Throws InputError when
// `choice` is calibrated and a spec the rows use has no calibration. With no overlay and no twin
// in the report, `kSpec` changes nothing.
void apply_ceilings(Report& report, Ceilings choice,
                    const std::vector<CalibrationOverlay>& overlays);

}  // namespace roofline
