// `run --sms N` on a real GPU: a green context of N SMs (lib/gpu/green_context.hpp) that the
// kernels' SM count follows while it is current, and a small run in one whose report says how
// many SMs it had and whose rows are measured. Skipped (exit code 77) without a CUDA device.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdio>
#include <filesystem>
#include <string>

#include <cuda_runtime_api.h>
#include <nlohmann/json.hpp>

#include "kernels/context_sms.hpp"
#include "kernels/test_aids.hpp"
#include "lib/core/base/errors.hpp"
#include "lib/gpu/green_context.hpp"
#include "tests/unit/helpers.hpp"

using namespace roofline;
using nlohmann::json;

namespace {

int device_sms() {
  int sms = 0;
  REQUIRE(cudaSetDevice(0) == cudaSuccess);
  REQUIRE(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0) == cudaSuccess);
  return sms;
}

int context_sms() {
  int sms = 0;
  REQUIRE(kernels::current_context_sms(&sms) == cudaSuccess);
  return sms;
}

}  // namespace

TEST_CASE("green context: the kernels see its SMs while it is current, the device's after") {
  const int whole = device_sms();
  REQUIRE(cudaFree(nullptr) == cudaSuccess);
  CHECK(context_sms() == whole);
  {
    gpu::GreenContext green(0, 33);
    INFO(green.description());
    CHECK(green.requested_sms() == 33);
    CHECK(green.device_sm_count() == whole);
    CHECK(green.sm_count() >= 33);
    CHECK(green.sm_count() <= whole);
    CHECK(context_sms() == green.sm_count());
    // Its launches run on its SMs and no others: 8 waves' worth of CTAs land on at most that
    // many distinct SMs (and on more than half of them: the partition is used).
    int used = 0;
    REQUIRE(kernels::count_sms_used(8 * whole, &used) == cudaSuccess);
    CHECK(used <= green.sm_count());
    CHECK(2 * used > green.sm_count());
    // The runtime works in it: memory and a synchronised stream.
    void* p = nullptr;
    CHECK(cudaMalloc(&p, 1 << 20) == cudaSuccess);
    CHECK(cudaMemset(p, 0, 1 << 20) == cudaSuccess);
    CHECK(cudaDeviceSynchronize() == cudaSuccess);
    CHECK(cudaFree(p) == cudaSuccess);
  }
  CHECK(context_sms() == whole);
  int used = 0;
  REQUIRE(kernels::count_sms_used(8 * whole, &used) == cudaSuccess);
  CHECK(2 * used > whole);  // the primary context is current again: past any 33-SM share
  CHECK_THROWS_AS(gpu::GreenContext(0, whole + 1), InputError);
  CHECK_THROWS_AS(gpu::GreenContext(0, 0), InputError);
}

TEST_CASE(
    "run --sms 33: the report says the SMs it had, and every row is timed, its kernels listed") {
  const int whole = device_sms();
  TempDir dir;
  const std::string out = (dir.path / "share.json").string();
  const CliResult r =
      cli({"run", "--sms", "33", "--kernel", "standard,flash-v2,flash-v3", "--seq", "1024",
           "--pass", "fwd,bwd", "--reps", "3", "--rounds", "1", "--warmup", "1", "--json", out});
  INFO(r.err);
  REQUIRE(r.code == 0);
  const json report = json::parse(read_text(out));
  const json& context = report["context"];
  const std::string counters = context["counters"].get<std::string>();
  INFO(counters);
  REQUIRE(context.contains("green_context_sms"));
  const int sms = context["green_context_sms"].get<int>();
  CHECK(sms >= 33);
  CHECK(sms <= whole);
  CHECK(counters.find("green context of " + std::to_string(sms)) != std::string::npos);
  CHECK(context["device"]["sm_count"] == whole);
  for (const json& row : report["rows"]) {
    const std::string what = row["kernel"].get<std::string>() + ": " + row["message"].dump();
    INFO(what);
    // flash-v3 is built for compute capability 9.0 only: elsewhere its rows say so.
    if (row["status"] == "unsupported" && row["kernel"] == "flash-v3") continue;
    // Timed always; counted where CUPTI's range profiler works in a green context (on the
    // H200 with CUDA 13.0 it does not: cuptiProfilerGetCounterAvailability returns
    // CUPTI_ERROR_UNKNOWN, and the row says so).
    CHECK((row["status"] == "ok" || row["status"] == "counters_unavailable"));
    CHECK(row["timing"]["samples_seconds"].size() == 3);
    // The kernels of its launch, counted or not (the kernel pass takes every timed row), unless
    // the provenance says why none were recorded: the standard path's GEMMs around its softmax.
    if (counters.find("kernels not recorded") == std::string::npos) {
      REQUIRE(row.contains("kernels"));
      CHECK(row["kernels"].size() >= (row["kernel"] == "standard" ? 3u : 1u));
    }
    // Judged on the share it ran on (on the whole spec when the share is the whole GPU).
    const std::string spec = row["spec"].get<std::string>();
    const std::string suffix = "." + std::to_string(sms) + "sm";
    CHECK(
        (sms == whole || (spec.size() > suffix.size() &&
                          spec.compare(spec.size() - suffix.size(), suffix.size(), suffix) == 0)));
  }
}

TEST_CASE("run --sms beyond the GPU's SMs: one line, exit 2, nothing written") {
  const int whole = device_sms();
  TempDir dir;
  const std::string out = (dir.path / "none.json").string();
  const CliResult r =
      cli({"run", "--sms", std::to_string(whole + 1), "--seq", "1024", "--json", out});
  expect_input_error(r, "--sms " + std::to_string(whole + 1) + ": ");
  CHECK(r.err.find("has " + std::to_string(whole) + " SMs") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(out));
}

int main(int argc, char** argv) {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::printf("SKIP: no CUDA device (gpu_green_context_tests)\n");
    return 77;
  }
  doctest::Context context(argc, argv);
  return context.run();
}
