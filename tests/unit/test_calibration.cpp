// The calibration overlay (calibration.hpp) and `--ceilings spec|calibrated`, without a GPU:
// overlays are built here from made-up timings, not measured ones.
#include <doctest/doctest.h>

#include <algorithm>
#include <functional>

#include <nlohmann/json.hpp>

#include "lib/core/base/errors.hpp"
#include "lib/core/base/json_reader.hpp"
#include "lib/core/report/calibration.hpp"
#include "lib/core/report/report_read.hpp"
#include "lib/core/verdict/analysis.hpp"
#include "lib/core/writers/report_writers.hpp"
#include "tests/unit/helpers.hpp"

using namespace roofline;
using nlohmann::json;

namespace {

SpecRegistry shipped() {
  SpecRegistry registry;
  registry.add_directory(ROOFLINE_TEST_SPECS_DIR);
  return registry;
}

CalibrationMeasurement measurement(std::string id, std::string target, bool flops, double work,
                                   std::vector<double> samples, double clock_mhz = 0) {
  return calibration_measurement(std::move(id), std::move(target), flops, work, std::move(samples),
                                 clock_mhz);
}

// An H200-like calibration: DRAM 4.0 TB/s (copy) beating 3.9 TB/s (read), L2 10 TB/s,
// mma.sync 600 TFLOP/s at 1755 MHz, FP32 60 TFLOP/s at 1980 MHz.
CalibrationOverlay h200_overlay() {
  CalibrationOverlay overlay =
      gh100_calibration("h200-sxm", "NVIDIA H200", "2026-11-30T13:00:00Z", 3.5);
  overlay.measurements = {
      measurement("dram_read", "dram", false, 3.9e9, {1e-3, 1.01e-3, 0.99e-3}),
      measurement("dram_copy", "dram", false, 4.0e9, {1.02e-3, 1e-3, 0.98e-3}),
      measurement("l2_read", "l2", false, 1e10, {1e-3, 1e-3, 1e-3}),
      measurement("mma_sync", "tensor_fp16.mma_sync", true, 6e14, {1.0, 1.0, 1.1}, 1755),
      measurement("fp32_ffma", "fp32", true, 6e13, {1.0, 0.9, 1.0}, 1980),
  };
  derive_ceilings(overlay);
  return overlay;
}

}  // namespace

TEST_CASE("calibration: derived ceilings take the best kernel per roof, at its clock") {
  const CalibrationOverlay overlay = h200_overlay();
  REQUIRE(overlay.memory.size() == 2);
  CHECK(overlay.memory[0].level == MemoryLevel::kDram);
  CHECK(overlay.memory[0].bandwidth_gbps == doctest::Approx(4000).epsilon(1e-12));
  CHECK(overlay.memory[0].source.find("test kernel dram_copy") != std::string::npos);
  CHECK(overlay.memory[0].source.find("NVIDIA H200") != std::string::npos);
  CHECK(overlay.memory[1].level == MemoryLevel::kL2);
  CHECK(overlay.memory[1].bandwidth_gbps == doctest::Approx(10000).epsilon(1e-12));
  REQUIRE(overlay.compute.size() == 2);
  CHECK(overlay.compute[0].id() == "tensor_fp16.mma_sync");
  CHECK(overlay.compute[0].peak_tflops == doctest::Approx(600).epsilon(1e-12));  // median 1.0 s
  CHECK(overlay.compute[0].clock_mhz == 1755);
  CHECK(overlay.compute[0].source.find("1755 MHz") != std::string::npos);
  CHECK(overlay.compute[1].id() == "fp32");
  CHECK(overlay.compute[1].peak_tflops == doctest::Approx(60).epsilon(1e-12));
  CHECK(overlay.measurements[3].relative_range() == doctest::Approx(0.1).epsilon(1e-9));
}

TEST_CASE("calibration: derive rejects unknown targets and compute without a clock") {
  CalibrationOverlay overlay = h200_overlay();
  overlay.measurements.push_back(measurement("x", "l3", false, 1, {1}));
  CHECK_THROWS_WITH_AS(derive_ceilings(overlay), "calibration x: unknown target \"l3\"",
                       InputError);
  overlay = h200_overlay();
  overlay.measurements.push_back(measurement("fp16", "fp16_cuda_core", true, 1, {1}, 0));
  CHECK_THROWS_WITH_AS(derive_ceilings(overlay),
                       "calibration fp16: no SM clock measured for a compute ceiling", InputError);
}

TEST_CASE("calibration: the file round-trips and is validated like a spec") {
  const CalibrationOverlay overlay = h200_overlay();
  const json written = to_json(overlay);
  CHECK(written["format"] == "cuflash-roofline calibration");
  CHECK(written["format_version"] == 1);
  const CalibrationOverlay read = parse_calibration(written, "cal.json");
  CHECK(read.spec_key == "h200-sxm");
  CHECK(read.device.name == "NVIDIA H200");
  CHECK(read.device.sm_count == 132);
  CHECK(read.file == "cal.json");
  REQUIRE(read.measurements.size() == overlay.measurements.size());
  CHECK(read.measurements[3].samples_seconds == overlay.measurements[3].samples_seconds);
  CHECK(read.measurements[3].flops);
  CHECK_FALSE(read.measurements[0].flops);
  REQUIRE(read.memory.size() == 2);
  CHECK(read.memory[1].bandwidth_gbps == overlay.memory[1].bandwidth_gbps);
  REQUIRE(read.compute.size() == 2);
  CHECK(read.compute[0].id() == "tensor_fp16.mma_sync");
  CHECK(read.compute[0].clock_mhz == 1755);
  CHECK(to_json(read) == written);

  json j = written;
  j.erase("format");
  CHECK(calibration_parse_error(j).rfind("cal.json: format: missing or not", 0) == 0);
  j = written;
  j["format_version"] = 2;
  CHECK(calibration_parse_error(j) ==
        "cal.json: format_version: 2 is not supported (this tool reads 1)");
  j = written;
  j.erase("spec");
  CHECK(calibration_parse_error(j) == "cal.json: spec: missing");
  j = written;
  j["device"].erase("name");
  CHECK(calibration_parse_error(j) == "cal.json: device.name: missing");
  j = written;
  j["memory_levels"][1]["level"] = "l3";
  CHECK(calibration_parse_error(j) ==
        "cal.json: memory_levels[1].level: must be dram, l2 or l1 (got \"l3\")");
  j = written;
  j["compute_ceilings"][0]["peak_tflops"] = -1;
  CHECK(calibration_parse_error(j) ==
        "cal.json: compute_ceilings[0].peak_tflops: must be positive (got -1)");
  j = written;
  j["measurements"][0]["samples_seconds"] = json::array();
  CHECK(calibration_parse_error(j) ==
        "cal.json: measurements[0].samples_seconds: must not be empty");
  j = written;
  j["memory_levels"] = json::array();
  j["compute_ceilings"] = json::array();
  CHECK(calibration_parse_error(j) ==
        "cal.json: memory_levels: no level and no ceiling: nothing was calibrated");
  // An overlay may lack DRAM or compute entirely.
  j = written;
  j["memory_levels"].erase(0);
  j["compute_ceilings"] = json::array();
  const CalibrationOverlay partial = parse_calibration(j, "cal.json");
  REQUIRE(partial.memory.size() == 1);
  CHECK(partial.memory[0].level == MemoryLevel::kL2);
  CHECK(partial.compute.empty());
}

TEST_CASE("calibration: shares of the SMs give a level its share curve, never its bandwidth") {
  CalibrationOverlay overlay = h200_overlay();
  const auto share = [](int sms, double bytes, std::string of = "dram_read") {
    CalibrationMeasurement m =
        measurement("dram_read." + std::to_string(sms) + "sm", "dram", false, bytes, {1e-3});
    m.sms = sms;
    m.share_of = std::move(of);
    return m;
  };
  // dram_read: 3.9 TB/s on all 132 SMs; 0.5 and 2.0 TB/s on 8 and 40 (best of two at 40).
  overlay.measurements.push_back(share(8, 5e8));
  overlay.measurements.push_back(share(40, 1.9e9));
  overlay.measurements.push_back(share(40, 2e9));
  derive_ceilings(overlay);
  const MemoryLevelSpec& dram = overlay.memory[0];
  CHECK(dram.bandwidth_gbps == doctest::Approx(4000).epsilon(1e-12));  // dram_copy, whole device
  CHECK(dram.shares == std::vector<ShareBandwidth>{{8, 500}, {40, 2000}, {132, 3900}});
  CHECK(dram.shares_source.find("NVIDIA H200") != std::string::npos);
  CHECK(overlay.memory[1].shares.empty());  // L2: no share measured

  const json written = to_json(overlay);
  CHECK(written["measurements"][5]["sms"] == 8);
  CHECK(written["measurements"][5]["share_of"] == "dram_read");
  CHECK_FALSE(written["measurements"][0].contains("sms"));
  const CalibrationOverlay read = parse_calibration(written, "cal.json");
  CHECK(read.memory[0].shares == dram.shares);
  CHECK(read.measurements[6].sms == 40);
  CHECK(to_json(read) == written);

  json j = written;
  j["measurements"][5]["share_of"] = "dram_copy_x";
  CHECK(calibration_parse_error(j) ==
        "cal.json: measurements[5].share_of: \"dram_copy_x\" names no whole-device measurement "
        "of dram");
  j = written;
  j["measurements"][5]["sms"] = 200;
  CHECK(calibration_parse_error(j).find("measurements[5].sms: must be an integer from 1 to 132") !=
        std::string::npos);
  j = written;
  j["measurements"][3]["sms"] = 8;  // mma_sync, without an energy
  j["measurements"][3]["share_of"] = "mma_sync";
  CHECK(calibration_parse_error(j) ==
        "cal.json: measurements[3].sms: a share of the SMs measures a memory level, or a compute "
        "pipe's energy below the power cap (with an energy, without a power_cap window)");
}

TEST_CASE("calibration: the share curve is the read kernel's, the copy's shares stay beside it") {
  CalibrationOverlay overlay = h200_overlay();
  const auto share = [](const std::string& of, int sms, double bytes) {
    CalibrationMeasurement m =
        measurement(of + "." + std::to_string(sms) + "sm", "dram", false, bytes, {1e-3});
    m.sms = sms;
    m.share_of = of;
    return m;
  };
  // The copy measured on more shares than the read kernel, and drawing less on each: the curve
  // still carries loads (its stores would make every row bound by its loads look starved).
  for (const int sms : {8, 16, 40}) overlay.measurements.push_back(share("dram_copy", sms, 2e8));
  overlay.measurements.push_back(share("dram_read", 40, 2e9));
  derive_ceilings(overlay);
  const MemoryLevelSpec& dram = overlay.memory[0];
  CHECK(dram.shares == std::vector<ShareBandwidth>{{40, 2000}, {132, 3900}});
  CHECK(dram.shares_source.find("test kernel dram_read") != std::string::npos);
  const CalibrationOverlay read = parse_calibration(to_json(overlay), "cal.json");
  CHECK(read.memory[0].shares == dram.shares);
  CHECK(std::count_if(read.measurements.begin(), read.measurements.end(),
                      [](const CalibrationMeasurement& m) { return m.share_of == "dram_copy"; }) ==
        3);
  // Without the read kernel's shares, the kernel with the most shares gives the curve.
  overlay.measurements.pop_back();
  derive_ceilings(overlay);
  CHECK(overlay.memory[0].shares ==
        std::vector<ShareBandwidth>{{8, 200}, {16, 200}, {40, 200}, {132, 4000}});
}

TEST_CASE("calibration: hostile files get one line naming the key and the bound") {
  const json written = to_json(h200_overlay());
  const std::vector<CalibrationErrorCase> cases = {
      {[](json& j) { j["device"]["sm_count"] = std::int64_t{1} << 40; },
       "cal.json: device.sm_count: must be an integer from 1 to 10000 (got 1099511627776)"},
      {[](json& j) { j["device"]["sm_count"] = 132.5; },
       "cal.json: device.sm_count: must be an integer"},
      {[](json& j) { j["device"]["chip"] = 7; }, "cal.json: device.chip: must be a string"},
      {[](json& j) { j["measurements"][0]["work"] = 1e300; },
       "cal.json: measurements[0].work: must be at most 1e+21, the bound for calibration work "
       "(got 1e+300)"},
      {[](json& j) { j["measurements"][0]["samples_seconds"][1] = 1e-300; },
       "cal.json: measurements[0].samples_seconds[1]: must be at least 1e-09 s, the bound for "
       "timing samples (got 1e-300)"},
      {[](json& j) { j["measurements"][0]["sm_clock_mhz"] = -1; },
       "cal.json: measurements[0].sm_clock_mhz: must not be negative (got -1)"},
      {[](json& j) { j["measurements"][0]["unit"] = "watts\n\x1b"; },
       "cal.json: measurements[0].unit: must be flops, bytes, results or instructions (got "
       "\"watts\\n\\x1b\")"},
      {[](json& j) { j["duration_seconds"] = nullptr; },
       "cal.json: duration_seconds: must be a number"},
      {[](json& j) { j["format_version"] = std::string(100, '9'); },
       "cal.json: format_version: \"999999999999999999999999999999999999999... is not supported"},
      {[](json& j) { j["measurements"] = json::object(); },
       "cal.json: measurements: must be an array"},
  };
  check_calibration_errors(written, cases);
  // Depth and number overflow: from the text, through the one JSON reading layer.
  std::string deep = written.dump();
  deep.insert(deep.size() - 1, ", \"x\": " + std::string(100, '[') + std::string(100, ']'));
  CHECK_THROWS_WITH_AS(parse_calibration(parse_json_text(deep, "cal.json"), "cal.json"),
                       doctest::Contains("nested deeper than 64 levels"), InputError);
  std::string huge = written.dump();
  const std::string key = "\"duration_seconds\":";
  const std::size_t at = huge.find(key) + key.size();
  huge.replace(at, huge.find_first_of(",}", at) - at, "1e400");
  CHECK_THROWS_WITH_AS(
      parse_calibration(parse_json_text(huge, "cal.json"), "cal.json"),
      "cal.json: duration_seconds: number \"1e400\" is out of the range of a double", InputError);
}

TEST_CASE("calibration: applied to its spec, it replaces measured roofs and fills missing ones") {
  const SpecRegistry registry = shipped();
  const GpuSpec& h200 = registry.find("h200");
  REQUIRE(h200.level(MemoryLevel::kL2) == nullptr);  // the sheet has no L2 figure today
  const CalibrationOverlay overlay = h200_overlay();
  CHECK(calibrates(overlay, h200));
  CHECK_FALSE(calibrates(overlay, registry.find("a100")));
  CalibrationOverlay by_device = overlay;
  by_device.spec_key = "derived-key";
  CHECK(calibrates(by_device, h200));  // "NVIDIA H200" is one of its device names

  const GpuSpec calibrated = apply_calibration(h200, overlay);
  CHECK(calibrated.key == "h200-sxm.calibrated");
  CHECK(calibrated.name == "NVIDIA H200 SXM 141GB (calibrated)");
  CHECK(calibrated.calibrated_from == "h200-sxm");
  CHECK(calibrated.aliases.empty());
  CHECK(calibrated.device_names.empty());
  REQUIRE(calibrated.memory.size() == 3);
  CHECK(calibrated.memory[0].level == MemoryLevel::kDram);
  CHECK(calibrated.memory[0].bandwidth_gbps == doctest::Approx(4000));
  CHECK(calibrated.memory[1].level == MemoryLevel::kL2);  // filled
  CHECK(calibrated.memory[2].level == MemoryLevel::kL1);  // the sheet's, kept
  CHECK(calibrated.memory[2].bandwidth_gbps == h200.level(MemoryLevel::kL1)->bandwidth_gbps);
  const ComputeCeiling* mma =
      calibrated.ceiling(ComputePath::kTensorFp16, TensorInstruction::kMmaSync);
  REQUIRE(mma != nullptr);
  CHECK(mma->peak_tflops == doctest::Approx(600));
  CHECK(mma->clock_mhz == 1755);
  const ComputeCeiling* wgmma =
      calibrated.ceiling(ComputePath::kTensorFp16, TensorInstruction::kWgmma);
  REQUIRE(wgmma != nullptr);  // not measured: the sheet's figure stays, with its source
  CHECK(wgmma->peak_tflops ==
        h200.ceiling(ComputePath::kTensorFp16, TensorInstruction::kWgmma)->peak_tflops);
  CHECK(calibrated.compute.size() == h200.compute.size());

  // The spec JSON keeps the link; the spec reader accepts it.
  const GpuSpec reread = parse_gpu_spec(to_json(calibrated), "x.json");
  CHECK(reread.calibrated_from == "h200-sxm");
}

TEST_CASE("calibration: --ceilings judges rows against the chosen roofs, both embedded") {
  const SpecRegistry registry = shipped();
  Report report;
  report.context = make_context("model");
  report.specs.push_back(registry.find("h200"));
  Row row;
  row.kernel = "standard";
  row.workload = Workload{};
  row.workload.seq_len = 4096;
  row.spec_key = "h200-sxm";
  row.prediction = predict(find_kernel_model("standard"), row.workload);
  report.rows.push_back(row);
  const std::vector<CalibrationOverlay> overlays = {h200_overlay()};

  Report judged_by_spec = report;
  apply_ceilings(judged_by_spec, Ceilings::kSpec, overlays);
  REQUIRE(judged_by_spec.specs.size() == 2);
  CHECK(judged_by_spec.rows[0].spec_key == "h200-sxm");
  CHECK(judged_by_spec.context.ceilings == "spec");

  Report judged = report;
  apply_ceilings(judged, Ceilings::kCalibrated, overlays);
  REQUIRE(judged.specs.size() == 2);
  CHECK(judged.rows[0].spec_key == "h200-sxm.calibrated");
  CHECK(judged.context.ceilings == "calibrated");
  // standard is DRAM-bound: its model time floor moves with the DRAM roof, 4800 → 4000 GB/s.
  const RowAnalysis sheet = analyze(judged_by_spec.rows[0], judged_by_spec.spec_for(row));
  const RowAnalysis measured = analyze(judged.rows[0], judged.spec_for(judged.rows[0]));
  CHECK_FALSE(measured.compute_bound);
  CHECK(measured.dram()->peak_bandwidth_bytes_per_second == doctest::Approx(4000e9));
  CHECK(measured.time_floor_seconds / sheet.time_floor_seconds ==
        doctest::Approx(4800.0 / 4000.0).epsilon(1e-9));

  // Round trip through JSON, then back to the sheet without the overlay: the twin is in the
  // report.
  Report reread = report_from_json(report_to_json(judged), "r.json");
  CHECK(reread.context.ceilings == "calibrated");
  apply_ceilings(reread, Ceilings::kSpec, {});
  CHECK(reread.rows[0].spec_key == "h200-sxm");
  apply_ceilings(reread, Ceilings::kCalibrated, {});
  CHECK(reread.rows[0].spec_key == "h200-sxm.calibrated");
  CHECK(reread.specs.size() == 2);
  // A newer calibration given for a report that carries one replaces it: the rows are judged
  // again by it (DRAM 4000 → 4400 GB/s here), and the report still holds one twin.
  std::vector<CalibrationOverlay> newer = overlays;
  for (CalibrationMeasurement& m : newer[0].measurements)
    if (m.id == "dram_copy") m.work *= 1.1;
  derive_ceilings(newer[0]);
  apply_ceilings(reread, Ceilings::kCalibrated, newer);
  CHECK(reread.specs.size() == 2);
  CHECK(reread.rows[0].spec_key == "h200-sxm.calibrated");
  CHECK(reread.spec_for(reread.rows[0]).dram().bandwidth_gbps == doctest::Approx(4400));

  // No calibration for the spec judged: an error naming what there is.
  Report a100 = report;
  a100.specs[0] = registry.find("a100");
  a100.rows[0].spec_key = "a100-sxm4-80gb";
  CHECK_THROWS_WITH_AS(apply_ceilings(a100, Ceilings::kCalibrated, overlays),
                       "--ceilings calibrated: no calibration for a100-sxm4-80gb; calibration "
                       "calibrates h200-sxm (NVIDIA H200)",
                       InputError);
  Report untouched = report;
  apply_ceilings(untouched, Ceilings::kSpec, {});
  CHECK(untouched.specs.size() == 1);
}

TEST_CASE("cli: --ceilings calibrated with a calibration file, plot draws both") {
  TempDir dir;
  const auto calibration = dir.path / "h200.calibration.json";
  write_text(calibration, to_json(h200_overlay()).dump(2));
  const auto report = dir.path / "model.json";
  CliResult r = cli({"model", "--gpu", "h200", "--seq", "4096", "--kernel", "standard",
                     "--no-causal", "--ceilings", "calibrated", "--calibration",
                     calibration.string(), "--json", report.string()});
  REQUIRE(r.code == 0);
  CHECK(r.err.empty());
  const json j = json::parse(read_text(report));
  CHECK(j["context"]["ceilings"] == "calibrated");
  CHECK(j["specs"].contains("h200-sxm"));
  CHECK(j["specs"]["h200-sxm.calibrated"]["calibrated_from"] == "h200-sxm");
  REQUIRE(j["rows"].size() == 1);
  CHECK(j["rows"][0]["spec"] == "h200-sxm.calibrated");
  CHECK(j["rows"][0]["analysis"]["levels"][0]["peak_bandwidth_gbps"]["value"] ==
        doctest::Approx(4000));

  r = cli({"model", "--gpu", "h200", "--seq", "4096", "--kernel", "standard", "--no-causal",
           "--ceilings", "calibrated", "--calibration", calibration.string()});
  REQUIRE(r.code == 0);
  CHECK(r.out.find("judged against NVIDIA H200 SXM 141GB (calibrated) [h200-sxm.calibrated] "
                   "(measured ceilings: `calibrate`)") != std::string::npos);

  const auto svg = dir.path / "chart.svg";
  r = cli({"plot", report.string(), "-o", svg.string()});
  REQUIRE(r.code == 0);
  std::string text = read_text(svg);
  CHECK(text.find("data-spec=\"h200-sxm.calibrated\"") != std::string::npos);
  CHECK(text.find("DRAM 4.8 TB/s (spec sheet)") != std::string::npos);
  r = cli({"plot", report.string(), "--ceilings", "spec", "-o", svg.string()});
  REQUIRE(r.code == 0);
  text = read_text(svg);
  CHECK(text.find("data-spec=\"h200-sxm\"") != std::string::npos);
  CHECK(text.find("(calibrated)") != std::string::npos);

  // Errors: one line, exit 2, no output file.
  const auto out = dir.path / "none.json";
  r = cli({"model", "--gpu", "h200", "--ceilings", "calibrated", "--json", out.string()});
  CHECK(r.code == 2);
  CHECK(r.err ==
        "error: --ceilings calibrated needs --calibration FILE (written by `cuflash-roofline "
        "calibrate`)\n");
  r = cli({"model", "--gpu", "a100", "--ceilings", "calibrated", "--calibration",
           calibration.string(), "--json", out.string()});
  CHECK(r.code == 2);
  CHECK(r.err.rfind("error: --ceilings calibrated: no calibration for a100-sxm4-80gb; ", 0) == 0);
  write_text(dir.path / "bad.json", "{\"format\": \"cuflash-roofline calibration\"}");
  r = cli({"model", "--gpu", "h200", "--calibration", (dir.path / "bad.json").string(), "--json",
           out.string()});
  CHECK(r.code == 2);
  CHECK(r.err == "error: " + (dir.path / "bad.json").string() + ": format_version: missing\n");
  r = cli({"model", "--ceilings", "measured"});
  CHECK(r.code == 2);
  CHECK_FALSE(std::filesystem::exists(out));
}

TEST_CASE("cli: two calibrations of one GPU and misspelt keys are refused (issue 20)") {
  TempDir dir;
  const auto first = dir.path / "first.json";
  const auto second = dir.path / "second.json";
  write_text(first, to_json(h200_overlay()).dump(2));
  CalibrationOverlay other = h200_overlay();
  other.duration_seconds = 9;
  write_text(second, to_json(other).dump(2));
  const auto out = dir.path / "o.json";
  CliResult r = cli({"model", "--gpu", "h200", "--ceilings", "calibrated", "--calibration",
                     first.string(), "--calibration", second.string(), "--json", out.string()});
  CHECK(r.code == 2);
  CHECK(r.err == "error: --calibration " + first.string() + " and --calibration " +
                     second.string() + " both calibrate h200-sxm (NVIDIA H200): give one\n");
  CHECK_FALSE(std::filesystem::exists(out));

  struct Case {
    const char* what;
    std::function<void(json&)> mutate;
    std::string message;
  } cases[] = {
      {"top level", [](json& j) { j["duration_second"] = 1; }, "duration_second: unknown key"},
      {"device", [](json& j) { j["device"]["sm_cont"] = 1; }, "device.sm_cont: unknown key"},
      {"measurement", [](json& j) { j["measurements"][0]["samples"] = json::array(); },
       "measurements[0].samples: unknown key"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.what);
    json j = to_json(h200_overlay());
    c.mutate(j);
    const auto bad = dir.path / "bad.json";
    write_text(bad, j.dump(1));
    r = cli({"model", "--gpu", "h200", "--calibration", bad.string(), "--json", out.string()});
    CHECK(r.code == 2);
    CHECK(r.err == "error: " + bad.string() + ": " + c.message + "\n");
    CHECK_FALSE(std::filesystem::exists(out));
  }
}

TEST_CASE("calibration: the XU micro-kernel calibrates the spec's exp2 rate per clock and SM") {
  CalibrationOverlay overlay = h200_overlay();
  // 15.9 per clock and SM at 1755 MHz on 132 SMs.
  const double rate = 15.9 * 132 * 1755e6;
  overlay.measurements.push_back(
      measurement("xu_exp2", kXuTarget, true, rate, {1.0, 1.0, 1.0}, 1755));
  derive_ceilings(overlay);
  CHECK(overlay.xu_exp2_per_clock_per_sm == doctest::Approx(15.9));
  CHECK(overlay.xu_source.find("1755 MHz") != std::string::npos);
  // Not a level and not a FLOP ceiling.
  for (const ComputeCeiling& c : overlay.compute) CHECK(c.id() != kXuTarget);
  // The file says "results", and reads back to the same rate.
  const json written = to_json(overlay);
  bool results = false;
  for (const json& m : written["measurements"])
    if (m["target"] == kXuTarget) results = m["unit"] == "results";
  CHECK(results);
  const CalibrationOverlay read = parse_calibration(written, "cal.json");
  CHECK(read.xu_exp2_per_clock_per_sm == doctest::Approx(15.9));
  const GpuSpec spec = apply_calibration(shipped().find("h200"), read);
  CHECK(spec.xu_exp2_per_clock_per_sm == doctest::Approx(15.9));
  CHECK(spec.sources.at("xu_exp2_per_clock_per_sm").find("calibrated on") != std::string::npos);
  // "results" belongs to the xu target alone.
  json bad = written;
  for (json& m : bad["measurements"])
    if (m["target"] == "fp32") m["unit"] = "results";
  CHECK_THROWS_AS(parse_calibration(bad, "cal.json"), InputError);
}

TEST_CASE("calibration: a DRAM rate above the spec sheet's is left out, the rest kept") {
  const SpecRegistry registry = shipped();
  const GpuSpec& h100 = registry.find("h100-sxm5");  // 3350 GB/s on the sheet
  CalibrationOverlay overlay =
      gh100_calibration("h100-sxm5", "NVIDIA H100 80GB HBM3", "2026-12-06T08:11:25Z", 3.0);
  overlay.measurements = {
      measurement("dram_read", "dram", false, 3.17e9, {1e-3, 1e-3, 1e-3}),
      // 3884.5 GB/s: what one H100's bulk-copy kernel read once (116% of the sheet)
      measurement("dram_read_bulk", "dram", false, 3.8845e9, {1e-3, 1e-3, 1e-3}),
      // within the tolerance: kept
      measurement("dram_copy", "dram", false, 3.40e9, {1e-3, 1e-3, 1e-3}),
      // L2 and shares are not DRAM pin rates: kept whatever their figure
      measurement("l2_read", "l2", false, 1e10, {1e-3, 1e-3, 1e-3}),
  };
  const std::vector<std::string> dropped = drop_above_sheet(overlay, h100);
  REQUIRE(dropped.size() == 1);
  CHECK(dropped[0] ==
        "dram_read_bulk: 3884.5 GB/s, 116.0% of the spec sheet's 3350.0 GB/s DRAM bandwidth, more "
        "than the memory delivers");
  REQUIRE(overlay.measurements.size() == 3);
  CHECK(overlay.measurements[0].id == "dram_read");
  CHECK(overlay.measurements[1].id == "dram_copy");
  derive_ceilings(overlay);
  REQUIRE(overlay.memory.size() == 2);
  CHECK(overlay.memory[0].bandwidth_gbps == doctest::Approx(3400).epsilon(1e-12));

  GpuSpec no_dram = h100;
  no_dram.memory.clear();
  CalibrationOverlay again = overlay;
  CHECK(drop_above_sheet(again, no_dram).empty());
  CHECK(again.measurements.size() == overlay.measurements.size());
}

TEST_CASE("calibration: a pure read of each size gives the DRAM level its stream curve") {
  CalibrationOverlay overlay = h200_overlay();
  const auto stream = [](double bytes, std::vector<double> samples, std::string of = "dram_read") {
    CalibrationMeasurement m = measurement(
        "dram_read." + std::to_string(static_cast<long long>(bytes / (1 << 20))) + "MiB", "dram",
        false, bytes, std::move(samples));
    m.stream_of = std::move(of);
    return m;
  };
  // 64 MiB in 20 µs (3.4 TB/s, below the ceilings), 4 MiB in 5 µs; a second kernel's 4 MiB in 6.
  overlay.measurements.push_back(stream(64 << 20, {20e-6, 21e-6, 19e-6}));
  overlay.measurements.push_back(stream(4 << 20, {5e-6, 5e-6, 5e-6}));
  overlay.measurements.push_back(stream(4 << 20, {6e-6}, "dram_copy"));
  // A stream is never a ceiling, even the fastest measurement of its target.
  overlay.measurements.push_back(stream(1 << 30, {0.1e-3}));
  derive_ceilings(overlay);
  const MemoryLevelSpec& dram = overlay.memory[0];
  CHECK(dram.bandwidth_gbps == doctest::Approx(4000).epsilon(1e-12));  // dram_copy, as before
  CHECK(dram.stream ==
        std::vector<StreamPoint>{{4 << 20, 5e-6}, {64 << 20, 20e-6}, {1 << 30, 0.1e-3}});
  CHECK(dram.stream_source.find("NVIDIA H200") != std::string::npos);
  CHECK(dram.stream_source.find("3 sizes") != std::string::npos);
  CHECK(overlay.memory[1].stream.empty());  // L2 has none

  const json written = to_json(overlay);
  CHECK(written["measurements"][5]["stream_of"] == "dram_read");
  CHECK_FALSE(written["measurements"][0].contains("stream_of"));
  const CalibrationOverlay read = parse_calibration(written, "cal.json");
  CHECK(read.memory[0].stream == dram.stream);
  CHECK(to_json(read) == written);
  // The calibrated spec carries it, through a report's embedded spec too.
  const GpuSpec spec = apply_calibration(shipped().find("h200-sxm"), overlay);
  CHECK(spec.dram().stream == dram.stream);
  CHECK(parse_gpu_spec(to_json(spec), "spec.json").dram().stream == dram.stream);

  json j = written;
  j["measurements"][5]["stream_of"] = "dram_read_x";
  CHECK(calibration_parse_error(j) ==
        "cal.json: measurements[5].stream_of: \"dram_read_x\" names no whole-device measurement "
        "of dram");
  j = written;
  j["measurements"][2]["stream_of"] = "l2_read";  // l2_read itself: not a DRAM stream
  CHECK(calibration_parse_error(j) ==
        "cal.json: measurements[2].stream_of: a stream measures DRAM bytes on the whole device "
        "(no sms)");

  // A kernel left out for reading above the sheet takes its stream with it.
  const SpecRegistry registry = shipped();
  CalibrationOverlay above =
      gh100_calibration("h100-sxm5", "NVIDIA H100 80GB HBM3", "2026-12-06T08:11:25Z", 3.0);
  above.measurements = {measurement("dram_read", "dram", false, 3.17e9, {1e-3}),
                        measurement("dram_read_bulk", "dram", false, 3.8845e9, {1e-3}),
                        stream(4 << 20, {5e-6}, "dram_read_bulk"),
                        stream(8 << 20, {7e-6}, "dram_read_bulk"), stream(4 << 20, {6e-6})};
  const std::vector<std::string> dropped = drop_above_sheet(above, registry.find("h100-sxm5"));
  REQUIRE(dropped.size() == 2);
  CHECK(dropped[1] == "2 stream and share measurements of dram_read_bulk: with it");
  REQUIRE(above.measurements.size() == 2);
  CHECK(above.measurements[1].stream_of == "dram_read");
  derive_ceilings(above);
  CHECK(above.memory[0].stream == std::vector<StreamPoint>{{4 << 20, 6e-6}});
  CHECK_NOTHROW(parse_calibration(to_json(above), "cal.json"));
}
