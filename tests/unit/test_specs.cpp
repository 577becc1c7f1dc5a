#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "lib/core/base/errors.hpp"
#include "lib/core/domain/gpu_spec.hpp"
#include "lib/core/domain/spec_choice.hpp"
#include "lib/core/domain/stream_floor.hpp"
#include "lib/core/model/roofline.hpp"
#include "tests/unit/helpers.hpp"

using namespace roofline;

namespace {

SpecRegistry shipped() {
  SpecRegistry registry;
  registry.add_directory(ROOFLINE_TEST_SPECS_DIR);
  return registry;
}

nlohmann::json valid_spec_json() {
  return nlohmann::json::parse(
      read_text(std::string(ROOFLINE_TEST_SPECS_DIR) + "/a100-sxm4-80gb.json"));
}

std::string load_error(const nlohmann::json& json) {
  try {
    parse_gpu_spec(json, "test.json");
  } catch (const InputError& error) {
    return error.what();
  }
  return "(no error)";
}

}  // namespace

TEST_CASE("specs: every shipped file loads, with sources and the ceilings the tool needs") {
  const SpecRegistry registry = shipped();
  CHECK(registry.all().size() >= 9);
  for (const char* name :
       {"v100", "a100", "a100-pcie", "h100", "h100-pcie", "h200", "l40s", "rtx4090", "b200"}) {
    CAPTURE(name);
    const GpuSpec& spec = registry.find(name);
    CHECK(spec.dram().bandwidth_gbps > 0);
    CHECK(spec.ceiling(ComputePath::kTensorFp16) != nullptr);
    CHECK(spec.ceiling(ComputePath::kFp32) != nullptr);
    // Six identity figures, the XU and shared-memory rates, and the launch and node floors where
    // measured.
    CHECK(spec.sources.size() ==
          8u + (spec.launch_floor_us > 0 ? 1u : 0u) + (spec.node_floor_us > 0 ? 1u : 0u));
    for (const ComputeCeiling& c : spec.compute) CHECK_FALSE(c.source.empty());
    for (const MemoryLevelSpec& m : spec.memory) CHECK_FALSE(m.source.empty());
  }
}

TEST_CASE("specs: short names resolve to the datasheet parts the v0.3.0 analysis uses") {
  const SpecRegistry registry = shipped();
  const GpuSpec& a100 = registry.find("a100");
  CHECK(a100.key == "a100-sxm4-80gb");
  CHECK(a100.dram().bandwidth_gbps == 2039);
  CHECK(a100.ceiling(ComputePath::kTensorFp16)->peak_tflops == 312);
  const GpuSpec& h100 = registry.find("H100");  // case-insensitive
  CHECK(h100.key == "h100-sxm5");
  CHECK(h100.dram().bandwidth_gbps == 3350);
  CHECK(h100.ceiling(ComputePath::kTensorFp16)->peak_tflops == doctest::Approx(989.4));
  CHECK(h100.ceiling(ComputePath::kTensorFp16, TensorInstruction::kMmaSync)->peak_tflops ==
        doctest::Approx(713.7));
  const GpuSpec& v100 = registry.find("v100");
  CHECK(v100.key == "v100-sxm2");
  CHECK(v100.dram().bandwidth_gbps == 900);
  CHECK(v100.ceiling(ComputePath::kTensorFp16)->peak_tflops == 125);
  CHECK(v100.ceiling(ComputePath::kFp16CudaCore)->peak_tflops == doctest::Approx(31.4));
}

TEST_CASE("specs: ridge points of the v0.3.0 analysis's section 2") {
  const SpecRegistry registry = shipped();
  auto ridge = [&](const char* name) {
    const GpuSpec& spec = registry.find(name);
    return ridge_point(spec.ceiling(ComputePath::kTensorFp16)->peak_tflops * 1e12,
                       spec.dram().bandwidth_gbps * 1e9);
  };
  CHECK(ridge("a100") == doctest::Approx(153.0).epsilon(0.002));
  CHECK(ridge("h100") == doctest::Approx(295.3).epsilon(0.002));
}

TEST_CASE("specs: device names map to spec files") {
  const SpecRegistry registry = shipped();
  REQUIRE(registry.find_for_device("NVIDIA H200") != nullptr);
  CHECK(registry.find_for_device("NVIDIA H200")->key == "h200-sxm");
  CHECK(registry.find_for_device("NVIDIA A100-SXM4-80GB")->key == "a100-sxm4-80gb");
  CHECK(registry.find_for_device("Some Other GPU") == nullptr);
}

TEST_CASE("specs: one rule chooses the judging spec for run, run --devices, calibrate, profile") {
  const SpecRegistry registry = shipped();
  int derived = 0;
  const auto derive = [&derived] {
    ++derived;
    return shipped().find("a100");
  };
  // A device with a spec file: its own, nothing derived.
  SpecChoice own = choose_judging_spec(registry, "NVIDIA H200", std::nullopt, derive);
  CHECK(own.spec.key == registry.find("h200").key);
  CHECK(own.measured.key == own.spec.key);
  CHECK(!own.projection);
  CHECK(own.note.empty());
  CHECK(derived == 0);
  // --gpu another: a projection, measured on the device's own spec.
  SpecChoice projected = choose_judging_spec(registry, "NVIDIA H200", "a100", nullptr);
  CHECK(projected.projection);
  CHECK(projected.spec.key == registry.find("a100").key);
  CHECK(projected.measured.key == registry.find("h200").key);
  CHECK(projected.note.find("projection: measured on NVIDIA H200") == 0);
  // No spec file: derived where the command can (run, calibrate), refused where it cannot
  // (profile judges a device record).
  SpecChoice unknown = choose_judging_spec(registry, "NVIDIA Future GPU", std::nullopt, derive);
  CHECK(derived == 1);
  CHECK(!unknown.projection);
  CHECK(unknown.note.find("approximate") != std::string::npos);
  CHECK_THROWS_WITH_AS(
      choose_judging_spec(registry, "NVIDIA Future GPU", std::nullopt, nullptr),
      "no spec file names \"NVIDIA Future GPU\": pass --gpu NAME or --spec FILE to judge its "
      "kernels",
      InputError);
  CHECK(choose_judging_spec(registry, "NVIDIA Future GPU", "h100", nullptr).projection);
}

TEST_CASE("specs: a mistyped GPU gets the names it is near") {
  const SpecRegistry registry = shipped();
  try {
    registry.find("h20");
    FAIL("no error");
  } catch (const InputError& error) {
    // One suggestion, not the whole list (h200 is one edit away; h100 two).
    CHECK(std::string(error.what()).rfind("unknown GPU \"h20\": did you mean h200? (all ", 0) == 0);
    CHECK(std::string(error.what()).find("a100") == std::string::npos);
  }
  try {
    registry.find("H100-SXN");  // case is ignored: the alias h100-sxm is one edit away
    FAIL("no error");
  } catch (const InputError& error) {
    CHECK(std::string(error.what()).find("did you mean ") != std::string::npos);
  }
}

TEST_CASE("specs: an unknown GPU far from every name lists the known names") {
  const SpecRegistry registry = shipped();
  try {
    registry.find("quadro");
    FAIL("no error");
  } catch (const InputError& error) {
    const std::string message = error.what();
    CHECK(message.rfind("unknown GPU \"quadro\"; known: ", 0) == 0);
    CHECK(message.find("a100") != std::string::npos);
    CHECK(message.find("h200") != std::string::npos);
  }
}

TEST_CASE("specs: validation names the file and the key") {
  auto spec = valid_spec_json();
  CHECK(load_error(spec) == "(no error)");

  auto missing = spec;
  missing.erase("sm_count");
  CHECK(load_error(missing) == "test.json: sm_count: missing");

  auto wrong_type = spec;
  wrong_type["sm_count"] = "108";
  CHECK(load_error(wrong_type) == "test.json: sm_count: must be an integer from 1 to 10000");

  auto negative = spec;
  negative["memory_levels"][0]["bandwidth_gbps"] = -1;
  CHECK(load_error(negative) ==
        "test.json: memory_levels[0].bandwidth_gbps: must be positive (got -1)");

  auto zero = spec;
  zero["compute_ceilings"][0]["peak_tflops"] = 0;
  CHECK(load_error(zero) == "test.json: compute_ceilings[0].peak_tflops: must be positive (got 0)");

  auto unknown = spec;
  unknown["dram_bandwidth"] = 1;
  CHECK(load_error(unknown) == "test.json: dram_bandwidth: unknown key");

  auto unknown_nested = spec;
  unknown_nested["compute_ceilings"][1]["tflops"] = 1;
  CHECK(load_error(unknown_nested) == "test.json: compute_ceilings[1].tflops: unknown key");

  auto no_source = spec;
  no_source["memory_levels"][0].erase("source");
  CHECK(load_error(no_source) == "test.json: memory_levels[0].source: missing");

  auto no_identity_source = spec;
  no_identity_source["sources"].erase("tdp_watts");
  CHECK(load_error(no_identity_source) == "test.json: sources.tdp_watts: missing");

  auto bad_path = spec;
  bad_path["compute_ceilings"][0]["path"] = "tensor_fp13";
  CHECK(load_error(bad_path) ==
        "test.json: compute_ceilings[0].path: unknown compute path \"tensor_fp13\"");

  auto no_dram = spec;
  no_dram["memory_levels"] = nlohmann::json::array({spec["memory_levels"][1]});
  CHECK(load_error(no_dram) == "test.json: memory_levels: no dram entry");

  auto not_object = nlohmann::json::array();
  CHECK(load_error(not_object) == "test.json: (top level): must be a JSON object");
}

TEST_CASE("specs: malformed JSON and duplicate aliases across files") {
  TempDir dir;
  write_text(dir.path / "broken.json", "{\"name\": ");
  SpecRegistry registry;
  try {
    registry.add_file(dir.path / "broken.json");
    FAIL("no error");
  } catch (const InputError& error) {
    CHECK(std::string(error.what())
              .rfind((dir.path / "broken.json").string() + ": not valid JSON", 0) == 0);
  }

  auto clash = valid_spec_json();
  clash["name"] = "My A100 variant";
  clash["aliases"] = nlohmann::json::array({"my-a100", "a100"});
  write_text(dir.path / "mine.json", clash.dump());
  SpecRegistry with_shipped = shipped();
  try {
    with_shipped.add_file(dir.path / "mine.json");
    FAIL("no error");
  } catch (const InputError& error) {
    CHECK(std::string(error.what()) ==
          (dir.path / "mine.json").string() + ": aliases: \"a100\" is already used by " +
              std::string(ROOFLINE_TEST_SPECS_DIR) + "/a100-sxm4-80gb.json");
  }
}

TEST_CASE("specs: a spec survives a JSON round trip") {
  const SpecRegistry registry = shipped();
  for (const GpuSpec& spec : registry.all()) {
    CAPTURE(spec.key);
    GpuSpec again = parse_gpu_spec(to_json(spec), spec.file);
    CHECK(again.name == spec.name);
    CHECK(again.compute.size() == spec.compute.size());
    CHECK(again.memory.size() == spec.memory.size());
    CHECK(to_json(again) == to_json(spec));
  }
}

TEST_CASE("specs: a launch or node floor needs its source and a sane value") {
  const nlohmann::json spec = to_json(shipped_spec("h200"));
  const GpuSpec parsed = parse_gpu_spec(spec, "h200-sxm.json");
  CHECK(parsed.launch_floor_us == doctest::Approx(1.12));
  CHECK(parsed.node_floor_us == doctest::Approx(0.67));
  for (const char* key : {"launch_floor_us", "node_floor_us"}) {
    CAPTURE(key);
    nlohmann::json no_source = spec;
    no_source["sources"].erase(key);
    CHECK_THROWS_WITH_AS(parse_gpu_spec(no_source, "x.json"), doctest::Contains(key), InputError);
    for (double bad : {0.0, -1.0}) {
      nlohmann::json out_of_range = spec;
      out_of_range[key] = bad;
      CHECK_THROWS_AS(parse_gpu_spec(out_of_range, "x.json"), InputError);
    }
    nlohmann::json stray = spec;  // a source for a figure the spec does not give
    stray.erase(key);
    CHECK_THROWS_AS(parse_gpu_spec(stray, "x.json"), InputError);
  }
  nlohmann::json absent = spec;
  for (const char* key : {"launch_floor_us", "node_floor_us"}) {
    absent.erase(key);
    absent["sources"].erase(key);
  }
  const GpuSpec unmeasured = parse_gpu_spec(absent, "x.json");
  CHECK(unmeasured.launch_floor_us == 0);
  CHECK(unmeasured.node_floor_us == 0);
  // A node's time is its execution alone: its floor lies below a launch's.
  for (const char* name : {"h100", "h200"}) {
    CAPTURE(name);
    CHECK(shipped_spec(name).node_floor_us > 0);
    CHECK(shipped_spec(name).node_floor_us < shipped_spec(name).launch_floor_us);
  }
}

TEST_CASE("specs: a level's share curve rises to all the SMs and names its source") {
  nlohmann::json spec = valid_spec_json();
  const int sms = spec["sm_count"].get<int>();
  nlohmann::json& dram = spec["memory_levels"][0];
  REQUIRE(dram["level"] == "dram");
  dram["shares"] = {{{"sms", 8}, {"gbps", 500}}, {{"sms", sms}, {"gbps", 1800}}};
  dram["shares_source"] = "calibrate on the test GPU";
  CHECK(load_error(spec) == "(no error)");
  const GpuSpec parsed = parse_gpu_spec(spec, "test.json");
  CHECK(parsed.dram().shares == std::vector<ShareBandwidth>{{8, 500}, {sms, 1800}});
  CHECK(parsed.dram().shares_source == "calibrate on the test GPU");
  CHECK(to_json(parse_gpu_spec(to_json(parsed), "again.json")) == to_json(parsed));

  auto falling = spec;
  falling["memory_levels"][0]["shares"][1]["sms"] = 8;
  CHECK(load_error(falling) ==
        "test.json: memory_levels[0].shares[1].sms: must rise from one point to the next");
  auto short_of_all = spec;
  short_of_all["memory_levels"][0]["shares"][1]["sms"] = sms - 1;
  CHECK(load_error(short_of_all)
            .find("memory_levels[0].shares: the last point must be on all " + std::to_string(sms) +
                  " SMs") != std::string::npos);
  auto too_many = spec;
  too_many["memory_levels"][0]["shares"][1]["sms"] = sms + 1;
  CHECK(load_error(too_many).find("memory_levels[0].shares[1].sms: must be an integer from 1 to") !=
        std::string::npos);
  auto no_source = spec;
  no_source["memory_levels"][0].erase("shares_source");
  CHECK(load_error(no_source) == "test.json: memory_levels[0].shares_source: missing");
  auto source_alone = spec;
  source_alone["memory_levels"][0].erase("shares");
  CHECK(load_error(source_alone) == "test.json: memory_levels[0].shares_source: without shares");
  auto empty = spec;
  empty["memory_levels"][0]["shares"] = nlohmann::json::array();
  CHECK(load_error(empty).find("must not be empty") != std::string::npos);
}

TEST_CASE(
    "specs: the DRAM level's stream curve rises in bytes, names its source, and bounds a time") {
  nlohmann::json spec = valid_spec_json();
  nlohmann::json& dram = spec["memory_levels"][0];
  REQUIRE(dram["level"] == "dram");
  const double bandwidth = dram["bandwidth_gbps"].get<double>() * 1e9;
  dram["stream"] = {{{"bytes", 4e6}, {"seconds", 8e-6}}, {{"bytes", 64e6}, {"seconds", 40e-6}}};
  dram["stream_source"] = "calibrate on the test GPU";
  CHECK(load_error(spec) == "(no error)");
  const GpuSpec parsed = parse_gpu_spec(spec, "test.json");
  CHECK(parsed.dram().stream == std::vector<StreamPoint>{{4e6, 8e-6}, {64e6, 40e-6}});
  CHECK(parsed.dram().stream_source == "calibrate on the test GPU");
  CHECK(to_json(parse_gpu_spec(to_json(parsed), "again.json")) == to_json(parsed));

  // Below the first point, the line from the origin; between points, linear; past the last, the
  // rest at the level's bandwidth; none without a curve or bytes.
  const MemoryLevelSpec& level = parsed.dram();
  CHECK(stream_floor_seconds(level, 2e6) == doctest::Approx(4e-6));
  CHECK(stream_floor_seconds(level, 4e6) == doctest::Approx(8e-6));
  CHECK(stream_floor_seconds(level, 34e6) == doctest::Approx(24e-6));
  CHECK(stream_floor_seconds(level, 64e6) == doctest::Approx(40e-6));
  CHECK(stream_floor_seconds(level, 164e6) == doctest::Approx(40e-6 + 100e6 / bandwidth));
  CHECK(std::isnan(stream_floor_seconds(level, 0)));
  CHECK(std::isnan(stream_floor_seconds(parse_gpu_spec(valid_spec_json(), "t.json").dram(), 1e6)));

  auto falling = spec;
  falling["memory_levels"][0]["stream"][1]["bytes"] = 4e6;
  CHECK(load_error(falling) ==
        "test.json: memory_levels[0].stream[1].bytes: must rise from one point to the next");
  auto no_source = spec;
  no_source["memory_levels"][0].erase("stream_source");
  CHECK(load_error(no_source) == "test.json: memory_levels[0].stream_source: missing");
  auto source_alone = spec;
  source_alone["memory_levels"][0].erase("stream");
  CHECK(load_error(source_alone) == "test.json: memory_levels[0].stream_source: without stream");
  auto empty = spec;
  empty["memory_levels"][0]["stream"] = nlohmann::json::array();
  CHECK(load_error(empty).find("must not be empty") != std::string::npos);
  auto unit = spec;
  unit["memory_levels"][0]["stream"][0].erase("seconds");
  unit["memory_levels"][0]["stream"][0]["us"] = 8;
  CHECK(load_error(unit).find("memory_levels[0].stream[0]") != std::string::npos);
  auto on_l2 = spec;
  REQUIRE(on_l2["memory_levels"].size() > 1);
  on_l2["memory_levels"][1]["stream"] = dram["stream"];
  on_l2["memory_levels"][1]["stream_source"] = "x";
  CHECK(load_error(on_l2) ==
        "test.json: memory_levels[1].stream: only the dram level has a stream curve");
}
