// What to try next (lib/core/report/advice.hpp): the lever each kind of row gets, its evidence
// and the upper bound on the gain.
#include <doctest/doctest.h>

#include <algorithm>

#include "lib/core/domain/metric_catalog.hpp"
#include "lib/core/model/model.hpp"
#include "lib/core/report/advice.hpp"
#include "tests/unit/helpers.hpp"

using namespace roofline;

namespace {

const GpuSpec& h200() {
  return shipped_spec("h200");
}

Row bundled(const char* kernel, int batch, int heads, int n, double seconds) {
  Row row;
  row.kernel = kernel;
  row.spec_key = "h200-sxm";
  row.workload.batch = batch;
  row.workload.heads = heads;
  row.workload.seq_len = n;
  row.prediction = predict(find_kernel_model(kernel), row.workload, h200());
  row.timing = Timing{{seconds}, 0, 0};
  return row;
}

Advice advice_of(const Row& row) {
  const std::optional<Advice> v = advise(row, analyze(row, h200()), h200());
  REQUIRE(v);
  return *v;
}

}  // namespace

TEST_CASE("advice: standard attention is told to fuse, bounded by the compulsory bytes") {
  Row row = bundled("standard", 4, 16, 4096, 5e-3);
  const Advice v = advice_of(row);
  CHECK(v.lever == Lever::kFusion);
  CHECK(v.evidence.find("the compulsory bytes") != std::string::npos);
  // The floor of a fused kernel: the compulsory bytes at DRAM bandwidth or the algorithmic
  // FLOPs at the best tensor roof, whichever is longer.
  const double floor = std::max(row.prediction.compulsory_dram_bytes / 4800e9,
                                row.prediction.algorithmic_flops / 989.4e12);
  CHECK(v.target_time_seconds == doctest::Approx(floor));
  CHECK(v.estimated_speedup == doctest::Approx(5e-3 / floor));
}

TEST_CASE("advice: an mma.sync kernel on Hopper is told wgmma, with the roofs' ratio") {
  Row row = bundled("flash-v2", 4, 16, 8192, 2e-3);
  row.counters[quantity::kTensorMmaSync] = row.prediction.model_flops;
  const Advice v = advice_of(row);
  CHECK(v.lever == Lever::kWgmma);
  CHECK(v.evidence.find("(×1.39)") != std::string::npos);
  CHECK(v.estimated_speedup > 1);
  CHECK(v.brief().rfind("wgmma ≤×", 0) == 0);
}

TEST_CASE("advice: a grid below one wave asks for more CTAs first, and names wgmma too") {
  Row row = bundled("flash-v2", 1, 2, 1024, 50e-6);
  row.counters[quantity::kTensorMmaSync] = row.prediction.model_flops;
  const Advice v = advice_of(row);
  CHECK(v.lever == Lever::kTail);
  REQUIRE(v.also.size() == 1);
  CHECK(v.also[0].lever == Lever::kWgmma);
  // Pulling the tail lever alone opens more than changing the pipe under the same grid.
  CHECK(v.estimated_speedup > v.also[0].estimated_speedup);
  CHECK(v.line().find("Also wgmma") != std::string::npos);
}

TEST_CASE("advice: FP32 CUDA-core attention is told tensor cores") {
  Row row = bundled("flash-v1", 4, 16, 4096, 20e-3);
  const Advice v = advice_of(row);
  CHECK(v.lever == Lever::kTensorCores);
  CHECK(v.evidence.find("FP32") != std::string::npos);
}

TEST_CASE("advice: a profiled launch far below its bandwidth, and one at it") {
  Row row = profiled_row("copy", {4096, 1, 1}, {256, 1, 1},
                         {{quantity::kDramRead, 1e9}, {quantity::kDramWrite, 1e9}},
                         2e9 / 4800e9 / 0.3);  // 30% of DRAM bandwidth
  Advice v = advice_of(row);
  CHECK(v.lever == Lever::kBandwidth);
  CHECK(v.estimated_speedup == doctest::Approx(1 / 0.3));
  row.timing = Timing{{2e9 / 4800e9 / 0.9}, 0, 0};
  v = advice_of(row);
  CHECK(v.lever == Lever::kAtRoof);
  CHECK(v.estimated_speedup == doctest::Approx(1 / 0.9));
}

TEST_CASE("advice: an exp-bound row is told fewer exponentials, bounded by the next roof") {
  // flash-v2 at d = 32: 128 FLOPs per score on mma.sync, against 16 exp2 per clock and SM.
  Row row = bundled("flash-v2", 4, 16, 8192, 0);
  row.workload.head_dim = 32;
  row.prediction = predict(find_kernel_model("flash-v2"), row.workload, h200());
  row.counters[quantity::kTensorMmaSync] = row.prediction.model_flops;
  const RowAnalysis a = analyze(row, h200());
  REQUIRE(a.exp_bound);
  row.timing = Timing{{2 * a.exp.time_floor_seconds}, 0, 0};  // at half the XU roof
  const RowAnalysis timed = analyze(row, h200());
  const Advice v = advice_of(row);
  CHECK(v.roof == "XU");
  CHECK(v.lever == Lever::kExp);
  CHECK(v.evidence.find("exponential unit binds") != std::string::npos);
  // The floor it leaves: the FLOPs at the pipe's roof, above the exponentials' floor.
  CHECK(v.target_time_seconds == doctest::Approx(std::max(timed.flops / timed.peak_flops_per_second,
                                                          v.target_time_seconds)));
  CHECK(v.target_time_seconds < timed.time_seconds);
  CHECK(v.target_time_seconds >= timed.flops / timed.peak_flops_per_second * (1 - 1e-9));
  CHECK(v.estimated_speedup > 1);
  CHECK(v.brief().rfind("fewer exp ≤×", 0) == 0);
}
