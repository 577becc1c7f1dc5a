// What to try next (lib/core/verdict/advice.hpp): the lever each kind of row gets, its evidence
// and the upper bound on the gain.
#include <doctest/doctest.h>

#include <algorithm>

#include "lib/core/domain/metric_catalog.hpp"
#include "lib/core/model/model.hpp"
#include "lib/core/verdict/advice.hpp"
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

TEST_CASE("advice: a grid below one wave asks for more CTAs first when the tail is what is left") {
  // flash-v2 B1 H2 N1024: 16 CTAs on 132 SMs. Just below the tail roof, the idle SMs are the gap.
  Row row = bundled("flash-v2", 1, 2, 1024, 50e-6);
  row.counters[quantity::kTensorMmaSync] = row.prediction.model_flops;
  const RowAnalysis a = analyze(row, h200());
  REQUIRE(a.tail_bound);
  const double busy = a.tail->efficiency;
  row.timing = Timing{{a.time_floor_seconds / 0.9}, 0, 0};  // at 90% of the tail roof
  Advice v = advice_of(row);
  CHECK(v.lever == Lever::kTail);
  REQUIRE(v.also.size() == 1);
  CHECK(v.also[0].lever == Lever::kWgmma);
  CHECK(v.line().find("Also wgmma") != std::string::npos);
  // More CTAs fill the idle SMs and nothing else: at most 1/busy.
  CHECK(v.estimated_speedup <= doctest::Approx(1 / busy));

  // Far below the tail roof (at half the grid's busy share of it), the tail is not what keeps it
  // slow: the pipe's lever leads, the tail follows, its gain still at most 1/busy.
  row.timing = Timing{{a.time_floor_seconds / (busy / 2)}, 0, 0};
  v = advice_of(row);
  CHECK(v.lever == Lever::kWgmma);
  REQUIRE(v.also.size() == 1);
  CHECK(v.also[0].lever == Lever::kTail);
  CHECK(v.also[0].estimated_speedup <= doctest::Approx(1 / busy));
}

TEST_CASE(
    "advice: the tail never decides the lever alone: the same lever with and without the "
    "shared-memory count") {
  // flash-v1 far below a 95%-busy tail roof is an FP32 kernel first (tensor cores), as the full
  // set's L1-bound verdict of it says too.
  Row row = bundled("flash-v1", 2, 8, 3000, 0);
  const RowAnalysis probe = analyze(row, h200());
  row.timing = Timing{{probe.time_floor_seconds / 0.3}, 0, 0};
  const RowAnalysis a = analyze(row, h200());
  REQUIRE(a.tail_bound);
  REQUIRE(a.tail->efficiency > 0.3);
  const Advice v = advice_of(row);
  CHECK(v.lever == Lever::kTensorCores);
  CHECK(std::any_of(v.also.begin(), v.also.end(),
                    [](const LeverAdvice& l) { return l.lever == Lever::kTail; }));
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
  // At 70% the access pattern is still the lever (not latency): no threshold at 60% for a
  // launch's advice to flip across between two runs or counter sets.
  row.timing = Timing{{2e9 / 4800e9 / 0.7}, 0, 0};
  v = advice_of(row);
  CHECK(v.lever == Lever::kBandwidth);
  CHECK(v.estimated_speedup == doctest::Approx(1 / 0.7));
  row.timing = Timing{{2e9 / 4800e9 / 0.9}, 0, 0};
  v = advice_of(row);
  CHECK(v.lever == Lever::kAtRoof);
  CHECK(v.estimated_speedup == doctest::Approx(1 / 0.9));
}

TEST_CASE("advice: a profiled kernel of few CTAs that computes nothing is told more CTAs") {
  // No FLOPs, so no compute ceiling: its grid still says why it reaches little of the bandwidth
  // (a split-KV combine, a single-tile sort, an index select of a few CTAs, as PyTorch runs them).
  Row row = profiled_row("gather", {8, 1, 1}, {256, 1, 1},
                         {{quantity::kDramRead, 64e6}, {quantity::kDramWrite, 0}}, 200e-6);
  Advice v = advice_of(row);
  CHECK(v.lever == Lever::kOccupancy);
  CHECK(v.evidence.find("with 8 CTAs for") != std::string::npos);
  CHECK(v.estimated_speedup == doctest::Approx(200e-6 / (64e6 / 4800e9)).epsilon(0.01));
  // The same bytes over 4096 CTAs: the grid fills the GPU, the access pattern is the lever.
  row.launch->grid = {4096, 1, 1};
  CHECK(advice_of(row).lever == Lever::kBandwidth);
  // A short launch of few CTAs is held by its launch and ramp-up, not by its grid.
  row.launch->grid = {8, 1, 1};
  row.counters[quantity::kDramRead] = 64e3;
  row.timing = Timing{{3e-6}, 0, 0};
  CHECK(advice_of(row).lever == Lever::kLatency);
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

TEST_CASE("advice: no gain goes below the GPU's launch floor") {
  // A 2.1 µs launch moving 22 KB: its bytes take 5 ns at DRAM's peak, but no kernel on the H200
  // takes less than its measured launch floor (1.12 µs).
  REQUIRE(h200().launch_floor_us == doctest::Approx(1.12));
  Row row = profiled_row("fill", {1, 1, 1}, {128, 1, 1},
                         {{quantity::kDramRead, 22272}, {quantity::kDramWrite, 0}}, 2.1e-6);
  Advice v = advice_of(row);
  CHECK(v.lever == Lever::kLatency);
  CHECK(v.estimated_speedup == doctest::Approx(2.1 / 1.12));
  CHECK(v.target_time_seconds == doctest::Approx(1.12e-6));
  CHECK(v.gain_to_roof == doctest::Approx(2.1 / 1.12));
  CHECK(v.evidence.find("no kernel takes less than 1.12 µs on") != std::string::npos);
  // A spec without a measured floor assumes 1 µs, and says so.
  GpuSpec unmeasured = h200();
  unmeasured.launch_floor_us = 0;
  const std::optional<Advice> assumed = advise(row, analyze(row, unmeasured), unmeasured);
  REQUIRE(assumed);
  CHECK(assumed->estimated_speedup == doctest::Approx(2.1));
  CHECK(assumed->evidence.find("assumed") != std::string::npos);
}

TEST_CASE("advice: a graph node's floor is its execution's, below a launch's") {
  // A 0.9 µs kernel node (its execution alone: the graph launch was submitted once) moving
  // 22 KB: under the H200's launch floor (1.12 µs, submission to end), above its node floor.
  Row row = profiled_row("fill", {1, 1, 1}, {128, 1, 1},
                         {{quantity::kDramRead, 22272}, {quantity::kDramWrite, 0}}, 0.9e-6);
  row.launch->node_kind = "kernel";
  row.launch->graph_node_id = 7;
  REQUIRE(row.launch->is_graph_node());
  REQUIRE(h200().node_floor_us == doctest::Approx(0.67));
  const Advice v = advice_of(row);
  CHECK(v.lever == Lever::kLatency);
  CHECK(v.target_time_seconds == doctest::Approx(0.67e-6));
  CHECK(v.estimated_speedup == doctest::Approx(0.9 / 0.67));
  CHECK(v.evidence.rfind("a graph node of 0.9 µs at ", 0) == 0);
  CHECK(v.evidence.find("no graph node runs in less than 0.67 µs on") != std::string::npos);
  CHECK(v.evidence.find("no kernel takes less than") == std::string::npos);
  // Without a measured node floor, 0.5 µs is assumed, and said.
  GpuSpec unmeasured = h200();
  unmeasured.node_floor_us = 0;
  const std::optional<Advice> assumed = advise(row, analyze(row, unmeasured), unmeasured);
  REQUIRE(assumed);
  CHECK(assumed->target_time_seconds == doctest::Approx(0.5e-6));
  CHECK(assumed->evidence.find("assumed: its spec has no measured node floor") !=
        std::string::npos);
}

TEST_CASE("advice: a long launch that moves almost nothing and computes nothing waits") {
  // XLA's autotuner DelayKernel: spins for milliseconds; no lever on bytes shortens it.
  Row row = profiled_row("DelayKernel", {1, 1, 1}, {32, 1, 1},
                         {{quantity::kDramRead, 4096}, {quantity::kDramWrite, 0}}, 12e-3);
  const Advice v = advice_of(row);
  CHECK(v.lever == Lever::kLatency);
  CHECK(v.estimated_speedup == doctest::Approx(1.0));
  CHECK(v.evidence.find("it waits") != std::string::npos);
  CHECK(v.action.find("no roof applies") != std::string::npos);
  // The same bytes in 15 µs: a short, latency-bound launch, its gain bounded by the floor.
  row.timing = Timing{{15e-6}, 0, 0};
  const Advice short_launch = advice_of(row);
  CHECK(short_launch.estimated_speedup == doctest::Approx(15 / 1.12));
}

TEST_CASE("advice: flash-v2 is told wgmma under the default and the full counter set") {
  Row row = bundled("flash-v2", 4, 16, 8192, 2e-3);
  row.counters[quantity::kTensorMmaSync] = row.prediction.model_flops;
  CHECK(advice_of(row).lever == Lever::kWgmma);
  // --counter-set full adds the shared-memory wavefronts of mma.sync's operand loads: L1 (with
  // shared memory) now binds, and on-chip reuse comes second, not first.
  row.counters[quantity::kL1] = 1e9;
  row.counters[quantity::kSharedWavefronts] = 5e8;
  const RowAnalysis a = analyze(row, h200());
  REQUIRE(a.binding == "L1");
  const Advice v = advice_of(row);
  CHECK(v.lever == Lever::kWgmma);
  REQUIRE_FALSE(v.also.empty());
  CHECK(v.also[0].lever == Lever::kOnChip);
}

TEST_CASE(
    "advice: a wgmma kernel whose L1 binds by a little, far below it, is told latency under "
    "both sets") {
  // flash-v3 on wgmma at 30% of its roof: the default set sees no other roof (latency).
  Row row = bundled("flash-v3", 2, 8, 4096, 0);
  row.counters[quantity::kTensorWgmma] = row.prediction.model_flops;
  const double compute_floor = row.prediction.model_flops / 989.4e12;
  row.timing = Timing{{compute_floor / 0.3}, 0, 0};
  const Advice plain = advice_of(row);
  CHECK(plain.lever == Lever::kLatency);
  // The full set's shared-memory wavefronts put L1's roof 7% under wgmma's: L1 binds, at 32% of
  // it. The gap below it (x3) is not L1's (its roof is a few % under the next): the levers of
  // the roof behind it lead, as without the count, and on-chip reuse follows.
  row.counters[quantity::kL1] = 0;
  row.counters[quantity::kSharedWavefronts] =
      1.07 * compute_floor * h200().shared_bytes_per_second() / 128;
  REQUIRE(analyze(row, h200()).binding == "L1");
  Advice v = advice_of(row);
  CHECK(v.lever == Lever::kLatency);
  REQUIRE_FALSE(v.also.empty());
  CHECK(v.also.back().lever == Lever::kOnChip);
  // L1's roof half the compute roof, the kernel at 90% of it: on-chip reuse is what is left.
  row.counters[quantity::kSharedWavefronts] =
      2 * compute_floor * h200().shared_bytes_per_second() / 128;
  row.timing = Timing{{2 * compute_floor / 0.9}, 0, 0};
  v = advice_of(row);
  INFO(v.line());
  CHECK(v.lever == Lever::kOnChip);
}
