// The power-capped roof (issue 42, item 3): a compute micro-kernel's back-to-back window in the
// calibration overlay, the ceiling derived from it and the name it carries into the verdicts,
// without a GPU: the overlays are built here from made-up timings, not measured ones.
#include <doctest/doctest.h>

#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

#include "lib/core/base/errors.hpp"
#include "lib/core/base/text.hpp"
#include "lib/core/report/calibration.hpp"
#include "lib/core/report/report_read.hpp"
#include "lib/core/verdict/analysis.hpp"
#include "lib/core/writers/projection_table.hpp"
#include "lib/core/writers/report_writers.hpp"
#include "tests/unit/helpers.hpp"

using namespace roofline;
using nlohmann::json;

namespace {

CalibrationMeasurement measurement(std::string id, std::string target, bool flops, double work,
                                   double seconds, double clock_mhz) {
  return calibration_measurement(std::move(id), std::move(target), flops, work,
                                 {seconds, seconds, seconds}, clock_mhz);
}

// 50 launches back to back over 1.2 s at `seconds` each, NVML's median clock `clock_mhz`.
PowerCapMeasurement window(double seconds, double clock_mhz) {
  return PowerCapMeasurement{seconds, 1.2, 50, clock_mhz, 1190, "power cap"};
}

// An H200-like calibration: DRAM 4.0 TB/s; wgmma 990 TFLOP/s in bursts at 1980 MHz and 825
// TFLOP/s at 1530 MHz back to back; FP32 60 TFLOP/s at 1980 MHz without a window.
CalibrationOverlay capped_overlay() {
  CalibrationOverlay overlay =
      gh100_calibration("h200-sxm", "NVIDIA H200", "2026-12-05T12:00:00Z", 20);
  overlay.measurements = {
      measurement("dram_read", "dram", false, 4.0e9, 1e-3, 0),
      measurement("wgmma", "tensor_fp16.wgmma", true, 1.98e13, 0.02, 1980),
      measurement("fp32_ffma", "fp32", true, 1.2e12, 0.02, 1980),
  };
  overlay.measurements[1].power_cap = window(0.024, 1530);
  derive_ceilings(overlay);
  return overlay;
}

const ComputeCeiling& ceiling(const CalibrationOverlay& overlay, const std::string& id) {
  for (const ComputeCeiling& c : overlay.compute)
    if (c.id() == id) return c;
  FAIL("no ceiling " << id);
  throw std::logic_error("unreachable");
}

}  // namespace

TEST_CASE("power cap: derive_ceilings takes the sustained figure where lower and names it") {
  const CalibrationOverlay overlay = capped_overlay();
  const CalibrationMeasurement& wgmma = overlay.measurements[1];
  CHECK(wgmma.rate_per_second() == doctest::Approx(990e12).epsilon(1e-12));
  CHECK(wgmma.power_cap_rate_per_second() == doctest::Approx(825e12).epsilon(1e-12));
  CHECK(overlay.measurements[2].power_cap_rate_per_second() == 0);

  const ComputeCeiling& capped = ceiling(overlay, "tensor_fp16.wgmma");
  CHECK(capped.at_power_cap);
  CHECK(capped.peak_tflops == doctest::Approx(825).epsilon(1e-12));
  CHECK(capped.clock_mhz == 1530);
  CHECK(capped.label() == "tensor FP16 (wgmma) at the power cap");
  CHECK(capped.source ==
        "calibrated on NVIDIA H200 (2026-12-05T12:00:00Z): tensor FP16 (wgmma) at the power "
        "cap: 825.0 TFLOP/s at 1530 MHz (calibrate, 1.2 s back to back, 50 launches; median of "
        "1190 NVML SM clock samples, clock held down by: power cap); burst 990.0 TFLOP/s at "
        "1980 MHz; test kernel wgmma");

  // Without a window the burst figure, as before.
  const ComputeCeiling& fp32 = ceiling(overlay, "fp32");
  CHECK_FALSE(fp32.at_power_cap);
  CHECK(fp32.label() == "FP32");
  CHECK(fp32.peak_tflops == doctest::Approx(60).epsilon(1e-12));
  CHECK(fp32.clock_mhz == 1980);

  // A window without a clock (NVML gave no sample) has no clock to quote: the burst roof.
  CalibrationOverlay no_clock = capped_overlay();
  no_clock.measurements[1].power_cap->sm_clock_mhz = 0;
  no_clock.measurements[1].power_cap->clock_samples = 0;
  derive_ceilings(no_clock);
  CHECK_FALSE(ceiling(no_clock, "tensor_fp16.wgmma").at_power_cap);
  CHECK(ceiling(no_clock, "tensor_fp16.wgmma").peak_tflops == doctest::Approx(990));
}

TEST_CASE(
    "power cap: a sustained rate above the burst rate is the roof (the burst ran at a lower "
    "clock), not marked capped") {
  CalibrationOverlay overlay = capped_overlay();
  // The burst ran below the clock the window settled at: 1000 TFLOP/s back to back.
  overlay.measurements[1].power_cap = window(0.0198, 1980);
  derive_ceilings(overlay);
  const ComputeCeiling& roof = ceiling(overlay, "tensor_fp16.wgmma");
  CHECK_FALSE(roof.at_power_cap);
  CHECK(roof.label() == "tensor FP16 (wgmma)");
  CHECK(roof.peak_tflops == doctest::Approx(1000).epsilon(1e-12));
  CHECK(roof.clock_mhz == 1980);
  CHECK(roof.source.find("back to back, above its burst: 1000.0 TFLOP/s") != std::string::npos);
  CHECK(roof.source.find("burst 990.0 TFLOP/s") != std::string::npos);
  // The window itself is not changed, and it survives the file.
  REQUIRE(overlay.measurements[1].power_cap);
  CHECK(overlay.measurements[1].power_cap_rate_per_second() ==
        doctest::Approx(1000e12).epsilon(1e-12));
  const CalibrationOverlay read = parse_calibration(to_json(overlay), "cal.json");
  CHECK(read.measurements[1].power_cap == overlay.measurements[1].power_cap);
  CHECK_FALSE(ceiling(read, "tensor_fp16.wgmma").at_power_cap);
  CHECK(ceiling(read, "tensor_fp16.wgmma").peak_tflops == doctest::Approx(1000).epsilon(1e-12));
  // Equal rates: the burst roof.
  overlay.measurements[1].power_cap = window(0.02, 1980);
  derive_ceilings(overlay);
  CHECK_FALSE(ceiling(overlay, "tensor_fp16.wgmma").at_power_cap);
  CHECK(ceiling(overlay, "tensor_fp16.wgmma").peak_tflops == doctest::Approx(990).epsilon(1e-12));
}

TEST_CASE("power cap: the overlay round-trips with and without the power_cap keys") {
  const CalibrationOverlay overlay = capped_overlay();
  const json written = to_json(overlay);
  CHECK(written["format_version"] == 1);
  const json& cap = written["measurements"][1]["power_cap"];
  CHECK(cap["seconds_per_launch"] == 0.024);
  CHECK(cap["window_seconds"] == 1.2);
  CHECK(cap["launches"] == 50);
  CHECK(cap["sm_clock_mhz"] == 1530.0);
  CHECK(cap["clock_samples"] == 1190);
  CHECK(cap["clock_limit"] == "power cap");
  CHECK_FALSE(written["measurements"][0].contains("power_cap"));
  CHECK_FALSE(written["measurements"][2].contains("power_cap"));
  bool marked = false;
  for (const json& entry : written["compute_ceilings"])
    if (entry.value("instruction", "") == "wgmma") marked = entry.value("at_power_cap", false);
  CHECK(marked);

  const CalibrationOverlay read = parse_calibration(written, "cal.json");
  REQUIRE(read.measurements.size() == 3);
  CHECK(read.measurements[1].power_cap == overlay.measurements[1].power_cap);
  CHECK_FALSE(read.measurements[2].power_cap);
  CHECK(ceiling(read, "tensor_fp16.wgmma").at_power_cap);
  CHECK(ceiling(read, "tensor_fp16.wgmma").source == ceiling(overlay, "tensor_fp16.wgmma").source);
  CHECK_FALSE(ceiling(read, "fp32").at_power_cap);
  CHECK(to_json(read) == written);

  // A file without the keys (calibrate without --power-cap) reads as before.
  json old = written;
  old["measurements"][1].erase("power_cap");
  for (json& entry : old["compute_ceilings"]) entry.erase("at_power_cap");
  const CalibrationOverlay plain = parse_calibration(old, "cal.json");
  CHECK_FALSE(plain.measurements[1].power_cap);
  CHECK_FALSE(ceiling(plain, "tensor_fp16.wgmma").at_power_cap);
  CHECK(to_json(plain) == old);

  // Validated like the rest: on a compute measurement only, every key known and in bounds.
  json j = written;
  j["measurements"][0]["power_cap"] = cap;
  CHECK(calibration_parse_error(j) ==
        "cal.json: measurements[0].power_cap: only a compute measurement has one");
  j = written;
  j["measurements"][1]["power_cap"]["watts"] = 700;
  CHECK(calibration_parse_error(j).rfind("cal.json: measurements[1].power_cap", 0) == 0);
  j = written;
  j["measurements"][1]["power_cap"].erase("sm_clock_mhz");
  CHECK(calibration_parse_error(j) == "cal.json: measurements[1].power_cap.sm_clock_mhz: missing");
  j = written;
  j["measurements"][1]["power_cap"]["launches"] = 0;
  CHECK(calibration_parse_error(j).rfind("cal.json: measurements[1].power_cap.launches: ", 0) == 0);
  j = written;
  j["compute_ceilings"][0]["at_power_cap"] = "yes";
  CHECK(calibration_parse_error(j).rfind("cal.json: compute_ceilings[0].at_power_cap: ", 0) == 0);
}

TEST_CASE(
    "power cap: calibrated verdicts judge against the power-capped roof, named in the table") {
  TempDir dir;
  const auto calibration = dir.path / "h200.capped.json";
  write_text(calibration, to_json(capped_overlay()).dump(2));
  const auto report = dir.path / "model.json";
  CliResult r = cli({"model", "--gpu", "h200", "--kernel", "flash-v3", "--seq", "16384",
                     "--head-dim", "128", "--no-causal", "--ceilings", "calibrated",
                     "--calibration", calibration.string(), "--json", report.string()});
  REQUIRE(r.code == 0);
  const json j = json::parse(read_text(report));
  REQUIRE(j["rows"].size() == 1);
  CHECK(j["rows"][0]["spec"] == "h200-sxm.calibrated");
  // The calibrated spec embedded in the report carries the mark.
  bool marked = false;
  for (const json& entry : j["specs"]["h200-sxm.calibrated"]["compute_ceilings"])
    if (entry["path"] == "tensor_fp16" && entry.value("instruction", "") == "wgmma")
      marked = entry.value("at_power_cap", false);
  CHECK(marked);

  const Report judged = report_from_json(j, "model.json");
  const RowAnalysis a = analyze(judged.rows[0], judged.spec_for(judged.rows[0]));
  REQUIRE(a.ceiling != nullptr);
  CHECK(a.ceiling->label() == "tensor FP16 (wgmma) at the power cap");
  CHECK(a.ceiling->peak_tflops == doctest::Approx(825));
  CHECK(a.regime == "compute-bound (tensor FP16 (wgmma) at the power cap)");

  // The table names it in the ceiling column where whole, and fits 80 and 120 columns.
  const std::string wide = render_table(judged, TableOptions{});
  CHECK(wide.find("tensor FP16 (wgmma) at the power cap") != std::string::npos);
  for (std::size_t width : {80, 120}) {
    CAPTURE(width);
    TableOptions options;
    options.max_width = width;
    const std::string table = render_table(judged, options);
    std::size_t from = 0;
    while (from < table.size()) {
      const std::size_t end = table.find('\n', from);
      const std::string line = table.substr(from, end - from);
      CHECK(display_width(line) <= width);
      if (end == std::string::npos) break;
      from = end + 1;
    }
  }

  // The sheet's judgement is unchanged: the wgmma roof of the spec sheet, by its plain name.
  r = cli({"model", "--gpu", "h200", "--kernel", "flash-v3", "--seq", "16384", "--head-dim", "128",
           "--no-causal", "--ceilings", "spec", "--calibration", calibration.string()});
  REQUIRE(r.code == 0);
  CHECK(r.out.find("at the power cap") == std::string::npos);
}

TEST_CASE("power cap: show --gpu matches a roof at the power cap with the other GPU's same pipe") {
  const GpuSpec from = apply_calibration(shipped_spec("h200"), capped_overlay());
  CHECK(roof_change("tensor FP16 (wgmma) at the power cap", from, shipped_spec("h100")) ==
        "tensor FP16 (wgmma) at the power cap 825 → 989 TFLOP/s");
  CHECK(roof_change("FP32", from, shipped_spec("h100")) == "FP32 60 → 67 TFLOP/s");
}
