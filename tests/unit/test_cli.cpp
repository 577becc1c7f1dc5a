#include <doctest/doctest.h>

#include <spdlog/spdlog.h>
#include <nlohmann/json.hpp>

#include "app/cli.hpp"
#include "lib/core/base/text.hpp"
#include "tests/unit/helpers.hpp"

using namespace roofline;

TEST_CASE("cli: model reproduces the v0.3.0 analysis's FLOP column and A100 ridge") {
  const CliResult r = cli({"model", "--gpu", "a100", "--no-causal", "--json", "-"});
  REQUIRE(r.code == 0);
  const auto j = nlohmann::json::parse(r.out);
  REQUIRE(j["rows"].size() == 4 * 4);  // 4 N × 4 kernels, non-causal only
  std::vector<double> gflops;
  for (const auto& row : j["rows"]) {
    if (row["kernel"] == "flash-v2")
      gflops.push_back(row["model"]["algorithmic_flops"].get<double>() / 1e9);
    // flash-v3 is built for sm_90a: on an A100 spec its rows say so instead of a verdict.
    if (row["kernel"] == "flash-v3") {
      CHECK(row["status"] == "unsupported");
      CHECK(row["message"] == "flash-v3 is built for compute capability 9.0 only (this GPU: 8.0)");
    } else {
      CHECK(row["status"] == "ok");
    }
  }
  REQUIRE(gflops.size() == 4);
  CHECK(format_fixed(gflops[0], 2) == "2.15");
  CHECK(format_fixed(gflops[1], 1) == "34.4");
  CHECK(format_fixed(gflops[2], 1) == "137.4");
  CHECK(format_fixed(gflops[3], 1) == "549.8");
  const auto& standard = j["rows"][0]["analysis"];
  CHECK(standard["levels"][0]["ridge_flop_per_byte"]["value"].get<double>() ==
        doctest::Approx(153.0).epsilon(0.001));
}

TEST_CASE("cli: model defaults show causal and non-causal, table to stdout") {
  const CliResult r = cli({"model", "--gpu", "h100", "--seq", "1024", "--kernel", "flash-v2"});
  REQUIRE(r.code == 0);
  CHECK(r.out.find("B1 H8 N1024 d64 causal fwd") != std::string::npos);
  CHECK(r.out.find("B1 H8 N1024 d64 full fwd") != std::string::npos);
  CHECK(r.out.find("analytic model only") != std::string::npos);
}

TEST_CASE("cli: several GPUs and both passes") {
  const CliResult r =
      cli({"model", "--gpu", "a100,h100,v100", "--seq", "2048", "--pass", "fwd,bwd", "--csv", "-"});
  REQUIRE(r.code == 0);
  CHECK(split(r.out, '\n').size() == 1 + 3 * 2 * 2 * 4 + 1);  // GPUs × masks × passes × kernels
}

TEST_CASE("cli: bad input gives one line, exit 2, and no output file") {
  TempDir dir;
  const std::string out = (dir.path / "r.json").string();
  struct Case {
    std::vector<std::string> args;
    std::string message;
  } cases[] = {
      {{"model", "--gpu", "x100", "--json", out}, "error: unknown GPU \"x100\": did you mean "},
      {{"model", "--gpu", "zzzz", "--json", out}, "error: unknown GPU \"zzzz\"; known: "},
      {{"model", "--seq", "0", "--json", out}, "error: seq must be >= 1 (got 0)"},
      {{"model", "--seq", "1024,-5", "--json", out}, "error: seq must be >= 1 (got -5)"},
      {{"model", "--batch", "0", "--json", out}, "error: batch must be >= 1 (got 0)"},
      {{"model", "--heads", "-2", "--json", out}, "error: heads must be >= 1 (got -2)"},
      {{"model", "--head-dim", "48", "--json", out},
       "error: head-dim must be 32, 64 or 128 (got 48)"},
      {{"model", "--kernel", "flash-v9", "--json", out},
       "error: unknown kernel \"flash-v9\": did you mean flash-v1, flash-v2 or flash-v3? (known: "
       "standard, flash-v1, flash-v2, flash-v3, flash-decode)"},
      {{"model", "--kernel", "xyz", "--json", out},
       "error: unknown kernel \"xyz\"; known: standard, flash-v1, flash-v2, flash-v3, "
       "flash-decode"},
      {{"model", "--pass", "sideways", "--json", out},
       "error: --pass must be fwd or bwd (got \"sideways\")"},
      {{"model", "--json", (dir.path / "missing" / "r.json").string()},
       "error: cannot write " + (dir.path / "missing" / "r.json").string() + ": directory " +
           (dir.path / "missing").string() + " does not exist"},
      {{"model", "--causal", "--no-causal"}, "error: --causal excludes --no-causal"},
      {{"model", "--seq", "abc"}, "error: "},
      {{"run", "--settle", "-1", "--json", out},
       "error: --settle: must be seconds from 0 to 60 (got \"-1\")"},
      {{"run", "--settle", "nan", "--json", out},
       "error: --settle: must be seconds from 0 to 60 (got \"nan\")"},
      {{"run", "--sms", "0", "--json", out},
       "error: --sms: must be a decimal integer from 1 to 10000 (got \"0\")"},
      {{"run", "--sms", "many", "--json", out},
       "error: --sms: must be a decimal integer from 1 to 10000 (got \"many\")"},
      {{"run", "--sms", "66.5", "--json", out},
       "error: --sms: must be a decimal integer from 1 to 10000 (got \"66.5\")"},
      {{"run", "--sms", "10001", "--json", out},
       "error: --sms: must be a decimal integer from 1 to 10000 (got \"10001\")"},
      {{"run", "--sms", "66", "--devices", "all", "--json", out},
       "error: --sms excludes --devices"},
      {{"run", "--counters-after-round", "x", "--json", out},
       "error: --counters-after-round must be a whole number from 0 to 1000 (got \"x\")"},
      {{}, "error: A subcommand is required"},
  };
  for (const Case& c : cases) {
    CAPTURE(join(c.args, " "));
    const CliResult r = cli(c.args);
    CHECK(r.code == 2);
    CHECK(r.err.rfind(c.message, 0) == 0);
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    CHECK_FALSE(std::filesystem::exists(out));
  }
}

TEST_CASE("cli: specs list, show, validate") {
  const CliResult list = cli({"specs", "list"});
  CHECK(list.code == 0);
  CHECK(list.out.find("a100-sxm4-80gb") != std::string::npos);
  CHECK(list.out.find("153.0") != std::string::npos);
  const CliResult show = cli({"specs", "show", "v100"});
  CHECK(show.code == 0);
  CHECK(show.out.find("FP16 (CUDA cores)  31.4 TFLOP/s") != std::string::npos);
  CHECK(show.out.find("tensor FP16 (mma_sync)  125.0 TFLOP/s") != std::string::npos);

  TempDir dir;
  write_text(dir.path / "bad.json", "{\"name\": \"x\"}");
  const CliResult bad = cli({"specs", "validate", (dir.path / "bad.json").string()});
  CHECK(bad.code == 2);
  CHECK(bad.err == "error: " + (dir.path / "bad.json").string() + ": aliases: missing\n");
  const CliResult good =
      cli({"specs", "validate", std::string(ROOFLINE_TEST_SPECS_DIR) + "/h200-sxm.json"});
  CHECK(good.code == 0);
  CHECK(good.out.rfind("ok: ", 0) == 0);
}

TEST_CASE("cli: user spec files join the registry") {
  TempDir dir;
  auto spec = nlohmann::json::parse(
      read_text(std::string(ROOFLINE_TEST_SPECS_DIR) + "/a100-sxm4-80gb.json"));
  spec["name"] = "Lab GPU";
  spec["aliases"] = nlohmann::json::array({"lab"});
  spec["device_names"] = nlohmann::json::array({"Lab GPU"});
  spec["memory_levels"][0]["bandwidth_gbps"] = 1000;
  write_text(dir.path / "lab.json", spec.dump());
  const CliResult r = cli({"--spec", (dir.path / "lab.json").string(), "model", "--gpu", "lab",
                           "--seq", "1024", "--json", "-"});
  REQUIRE(r.code == 0);
  CHECK(nlohmann::json::parse(r.out)["specs"]["lab"]["name"] == "Lab GPU");
  const CliResult d = cli({"--specs-dir", dir.path.string(), "specs", "show", "lab"});
  CHECK(d.code == 0);
}

TEST_CASE("cli: help documents exit codes, version") {
  const CliResult help = cli({"--help"});
  CHECK(help.code == 0);
  CHECK(help.out.find("Exit codes (each command's --help lists those it returns):") !=
        std::string::npos);
  CHECK(help.out.find("3      no usable GPU") != std::string::npos);
  const CliResult version = cli({"--version"});
  CHECK(version.code == 0);
  CHECK(version.out.rfind("cuflash-roofline ", 0) == 0);
}

TEST_CASE("cli: -q and -v before or after the subcommand") {
  CHECK(cli({"model", "--gpu", "h100", "--seq", "1024", "-q"}).code == 0);
  CHECK(spdlog::get_level() == spdlog::level::err);
  CHECK(cli({"model", "--gpu", "h100", "--seq", "1024", "-v"}).code == 0);
  CHECK(spdlog::get_level() == spdlog::level::debug);
  CHECK(cli({"-q", "model", "--gpu", "h100", "--seq", "1024"}).code == 0);
  CHECK(spdlog::get_level() == spdlog::level::err);
  CHECK(cli({"model", "--gpu", "h100", "--seq", "1024"}).code == 0);
  CHECK(spdlog::get_level() == spdlog::level::info);
}
