// `run --stalls` on a real GPU: the warp samples of the bundled kernels. Its own process: once
// the CUPTI range profiler has run in a process, PC sampling there attributes no sample to a PC
// (H200, CUDA 13.0), so the runner samples before it counts, and this test runs before any
// counter pass of its process. Skipped (exit code 77) without a CUDA device.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdio>

#include <cuda_runtime_api.h>

#include "lib/core/domain/stalls.hpp"
#include "lib/gpu/runner.hpp"

using namespace roofline;

namespace {

Workload workload(int n, bool causal) {
  Workload w;
  w.batch = 1;
  w.heads = 4;
  w.seq_len = n;
  w.head_dim = 64;
  w.causal = causal;
  return w;
}

}  // namespace

TEST_CASE("stalls: the warp stalls of a bundled kernel, by reason and by line of its source") {
  std::vector<gpu::SweepPoint> points = {{"flash-v2", workload(4096, false)}};
  int major = 0;
  cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0);
  if (major == 9) points.push_back({"flash-v3", workload(4096, false)});
  gpu::RunOptions options;
  options.reps = 3;
  options.rounds = 1;
  options.stalls = true;
  options.verify = true;
  const gpu::RunResult result = gpu::run_sweep(points, options);
  CHECK(result.counters.find("warp stalls: CUPTI PC sampling") != std::string::npos);
  for (const Row& row : result.rows) {
    CAPTURE(row.kernel);
    CHECK(row.status == RowStatus::kOk);
    CHECK(row.verification->passed);  // sampling came after, and changed nothing of it
    REQUIRE(row.stalls.has_value());
    const StallSampling& s = *row.stalls;
    CAPTURE(s.note);
    CHECK(s.samples > 1000);
    std::uint64_t sum = 0;
    for (const auto& [reason, n] : s.reasons) sum += n;
    CHECK(sum == s.samples);  // the shares add up to 100%
    CHECK_FALSE(dominant_stall(s).empty());
    REQUIRE_FALSE(s.hottest.empty());
    REQUIRE_FALSE(s.lines.empty());
    // The bundled kernels carry line information: the hottest line is in their own source.
    CHECK(s.lines.front().file.find("kernels/") != std::string::npos);
    CHECK(s.lines.front().line > 0);
  }
}

int main(int argc, char** argv) {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    std::printf("SKIPPED: no CUDA device (gpu_stall_tests)\n");
    return 77;
  }
  doctest::Context context(argc, argv);
  return context.run();
}
