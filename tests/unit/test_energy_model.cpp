// The energy roofline without a GPU (issue 42): coefficients derived from made-up counter
// readings (calibration_energy.hpp), the overlay's energy keys, the model's arithmetic
// (model/energy_model.hpp), the row's verdict (verdict/analysis_energy.hpp) and its table, JSON
// and CSV output, and bad coefficient files.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <functional>

#include <nlohmann/json.hpp>

#include "lib/core/base/errors.hpp"
#include "lib/core/base/json_reader.hpp"
#include "lib/core/domain/metric_catalog.hpp"
#include "lib/core/model/energy_model.hpp"
#include "lib/core/report/calibration.hpp"
#include "lib/core/report/calibration_energy.hpp"
#include "lib/core/report/report_read.hpp"
#include "lib/core/verdict/analysis.hpp"
#include "lib/core/verdict/judged_report.hpp"
#include "lib/core/writers/report_writers.hpp"
#include "tests/unit/helpers.hpp"

using namespace roofline;
using nlohmann::json;

namespace {

// A counter stepping every 100 ms at `watts` from 0 s to 1.5 s, read over the window 0.3-1.5 s.
EnergyMeasurement reading_at(double watts, double seconds_per_launch) {
  std::vector<double> t, mj;
  for (int k = 0; k <= 15; ++k) {
    t.push_back(0.1 * k);
    mj.push_back(1000 * watts * 0.1 * k);
  }
  return energy_from_readings(t, mj, 0.3, 1.5, seconds_per_launch);
}

CalibrationMeasurement measurement(std::string id, std::string target, bool flops, double work,
                                   double seconds, double clock_mhz, double watts) {
  CalibrationMeasurement m = calibration_measurement(std::move(id), std::move(target), flops, work,
                                                     {seconds, seconds, seconds}, clock_mhz);
  if (watts > 0) m.energy = reading_at(watts, seconds);
  return m;
}

// An H100 calibration with energies: static 100 W; launches of 10 ms each.
//   dram_read  3e10 bytes at 400 W: (400 − 100) × 0.01 / 3e10 = 1e-10 J/byte (100 pJ)
//   l2_read    1e11 bytes at 300 W: 2e-11 J/byte
//   shared     2e11 bytes at 200 W: 5e-12 J/byte
//   fp32       5e11 FLOPs at 350 W: 5e-12 J/FLOP
//   mma_sync   5e12 FLOPs at 600 W: 1e-12 J/FLOP
//   wgmma      8e12 FLOPs at 500 W: 5e-13 J/FLOP
//   xu         2e11 results at 140 W: 2e-12 J/result
//   int_alu    1e12 thread instructions at 300 W: 2e-12 J/instruction
CalibrationOverlay h100_energy_overlay() {
  CalibrationOverlay overlay =
      gh100_calibration("h100-sxm5", "NVIDIA H100 80GB HBM3", "2026-12-05T18:00:00Z", 20);
  overlay.measurements = {
      measurement("dram_read", "dram", false, 3e10, 0.01, 0, 400),
      measurement("l2_read", "l2", false, 1e11, 0.01, 0, 300),
      measurement("shared_read", "l1", false, 2e11, 0.01, 0, 200),
      measurement("fp32_ffma", "fp32", true, 5e11, 0.01, 1980, 350),
      measurement("mma_sync", "tensor_fp16.mma_sync", true, 5e12, 0.01, 1755, 600),
      measurement("wgmma", "tensor_fp16.wgmma", true, 8e12, 0.01, 1755, 500),
      measurement("xu_exp2", kXuTarget, true, 2e11, 0.01, 1755, 140),
      measurement("int_alu", kIntTarget, true, 1e12, 0.01, 1980, 300),
  };
  overlay.static_power =
      CalibrationOverlay::StaticPower{"active idle: spin", reading_at(100, 5e-4)};
  derive_ceilings(overlay);
  derive_energy_coefficients(overlay);
  return overlay;
}

Report head_report() {
  return read_report_file(std::filesystem::path(ROOFLINE_TEST_DATA_DIR) / "reports" / "head.json");
}

}  // namespace

TEST_CASE("energy roofline: coefficients are (P_kernel - P_static) x time / work") {
  const CalibrationOverlay overlay = h100_energy_overlay();
  REQUIRE(overlay.static_power);
  CHECK(overlay.static_power->energy.watts == doctest::Approx(100));
  REQUIRE(overlay.energy);
  const EnergyCoefficients& c = *overlay.energy;
  CHECK(c.static_watts == doctest::Approx(100));
  CHECK(*c.byte(MemoryLevel::kDram) == doctest::Approx(1e-10));
  CHECK(*c.byte(MemoryLevel::kL2) == doctest::Approx(2e-11));
  CHECK(*c.byte(MemoryLevel::kL1) == doctest::Approx(5e-12));
  CHECK(*c.flop("fp32") == doctest::Approx(5e-12));
  CHECK(*c.flop("tensor_fp16.mma_sync") == doctest::Approx(1e-12));
  CHECK(*c.flop("tensor_fp16.wgmma") == doctest::Approx(5e-13));
  // BF16 tensor work is costed as the FP16 instruction on the same pipe.
  CHECK(*c.flop("tensor_bf16.wgmma") == doctest::Approx(5e-13));
  CHECK(c.flop("fp16_cuda_core") == nullptr);
  CHECK(c.joules_per_exp2 == doctest::Approx(2e-12));
  CHECK(c.joules_per_int_instruction == doctest::Approx(2e-12));
  // The integer measurement prices an instruction and calibrates no roof.
  for (const ComputeCeiling& ceiling : overlay.compute) CHECK(ceiling.id() != kIntTarget);
  CHECK(c.source.find("static power 100.0 W (active idle: spin)") != std::string::npos);

  // A kernel no hungrier than the static power gets no coefficient, and says why.
  CalibrationOverlay cold = overlay;
  cold.measurements[2].energy = reading_at(90, 0.01);
  const std::vector<std::string> left = derive_energy_coefficients(cold);
  REQUIRE(left.size() == 1);
  CHECK(left[0] ==
        "l1: the power under shared_read (90.0 W) is not above the static power (100.0 W), or "
        "its time or work is unknown");
  REQUIRE(cold.energy);
  CHECK(cold.energy->byte(MemoryLevel::kL1) == nullptr);
  // Without a static power there is nothing to subtract: no coefficients at all.
  cold.static_power.reset();
  CHECK(derive_energy_coefficients(cold).empty());
  CHECK_FALSE(cold.energy);
  CHECK(std::isnan(dynamic_joules_per_unit(400, 100, 0, 1e9)));
  CHECK(std::isnan(dynamic_joules_per_unit(std::nan(""), 100, 1, 1e9)));
}

TEST_CASE("energy roofline: the overlay's energy keys round-trip, and files without them read") {
  const CalibrationOverlay overlay = h100_energy_overlay();
  const json written = to_json(overlay);
  CHECK(written["format_version"] == 1);
  CHECK(written.contains("static_power"));
  CHECK(written["measurements"][0]["energy"]["watts"] == doctest::Approx(400));
  CHECK(written["energy_coefficients"]["joules_per_byte"]["dram"] == doctest::Approx(1e-10));
  CHECK(written["energy_coefficients"]["joules_per_int_instruction"] == doctest::Approx(2e-12));
  CHECK(written["measurements"][7]["unit"] == "instructions");
  const CalibrationOverlay back = parse_calibration(written, "cal.json");
  REQUIRE(back.energy);
  CHECK(*back.energy == *overlay.energy);
  REQUIRE(back.static_power);
  CHECK(back.static_power->method == overlay.static_power->method);
  CHECK(back.static_power->energy == overlay.static_power->energy);
  REQUIRE(back.measurements.size() == overlay.measurements.size());
  for (std::size_t i = 0; i < back.measurements.size(); ++i)
    CHECK(back.measurements[i].energy == overlay.measurements[i].energy);
  CHECK(to_json(back) == written);

  // Without --energy: none of the keys, and nothing read back.
  CalibrationOverlay plain = overlay;
  plain.static_power.reset();
  plain.energy.reset();
  for (CalibrationMeasurement& m : plain.measurements) m.energy.reset();
  const json plain_json = to_json(plain);
  CHECK_FALSE(plain_json.contains("static_power"));
  CHECK_FALSE(plain_json.contains("energy_coefficients"));
  CHECK_FALSE(plain_json["measurements"][0].contains("energy"));
  const CalibrationOverlay plain_back = parse_calibration(plain_json, "cal.json");
  CHECK_FALSE(plain_back.energy);
  CHECK_FALSE(plain_back.static_power);
  // The shipped calibration file (written before the energy keys) still reads.
  CHECK_FALSE(load_calibration_file(std::filesystem::path(ROOFLINE_TEST_DATA_DIR) / "golden" /
                                    "calibration.json")
                  .energy);

  // Applied to its spec, the coefficients travel with the calibrated spec, also through the
  // spec's own JSON (a report embeds it).
  const GpuSpec sheet = shipped_spec("h100-sxm5");
  const GpuSpec calibrated = apply_calibration(sheet, overlay);
  REQUIRE(calibrated.energy);
  CHECK(*calibrated.energy == *overlay.energy);
  const GpuSpec again = parse_gpu_spec(to_json(calibrated), "h100-sxm5.calibrated.json");
  REQUIRE(again.energy);
  CHECK(*again.energy == *overlay.energy);
  CHECK_FALSE(parse_gpu_spec(to_json(sheet), "h100-sxm5.json").energy);
}

TEST_CASE("energy roofline: bad coefficients are one line naming the key") {
  const json written = to_json(h100_energy_overlay());
  const std::vector<CalibrationErrorCase> cases = {
      {[](json& j) { j["energy_coefficients"]["joules_per_flop"]["fp32"] = -5e-12; },
       "cal.json: energy_coefficients.joules_per_flop.fp32: must not be negative"},
      {[](json& j) { j["energy_coefficients"]["joules_per_byte"]["dram"] = 3.0; },
       "cal.json: energy_coefficients.joules_per_byte.dram: must be at most 1e-06 J, the bound "
       "for energy coefficients"},
      {[](json& j) { j["energy_coefficients"]["joules_per_byte"]["hbm"] = 1e-10; },
       "cal.json: energy_coefficients.joules_per_byte.hbm: must be dram, l2 or l1 (got \"hbm\")"},
      {[](json& j) { j["energy_coefficients"]["joules_per_flop"]["fp99"] = 1e-12; },
       "cal.json: energy_coefficients.joules_per_flop.fp99: not a ceiling id"},
      {[](json& j) { j["energy_coefficients"]["static_watts"] = 0; },
       "cal.json: energy_coefficients.static_watts: must be positive (got 0)"},
      {[](json& j) { j["energy_coefficients"]["joules_per_exp2"] = "2 pJ"; },
       "cal.json: energy_coefficients.joules_per_exp2: must be a number"},
      {[](json& j) { j["energy_coefficients"]["joules_per_int_instruction"] = -1e-12; },
       "cal.json: energy_coefficients.joules_per_int_instruction: must not be negative"},
      {[](json& j) { j["energy_coefficients"]["joules_per_l2_reduction_byte"] = -1e-11; },
       "cal.json: energy_coefficients.joules_per_l2_reduction_byte: must not be negative"},
      {[](json& j) { j["energy_coefficients"]["joules_per_bulk_dram_byte"] = 2.0; },
       "cal.json: energy_coefficients.joules_per_bulk_dram_byte: must be at most 1e-06 J, the "
       "bound for energy coefficients"},
      {[](json& j) { j["energy_coefficients"]["joules_per_dram_write_byte"] = "1e-10"; },
       "cal.json: energy_coefficients.joules_per_dram_write_byte: must be a number"},
      {[](json& j) { j["measurements"][7]["unit"] = "flops"; },
       "cal.json: measurements[7].unit: instructions is the unit of the int target alone"},
      {[](json& j) { j["measurements"][0]["unit"] = "instructions"; },
       "cal.json: measurements[0].unit: instructions is the unit of the int target alone"},
      {[](json& j) { j["energy_coefficients"]["watts"] = 1; },
       "cal.json: energy_coefficients.watts: unknown key"},
      {[](json& j) { j["static_power"]["energy"]["watts"] = -3; },
       "cal.json: static_power.energy.watts: must not be negative (got -3)"},
      {[](json& j) { j["measurements"][0]["energy"]["updates"] = 1.5; },
       "cal.json: measurements[0].energy.updates: must be an integer"},
  };
  check_calibration_errors(written, cases);
  // Not finite: JSON has no NaN or infinity, and a number beyond a double is refused as such.
  std::string huge = written.dump();
  const std::string key = "\"static_watts\":";
  const std::size_t at = huge.find(key) + key.size();
  huge.replace(at, huge.find_first_of(",}", at) - at, "1e999");
  CHECK_THROWS_WITH_AS(
      parse_calibration(parse_json_text(huge, "cal.json"), "cal.json"),
      "cal.json: energy_coefficients.static_watts: number \"1e999\" is out of the range of a "
      "double",
      InputError);

  // On the command line: one line on stderr, exit 2, no file written.
  TempDir dir;
  json bad = written;
  bad["energy_coefficients"]["joules_per_flop"]["fp32"] = -5e-12;
  const auto file = dir.path / "cal.json";
  write_text(file, bad.dump(2));
  const auto out = dir.path / "out.csv";
  const std::string head =
      (std::filesystem::path(ROOFLINE_TEST_DATA_DIR) / "reports" / "head.json").string();
  const CliResult r = cli({"show", head, "--calibration", file.string(), "--csv", out.string()});
  CHECK(r.code == 2);
  CHECK(r.err.rfind("error: " + file.string() +
                        ": energy_coefficients.joules_per_flop.fp32: must not be negative",
                    0) == 0);
  CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  CHECK_FALSE(std::filesystem::exists(out));
}

TEST_CASE("energy roofline: the model charges each byte at the deepest level it reached") {
  EnergyCoefficients c;
  c.static_watts = 100;
  c.joules_per_flop = {{"tensor_fp16.wgmma", 5e-13}, {"fp32", 5e-12}};
  c.joules_per_exp2 = 2e-12;
  c.joules_per_byte = {
      {MemoryLevel::kDram, 1e-10}, {MemoryLevel::kL2, 2e-11}, {MemoryLevel::kL1, 5e-12}};
  EnergyWork w;
  w.seconds = 1e-3;                                        // static: 0.1 J
  w.flops = {{"tensor_fp16.wgmma", 4e11}, {"fp32", 1e9}};  // 0.2 J + 0.005 J
  w.exponentials = 1e9;                                    // 0.002 J
  w.bytes = {{MemoryLevel::kDram, 1e9},                    // 0.1 J
             {MemoryLevel::kL2, 3e9},                      // (3e9 − 1e9) × 2e-11 = 0.04 J
             {MemoryLevel::kL1, 2e9}};                     // below L2: nothing
  const EnergyModel m = model_energy(w, c);
  REQUIRE(m.terms.size() == 6);
  CHECK(m.terms[0].kind == EnergyTermKind::kStatic);
  CHECK(m.terms[0].joules == doctest::Approx(0.1));
  const auto joules = [&](const std::string& id) {
    for (const EnergyTerm& t : m.terms)
      if (t.id == id) return t.joules;
    return -1.0;
  };
  CHECK(joules("tensor_fp16.wgmma") == doctest::Approx(0.2));
  CHECK(joules("fp32") == doctest::Approx(0.005));
  CHECK(joules("xu") == doctest::Approx(0.002));
  CHECK(joules("dram") == doctest::Approx(0.1));
  CHECK(joules("l2") == doctest::Approx(0.04));
  CHECK(joules("l1") == -1.0);
  CHECK(m.joules == doctest::Approx(0.447));
  REQUIRE(m.dominant() != nullptr);
  CHECK(m.dominant()->id == "tensor_fp16.wgmma");
  CHECK(m.dominant()->share == doctest::Approx(0.2 / 0.447));
  CHECK(m.uncosted.empty());
  // The nested form: DRAM × (e_dram − e_l2) + L2 × (e_l2 − e_l1) + L1 × e_l1, for L1 ≥ L2 ≥ DRAM.
  w.bytes[MemoryLevel::kL1] = 5e9;
  const double nested = 1e9 * (1e-10 - 2e-11) + 3e9 * (2e-11 - 5e-12) + 5e9 * 5e-12;
  const EnergyModel n = model_energy(w, c);
  double bytes_joules = 0;
  for (const EnergyTerm& t : n.terms)
    if (t.kind == EnergyTermKind::kLevel) bytes_joules += t.joules;
  CHECK(bytes_joules == doctest::Approx(nested));
  // Shared memory is no cache of L2: its bytes are charged whole, beside the L1 hits, even when
  // the global accesses all went on to L2 (TMA kernels).
  w.bytes[MemoryLevel::kL1] = 1e9;  // below L2: no L1 hit
  w.shared_bytes = 4e9;
  const EnergyModel sh = model_energy(w, c);
  for (const EnergyTerm& t : sh.terms)
    if (t.id == "l1") CHECK(t.joules == doctest::Approx(4e9 * 5e-12));
  CHECK(sh.joules == doctest::Approx(0.447 + 4e9 * 5e-12));
  w.shared_bytes = -1;
  CHECK_THROWS_AS(model_energy(w, c), std::invalid_argument);
  w.shared_bytes = 0;
  w.bytes[MemoryLevel::kL1] = 5e9;

  // Counted work without a coefficient is named, not costed; uncounted work is not there.
  w.flops["fp16_cuda_core"] = 1e9;
  w.flops["tensor_fp16.mma_sync"] = 0;  // counted, none done: no term, nothing missing
  w.exponentials = std::nan("");
  const EnergyModel u = model_energy(w, c);
  CHECK(u.uncosted == std::vector<std::string>{"fp16_cuda_core"});
  CHECK(joules("xu") == doctest::Approx(0.002));  // (the first model's)
  for (const EnergyTerm& t : u.terms) CHECK(t.id != "xu");

  // Integer and control instructions: their own term, at their coefficient; counted without a
  // coefficient they are named; not counted (NaN), nothing.
  w.exponentials = 1e9;
  w.flops.erase("fp16_cuda_core");
  const double before = model_energy(w, c).joules;
  w.int_instructions = 5e9;
  c.joules_per_int_instruction = 2e-12;
  const EnergyModel in = model_energy(w, c);
  CHECK(in.joules == doctest::Approx(before + 0.01));
  const auto term = std::find_if(in.terms.begin(), in.terms.end(),
                                 [](const EnergyTerm& t) { return t.id == "int"; });
  REQUIRE(term != in.terms.end());
  CHECK(term->kind == EnergyTermKind::kInstructions);
  CHECK(term->work == doctest::Approx(5e9));
  CHECK(energy_term_label(*term) == "integer instructions");
  c.joules_per_int_instruction = 0;
  CHECK(model_energy(w, c).uncosted == std::vector<std::string>{"int"});
  w.int_instructions = std::nan("");
  CHECK(model_energy(w, c).joules == doctest::Approx(before));
  w.int_instructions = -1;
  CHECK_THROWS_AS(model_energy(w, c), std::invalid_argument);
  w.int_instructions = 0;

  // A slow launch: static dominates.
  w.seconds = 1.0;
  CHECK(model_energy(w, c).dominant()->kind == EnergyTermKind::kStatic);
  // Inputs the model refuses.
  w.seconds = -1;
  CHECK_THROWS_AS(model_energy(w, c), std::invalid_argument);
  w.seconds = 1e-3;
  c.joules_per_flop["fp32"] = std::nan("");
  CHECK_THROWS_AS(model_energy(w, c), std::invalid_argument);

  // The roof: 1 / (e_pipe + e_dram / I + P_static × max(1/peak, 1/(I × BW))).
  // I = 100 FLOP/byte, peak 1e15, BW 4e12: memory time 1/(4e14) per FLOP.
  const double roof = energy_roof_flops_per_joule(100, 5e-13, 1e-10, 100, 1e15, 4e12);
  CHECK(roof == doctest::Approx(1 / (5e-13 + 1e-12 + 100 / 4e14)));
  // Past the ridge (I = 1000): the compute time.
  CHECK(energy_roof_flops_per_joule(1000, 5e-13, 1e-10, 100, 1e15, 4e12) ==
        doctest::Approx(1 / (5e-13 + 1e-13 + 100 / 1e15)));
  CHECK(std::isnan(energy_roof_flops_per_joule(0, 5e-13, 1e-10, 100, 1e15, 4e12)));
  CHECK(std::isnan(energy_roof_flops_per_joule(100, 5e-13, 1e-10, 100, 0, 4e12)));
}

TEST_CASE("energy roofline: written, reduced and bulk-copied bytes at their own prices") {
  EnergyCoefficients c;
  c.static_watts = 100;
  c.joules_per_byte = {
      {MemoryLevel::kDram, 1e-10}, {MemoryLevel::kL2, 2e-11}, {MemoryLevel::kL1, 5e-12}};
  EnergyWork w;
  w.seconds = 1e-3;  // static: 0.1 J
  w.bytes = {{MemoryLevel::kDram, 1e9}, {MemoryLevel::kL2, 3e9}, {MemoryLevel::kL1, 1e9}};
  w.dram_write_bytes = 4e8;
  w.l2_reduction_bytes = 5e8;
  w.bulk_share = 0.5;
  const auto level_joules = [&](const EnergyModel& m, const std::string& id) {
    for (const EnergyTerm& t : m.terms)
      if (t.id == id) return t.joules;
    return -1.0;
  };
  // Without their coefficients every byte pays the read's price: the deepest-level model.
  const EnergyModel plain = model_energy(w, c);
  CHECK(level_joules(plain, "dram") == doctest::Approx(0.1));
  CHECK(level_joules(plain, "l2") == doctest::Approx(0.04));
  // Writes and reductions priced apart: DRAM 6e8 × 1e-10 + 4e8 × 1.5e-10; L2 (2e9 − 5e8) ×
  // 2e-11 + 5e8 × 6e-11.
  c.joules_per_dram_write_byte = 1.5e-10;
  c.joules_per_l2_reduction_byte = 6e-11;
  const EnergyModel own = model_energy(w, c);
  CHECK(level_joules(own, "dram") == doctest::Approx(0.06 + 0.06));
  CHECK(level_joules(own, "l2") == doctest::Approx(0.03 + 0.03));
  // The term's price per byte is the mean of its kinds'.
  for (const EnergyTerm& t : own.terms)
    if (t.id == "dram") CHECK(t.joules_per_unit == doctest::Approx(1.2e-10));
  // A bulk-copied byte skips the load path: Δ = e_dram − e_bulk = 3e-11, half the bytes (b =
  // 0.5) so 1.5e-11 off the price of every DRAM and L2 byte read (not L1's; written and reduced
  // bytes keep their streams' prices: Δ is a load's).
  c.joules_per_bulk_dram_byte = 7e-11;
  const EnergyModel bulk = model_energy(w, c);
  CHECK(level_joules(bulk, "dram") == doctest::Approx(0.12 - 6e8 * 1.5e-11));
  CHECK(level_joules(bulk, "l2") == doctest::Approx(0.06 - 1.5e9 * 1.5e-11));
  // A price never goes below zero, and a bulk coefficient dearer than the load's takes nothing
  // off.
  w.bulk_share = 1;
  c.joules_per_bulk_dram_byte = 1e-12;  // Δ = 9.9e-11: the L2 read price reaches zero
  const EnergyModel deep = model_energy(w, c);
  CHECK(level_joules(deep, "l2") == doctest::Approx(5e8 * 6e-11));
  c.joules_per_bulk_dram_byte = 2e-10;
  CHECK(level_joules(model_energy(w, c), "dram") == doctest::Approx(0.12));
  // More written or reduced bytes than the level holds are capped at it.
  w.dram_write_bytes = 5e9;
  CHECK(level_joules(model_energy(w, c), "dram") == doctest::Approx(0.15));
  // Bad counts are refused.
  w.l2_reduction_bytes = -1;
  CHECK_THROWS_AS(model_energy(w, c), std::invalid_argument);
  w.l2_reduction_bytes = 0;
  w.bulk_share = std::nan("");
  CHECK_THROWS_AS(model_energy(w, c), std::invalid_argument);
}

TEST_CASE("energy roofline: the bulk, write and reduction streams price their own bytes") {
  CalibrationOverlay overlay = h100_energy_overlay();
  // Faster than dram_read on the same target, yet neither is the DRAM coefficient:
  //   bulk  3.3e10 bytes at 370 W: 270 × 0.01 / 3.3e10;  write 3.2e10 at 500 W: 400 × 0.01 /
  //   3.2e10;  reductions 1e10 at 250 W: 150 × 0.01 / 1e10 (no L2 roof either).
  overlay.measurements.push_back(measurement(kDramBulkId, "dram", false, 3.3e10, 0.01, 0, 370));
  overlay.measurements.push_back(measurement(kDramWriteId, "dram", false, 3.2e10, 0.01, 0, 500));
  overlay.measurements.push_back(measurement(kL2ReduceId, "l2", false, 5e11, 0.01, 0, 250));
  derive_ceilings(overlay);
  REQUIRE(derive_energy_coefficients(overlay).empty());
  REQUIRE(overlay.energy);
  const EnergyCoefficients& c = *overlay.energy;
  CHECK(*c.byte(MemoryLevel::kDram) == doctest::Approx(1e-10));
  CHECK(c.joules_per_bulk_dram_byte == doctest::Approx(270 * 0.01 / 3.3e10));
  CHECK(c.joules_per_dram_write_byte == doctest::Approx(400 * 0.01 / 3.2e10));
  CHECK(c.joules_per_l2_reduction_byte == doctest::Approx(150 * 0.01 / 5e11));
  // The reductions ran faster than l2_read here (5e13 B/s against 1e13), and are still no roof.
  for (const MemoryLevelSpec& level : overlay.memory)
    if (level.level == MemoryLevel::kL2) CHECK(level.bandwidth_gbps == doctest::Approx(1e4));
  // The keys round-trip; a bad one is named.
  const CalibrationOverlay reread = parse_calibration(to_json(overlay), "test");
  REQUIRE(reread.energy);
  CHECK(*reread.energy == c);
  // A stream no hungrier than the static power prices nothing, and says why.
  overlay.measurements.back().energy = reading_at(90, 0.01);
  const std::vector<std::string> left = derive_energy_coefficients(overlay);
  REQUIRE(left.size() == 1);
  CHECK(left[0].find("l2_reduce") == 0);
  CHECK(overlay.energy->joules_per_l2_reduction_byte == 0);
}

TEST_CASE("energy roofline: no launch draws more than the board's power limit") {
  EnergyCoefficients c;
  c.static_watts = 100;
  c.joules_per_flop = {{"tensor_fp16.wgmma", 5e-13}};
  c.joules_per_byte = {{MemoryLevel::kDram, 1e-10}};
  EnergyWork w;
  w.seconds = 1e-3;                         // static: 0.1 J
  w.flops = {{"tensor_fp16.wgmma", 1e12}};  // 0.5 J
  w.bytes = {{MemoryLevel::kDram, 1e9}};    // 0.1 J: 0.7 J in 1 ms, 700 W
  // No limit known: the terms' sum.
  EnergyModel m = model_energy(w, c);
  CHECK(m.joules == doctest::Approx(0.7));
  CHECK(m.terms_joules == doctest::Approx(0.7));
  CHECK_FALSE(m.at_power_limit);
  // A limit above the terms' draw leaves them.
  c.power_limit_watts = 800;
  m = model_energy(w, c);
  CHECK(m.joules == doctest::Approx(0.7));
  CHECK_FALSE(m.at_power_limit);
  // Below it: the limit × the time; the terms and their shares stay as they were.
  c.power_limit_watts = 600;
  m = model_energy(w, c);
  CHECK(m.at_power_limit);
  CHECK(m.power_limit_watts == 600);
  CHECK(m.joules == doctest::Approx(0.6));
  CHECK(m.terms_joules == doctest::Approx(0.7));
  REQUIRE(m.dominant() != nullptr);
  CHECK(m.dominant()->share == doctest::Approx(0.5 / 0.7));
  // No time, no power: the limit bounds nothing (the static term is 0 then, the rest stands).
  w.seconds = 0;
  m = model_energy(w, c);
  CHECK_FALSE(m.at_power_limit);
  CHECK(m.joules == doctest::Approx(0.6));
  w.seconds = 1e-3;

  // Calibrated: the board's enforced limit travels from the static power into the coefficients,
  // through the calibration file and the spec's JSON alike.
  CalibrationOverlay overlay = h100_energy_overlay();
  overlay.static_power->power_limit_watts = 700;
  derive_energy_coefficients(overlay);
  REQUIRE(overlay.energy);
  CHECK(overlay.energy->power_limit_watts == 700);
  CHECK(overlay.energy->source.find("enforced power limit 700 W") != std::string::npos);
  const json written = to_json(overlay);
  CHECK(written["static_power"]["power_limit_watts"] == 700);
  CHECK(written["energy_coefficients"]["power_limit_watts"] == 700);
  const CalibrationOverlay back = parse_calibration(written, "cal.json");
  CHECK(back.static_power->power_limit_watts == 700);
  CHECK(*back.energy == *overlay.energy);
  // Not known (an older file, no NVML query): no key, no bound.
  CHECK_FALSE(to_json(h100_energy_overlay())["energy_coefficients"].contains("power_limit_watts"));
  json bad = written;
  bad["energy_coefficients"]["power_limit_watts"] = -5;
  CHECK_THROWS_AS(parse_calibration(bad, "cal.json"), InputError);

  // A BF16 tensor coefficient measured apart is used as measured, not its FP16 twin's.
  EnergyCoefficients twin;
  twin.joules_per_flop = {{"tensor_fp16.mma_sync", 1e-12}};
  CHECK(*twin.flop("tensor_bf16.mma_sync") == doctest::Approx(1e-12));
  twin.joules_per_flop["tensor_bf16.mma_sync"] = 8e-13;
  CHECK(*twin.flop("tensor_bf16.mma_sync") == doctest::Approx(8e-13));
}

TEST_CASE(
    "energy roofline: a pipe capped on the whole device is priced on its share below the cap") {
  CalibrationOverlay overlay = h100_energy_overlay();
  overlay.static_power->power_limit_watts = 700;
  // wgmma on all SMs at the cap (690 W, within 5% of 700): (690 − 100) × 0.01 / 8e12.
  overlay.measurements[5].energy = reading_at(690, 0.01);
  const auto share = [](int sms, double flops, double watts) {
    CalibrationMeasurement m = measurement("wgmma." + std::to_string(sms) + "sm",
                                           "tensor_fp16.wgmma", true, flops, 0.01, 1980, watts);
    m.sms = sms;
    m.share_of = "wgmma";
    return m;
  };
  // Half the SMs drew less than the limit's 95% but calibrate went on (heat held the clock); a
  // quarter ran below it at the full clock, the last share: (400 − 100) × 0.01 / 2.4e12 =
  // 1.25e-12 J/FLOP.
  overlay.measurements.push_back(share(72, 4.4e12, 600));
  overlay.measurements.push_back(share(40, 2.4e12, 400));
  derive_ceilings(overlay);
  REQUIRE(derive_energy_coefficients(overlay).empty());
  REQUIRE(overlay.energy);
  CHECK(*overlay.energy->flop("tensor_fp16.wgmma") == doctest::Approx(1.25e-12));
  CHECK(overlay.energy->source.find("priced below the power cap the whole device ran them at: "
                                    "tensor_fp16.wgmma on 40 SMs (400 W)") != std::string::npos);
  // The shares are no roof: the ceiling is the whole device's (8e12 FLOPs in 10 ms).
  for (const ComputeCeiling& c : overlay.compute)
    if (c.id() == "tensor_fp16.wgmma") CHECK(c.peak_tflops == doctest::Approx(800));
  // Other pipes keep their whole-device prices; the file round-trips the shares.
  CHECK(*overlay.energy->flop("tensor_fp16.mma_sync") == doctest::Approx(1e-12));
  const CalibrationOverlay back = parse_calibration(to_json(overlay), "cal.json");
  REQUIRE(back.energy);
  CHECK(*back.energy == *overlay.energy);
  // Without a known limit no share is "below the cap": the whole device's price.
  overlay.static_power->power_limit_watts = 0;
  derive_energy_coefficients(overlay);
  CHECK(*overlay.energy->flop("tensor_fp16.wgmma") == doctest::Approx(590 * 0.01 / 8e12));
  // Nor with the only share at the cap.
  overlay.static_power->power_limit_watts = 700;
  overlay.measurements.pop_back();
  overlay.measurements.back().energy = reading_at(680, 0.01);
  derive_energy_coefficients(overlay);
  CHECK(*overlay.energy->flop("tensor_fp16.wgmma") == doctest::Approx(590 * 0.01 / 8e12));
}

TEST_CASE("energy roofline: a counted row gets the breakdown, the verdict and its roof") {
  Report report = head_report();
  apply_ceilings(report, Ceilings::kSpec, {h100_energy_overlay()});
  REQUIRE(report.rows.size() > 2);
  report.rows[0].energy = EnergyMeasurement{0.0123, 412.5, 2.98e-5, 1.2, 12, 0.004};
  const JudgedReport judged(report);
  const Row& row = judged.rows()[0];
  const RowAnalysis& a = judged.at(0);
  REQUIRE(a.energy);
  const EnergyAnalysis& e = *a.energy;
  // By hand from the row's counters and the coefficients above.
  const auto counted = [&](const char* id) { return row.counters.at(id); };
  const double dram = counted(quantity::kDramRead) + counted(quantity::kDramWrite);
  const double l2 = counted(quantity::kL2);
  const double l1 = a.levels.back().bytes;
  double expected = 100 * 2.98e-5 + counted(quantity::kTensorMmaSync) * 1e-12 +
                    counted(quantity::kTensorWgmma) * 5e-13 +
                    counted(quantity::kFp32Flops) * 5e-12 + dram * 1e-10 +
                    std::max(0.0, l2 - dram) * 2e-11 + std::max(0.0, l1 - l2) * 5e-12;
  CHECK(e.model.joules == doctest::Approx(expected));
  CHECK(e.measured_joules == doctest::Approx(0.0123));
  CHECK(e.modelled_vs_measured == doctest::Approx(expected / 0.0123));
  CHECK(e.flops_per_joule == doctest::Approx(a.flops / 0.0123));
  CHECK(e.flops_per_joule_source == Source::kMeasured);
  CHECK(std::isfinite(e.roof_flops_per_joule));
  CHECK(e.fraction_of_roof == doctest::Approx(e.flops_per_joule / e.roof_flops_per_joule));
  // A bulk-copied DRAM byte cheaper than a loaded one: the roof prices DRAM bytes at the
  // cheaper (a kernel streaming by TMA can reach it), so it rises; a dearer one changes nothing.
  const auto roof_with_bulk = [&](double joules_per_byte) {
    Report r = report;
    for (GpuSpec& spec : r.specs)
      if (spec.energy) spec.energy->joules_per_bulk_dram_byte = joules_per_byte;
    const JudgedReport j(r);
    REQUIRE(j.at(0).energy);
    return j.at(0).energy->roof_flops_per_joule;
  };
  CHECK(roof_with_bulk(5e-11) > 1.001 * e.roof_flops_per_joule);
  CHECK(roof_with_bulk(2e-10) == doctest::Approx(e.roof_flops_per_joule));
  // Shared-memory wavefronts counted (full set): charged beside the L1 hits, less wgmma's
  // operand reads (the wgmma coefficient holds them).
  Report full = report;
  Row& counted_row = full.rows[0];
  counted_row.counters[quantity::kSharedWavefronts] = 3e6;
  counted_row.counters[quantity::kSharedWavefrontsGmma] = 2e6;
  const JudgedReport with_shared(full);
  const double l1_global = counted(quantity::kL1);
  const double shared_expected = expected - std::max(0.0, l1 - l2) * 5e-12 +
                                 std::max(0.0, l1_global - l2) * 5e-12 + 128 * 1e6 * 5e-12;
  REQUIRE(with_shared.at(0).energy);
  CHECK(with_shared.at(0).energy->model.joules == doctest::Approx(shared_expected));
  // The head report counts no FP16 CUDA-core FLOPs and no XU: the note says so.
  CHECK(e.note == "FP16, XU, integer instructions not counted (--counter-set full counts them)");
  const EnergyTerm* dominant = e.model.dominant();
  REQUIRE(dominant != nullptr);
  CHECK(e.dominant == energy_term_label(*dominant));
  CHECK(e.verdict.rfind("energy: ", 0) == 0);

  // The rows without energy measured are modelled too, on the timed median.
  REQUIRE(judged.at(1).energy);
  CHECK(std::isnan(judged.at(1).energy->modelled_vs_measured));
  CHECK(judged.at(1).energy->flops_per_joule_source == Source::kModel);
  CHECK(judged.at(1).energy->model.terms[0].work ==
        doctest::Approx(judged.rows()[1].timing->median_seconds()));

  // Without the calibration: no energy verdict anywhere.
  const JudgedReport plain(head_report());
  for (std::size_t i = 0; i < plain.rows().size(); ++i) CHECK_FALSE(plain.at(i).energy);
}

TEST_CASE("energy roofline: the verdict names the dominant cost in the time verdict's words") {
  EnergyCoefficients c;
  c.static_watts = 100;
  c.joules_per_flop = {{"tensor_fp16.wgmma", 5e-13}};
  c.joules_per_byte = {{MemoryLevel::kDram, 1e-10}};
  GpuSpec spec = shipped_spec("h100-sxm5");
  spec.energy = c;
  Row row;
  row.kernel = "test-kernel";  // no model: the counters alone place it
  row.spec_key = spec.key;
  row.timing = Timing{{1e-3}};
  const auto verdict = [&](double flops, double dram_bytes) {
    row.counters = {{quantity::kTensorWgmma, flops},
                    {quantity::kDramRead, dram_bytes},
                    {quantity::kDramWrite, 0}};
    Report report;
    report.specs = {spec};
    report.rows = {row};
    const JudgedReport judged(report);
    REQUIRE(judged.at(0).energy);
    return judged.at(0).energy->verdict;
  };
  // static 0.1 J against 0.05 J of wgmma and 0.02 J of DRAM.
  CHECK(verdict(1e11, 2e8) == "energy: 59% static (P_static × time): faster is cheaper");
  // wgmma 0.3 J against static 0.1 J and DRAM 0.1 J.
  CHECK(verdict(6e11, 1e9) == "energy: tensor FP16 (wgmma) 60%");
  // DRAM 0.5 J.
  CHECK(verdict(1e11, 5e9) == "energy: DRAM 77%");

  // No counters (a model row), an error row, a projected row: no energy verdict.
  Report model_report;
  model_report.specs = {spec};
  row.counters.clear();
  model_report.rows = {row};
  CHECK_FALSE(JudgedReport(model_report).at(0).energy);
  row.counters = {
      {quantity::kTensorWgmma, 1e11}, {quantity::kDramRead, 1e8}, {quantity::kDramWrite, 0}};
  row.status = RowStatus::kError;
  model_report.rows = {row};
  CHECK_FALSE(JudgedReport(model_report).at(0).energy);
}

TEST_CASE("energy roofline: table column, JSON analysis and CSV columns at the end") {
  TempDir dir;
  const auto calibration = dir.path / "h100-energy.json";
  write_text(calibration, to_json(h100_energy_overlay()).dump(2));
  const std::string head =
      (std::filesystem::path(ROOFLINE_TEST_DATA_DIR) / "reports" / "head.json").string();

  // The table shows the column where rows have a model, with a verdict line per row.
  CliResult r = cli({"show", head, "--calibration", calibration.string(), "--wide"});
  REQUIRE(r.code == 0);
  CHECK(r.out.find("energy model") != std::string::npos);
  CHECK(r.out.find("energy: standard B") != std::string::npos);
  CHECK(r.out.find("% of the energy roof") != std::string::npos);
  // Without the calibration, neither.
  r = cli({"show", head, "--wide"});
  REQUIRE(r.code == 0);
  CHECK(r.out.find("energy model") == std::string::npos);
  // Chosen by name.
  r = cli({"show", head, "--calibration", calibration.string(), "--columns",
           "kernel,workload,energy-model"});
  REQUIRE(r.code == 0);
  CHECK(r.out.find("energy model") != std::string::npos);

  const auto json_path = dir.path / "out.json";
  const auto csv_path = dir.path / "out.csv";
  r = cli({"show", head, "--calibration", calibration.string(), "--json", json_path.string(),
           "--csv", csv_path.string()});
  REQUIRE(r.code == 0);
  const json j = json::parse(read_text(json_path));
  const json& e = j["rows"][0]["analysis"]["energy"];
  REQUIRE(e.is_object());
  CHECK(e["joules"]["source"] == "model");
  CHECK(e["terms"][0]["term"] == "static");
  CHECK(e["terms"][0]["unit"] == "seconds");
  CHECK(e["terms"][0]["joules_per_unit"] == doctest::Approx(100));
  CHECK(e["verdict"].get<std::string>().rfind("energy: ", 0) == 0);
  CHECK(e["measured_joules"]["value"].is_null());
  double shares = 0;
  for (const json& t : e["terms"]) shares += t["share"].get<double>();
  CHECK(shares == doctest::Approx(1));
  // The report read back carries the calibrated spec and its coefficients: judged the same.
  CHECK(j["specs"]["h100-sxm5.calibrated"].contains("energy_coefficients"));
  const Report back = read_report_file(json_path);
  CHECK(JudgedReport(back).at(0).energy->model.joules ==
        doctest::Approx(e["joules"]["value"].get<double>()));

  const std::string csv = read_text(csv_path);
  const std::string header = csv.substr(0, csv.find('\n'));
  const std::string tail =
      "kv_tokens,energy_model_j,energy_static_j,energy_tensor_j,energy_fp32_j,energy_fp16_j,"
      "energy_xu_j,energy_int_j,energy_dram_j,energy_l2_j,energy_l1_j,energy_dominant,"
      "energy_dominant_share,"
      "energy_model_vs_measured,energy_flops_per_j,energy_roof_flops_per_j,energy_of_roof";
  CHECK(header.size() > tail.size());
  CHECK(header.substr(header.size() - tail.size()) == tail);
  // Row 1: a model, no FP16, XU or integer term, nothing measured to compare with. The last 16
  // cells are the energy columns (none of them quoted).
  const std::size_t first_end = csv.find('\n');
  const std::string line = csv.substr(first_end + 1, csv.find('\n', first_end + 1) - first_end - 1);
  CAPTURE(line);
  std::vector<std::string> cells;
  std::size_t end = line.size();
  for (int k = 0; k < 16; ++k) {
    const std::size_t comma = line.rfind(',', end - 1);
    REQUIRE(comma != std::string::npos);
    cells.insert(cells.begin(), line.substr(comma + 1, end - comma - 1));
    end = comma;
  }
  CHECK_FALSE(cells[0].empty());   // energy_model_j
  CHECK_FALSE(cells[1].empty());   // energy_static_j
  CHECK(cells[4].empty());         // energy_fp16_j: not counted
  CHECK(cells[5].empty());         // energy_xu_j: not counted
  CHECK(cells[6].empty());         // energy_int_j: not counted
  CHECK_FALSE(cells[7].empty());   // energy_dram_j
  CHECK(cells[12].empty());        // energy_model_vs_measured: no energy measured
  CHECK_FALSE(cells[15].empty());  // energy_of_roof
}
