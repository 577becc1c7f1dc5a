// `cuflash-roofline run` end to end. Without a GPU (CI) it must exit 3 with one line that
// points at `model`; with one it must measure and write a report.
#include <doctest/doctest.h>

#include <cuda_runtime_api.h>
#include <nlohmann/json.hpp>

#include <algorithm>

#include "app/cli.hpp"
#include "lib/core/base/text.hpp"
#include "tests/unit/helpers.hpp"

using namespace roofline;

TEST_CASE("run: no GPU means exit 3 and a pointer to `model`, a GPU means a report") {
  int count = 0;
  const bool has_gpu = cudaGetDeviceCount(&count) == cudaSuccess && count > 0;
  TempDir dir;
  const std::string out = (dir.path / "run.json").string();
  CaptureStreams capture;
  const int code = app::run_cli(
      {"run", "--seq", "128", "--kernel", "flash-v2", "--no-causal", "--reps", "2", "--json", out});
  if (!has_gpu) {
    CHECK(code == 3);
    CHECK(capture.err.str().rfind("error: no usable GPU (", 0) == 0);
    CHECK(capture.err.str().find("`cuflash-roofline model` works without a GPU") !=
          std::string::npos);
    CHECK_FALSE(std::filesystem::exists(out));
  } else {
    CHECK(code == 0);
    const auto report = nlohmann::json::parse(read_text(out));
    CHECK(report["rows"].size() == 1);
    CHECK(report["rows"][0]["timing"]["samples_seconds"].size() == 2);
  }
}

TEST_CASE("run: junk option values are refused before the GPU is touched (issue 20)") {
  TempDir dir;
  const std::string out = (dir.path / "run.json").string();
  struct Case {
    std::vector<std::string> args;
    std::string message;
  } cases[] = {
      {{"--shard", ""}, "--shard: must not be empty"},
      {{"--devices", ""}, "--devices: must not be empty"},
      {{"--points", ""}, "--points: must not be empty"},
      {{"--device", "-1"}, "--device: must be a decimal integer from 0 to 1023"},
      {{"--device", "0x1"}, "--device: must be a decimal integer from 0 to 1023"},
      {{"--seed", "-1"}, "--seed: must be a decimal integer from 0 to 18446744073709551615"},
      {{"--seed", "18446744073709551616"},
       "--seed: must be a decimal integer from 0 to 18446744073709551615"},
      {{"--counters-after-round", "x", "--devices", "0"},
       "--counters-after-round must be a whole number from 0 to 1000"},
  };
  for (const Case& c : cases) {
    CAPTURE(join(c.args, " "));
    std::vector<std::string> args = {"run", "--seq", "128", "--json", out};
    args.insert(args.end(), c.args.begin(), c.args.end());
    const CliResult r = cli(args);
    CHECK(r.code == 2);
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    CHECK(r.err.find(c.message) != std::string::npos);
    CHECK_FALSE(std::filesystem::exists(out));
  }
}

TEST_CASE("run --devices without a GPU: one error, one line") {
  int count = 0;
  if (cudaGetDeviceCount(&count) == cudaSuccess && count > 0) return;  // a GPU: nothing to see
  TempDir dir;
  const std::string out = (dir.path / "run.json").string();
  const CliResult r = cli({"run", "--seq", "128", "--devices", "0,1", "--json", out});
  CHECK(r.code == 3);
  CAPTURE(r.err);
  CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  CHECK_FALSE(std::filesystem::exists(out));
}
