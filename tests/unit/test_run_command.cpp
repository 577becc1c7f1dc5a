// `cuflash-roofline run` end to end. Without a GPU (CI) it must exit 3 with one line that
// points at `model`; with one it must measure and write a report.
#include <doctest/doctest.h>

#include <cuda_runtime_api.h>
#include <nlohmann/json.hpp>

#include "app/cli.hpp"
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
