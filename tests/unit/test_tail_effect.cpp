// The tail effect (lib/core/model/tail_effect.hpp): the bound, occupancy, the bundled grids and
// the analysis's tail roof.
#include <doctest/doctest.h>

#include <cmath>

#include "lib/core/domain/metric_catalog.hpp"
#include "lib/core/model/model.hpp"
#include "lib/core/model/tail_effect.hpp"
#include "lib/core/verdict/analysis.hpp"
#include "tests/unit/helpers.hpp"

using namespace roofline;

namespace {

const GpuSpec& spec(const char* name) {
  return shipped_spec(name);
}

LaunchGrid equal(std::int64_t ctas, int per_sm = 0) {
  LaunchGrid g;
  g.ctas = ctas;
  g.ctas_per_sm = per_sm;
  return g;
}

Workload workload(int batch, int heads, int n, int d, bool causal, Pass pass) {
  Workload w;
  w.batch = batch;
  w.heads = heads;
  w.seq_len = n;
  w.head_dim = d;
  w.causal = causal;
  w.pass = pass;
  return w;
}

}  // namespace

TEST_CASE("tail effect: equal CTAs are bounded by the busiest SM's count") {
  CHECK(tail_effect(equal(64), 132).efficiency == doctest::Approx(64.0 / 132));
  CHECK(tail_effect(equal(132), 132).efficiency == doctest::Approx(1.0));
  // 133 CTAs: one SM takes two, so at most 133 / 264 of the chip.
  CHECK(tail_effect(equal(133), 132).efficiency == doctest::Approx(133.0 / 264));
  CHECK(tail_effect(equal(8192), 132).efficiency == doctest::Approx(8192.0 / (63 * 132)));
  // The waves at the occupancy are reported, not used by the bound.
  const TailEffect two = tail_effect(equal(300, 2), 132);
  CHECK(two.waves == 2);
  CHECK(two.last_wave_fill == doctest::Approx(36.0 / 264));
  CHECK(two.efficiency == doctest::Approx(300.0 / (3 * 132)));
  CHECK(tail_effect(equal(64), 132).describe() == "64 CTAs on 132 SMs, 48% busy");
  CHECK(tail_effect(equal(300, 2), 132).describe() ==
        "300 CTAs (2 per SM) on 132 SMs: 2 waves, the last 14% full, 76% busy");
}

TEST_CASE("tail effect: unequal CTAs use the pigeonhole bound, never below the equal one") {
  // Two SMs, CTAs of work 3, 3, 2, 2, 2: some SM holds two of the three largest (3 + 2 = 5), and
  // the total over two SMs is 6: the bound is 6, the efficiency 12 / (2 · 6) = 1.
  LaunchGrid g;
  g.ctas = 5;
  g.cta_work = {{3.0, 2}, {2.0, 3}};
  CHECK(tail_effect(g, 2).efficiency == doctest::Approx(1.0));
  // One large CTA dominates: 10, 1, 1 on 4 SMs: 12 / (4 · 10).
  g.ctas = 3;
  g.cta_work = {{10.0, 1}, {1.0, 2}};
  CHECK(tail_effect(g, 4).efficiency == doctest::Approx(12.0 / 40));
  CHECK_FALSE(tail_effect(g, 4).equal_work);
  // Equal work given as one group is the closed form.
  g.ctas = 133;
  g.cta_work = {{2.0, 133}};
  CHECK(tail_effect(g, 132).efficiency == doctest::Approx(133.0 / 264));
}

TEST_CASE("tail effect: CTAs resident per SM from the spec's limits") {
  const SmLimits& h = *spec("h200").sm_limits;
  CHECK(resident_ctas_per_sm(h, 128, 32, 0) == 16);         // threads: 2048 / 128
  CHECK(resident_ctas_per_sm(h, 32, 16, 0) == 32);          // the CTA limit
  CHECK(resident_ctas_per_sm(h, 256, 128, 0) == 2);         // registers: 65536 / (256 · 128)
  CHECK(resident_ctas_per_sm(h, 384, 168, 0) == 1);         // 168 × 32 → 5376 per warp
  CHECK(resident_ctas_per_sm(h, 128, 0, 100 * 1024) == 2);  // 228 KB / (100 + 1) KB
  CHECK(resident_ctas_per_sm(h, 128, 0, 227 * 1024) == 1);
  CHECK(resident_ctas_per_sm(h, 128, 0, 228 * 1024) == 0);  // does not fit with the reserve
  CHECK(resident_ctas_per_sm(h, 4096, 0, 0) == 0);
}

TEST_CASE("tail effect: bundled flash grids, causal work per tile") {
  const KernelModel& v3 = find_kernel_model("flash-v3");
  const auto fwd = bundled_grid(v3, workload(1, 4, 1024, 128, false, Pass::kForward));
  REQUIRE(fwd);
  CHECK(fwd->ctas == 8 * 4);  // 1024 / 128 query tiles × 4 heads
  CHECK(fwd->cta_work.empty());
  const auto causal = bundled_grid(v3, workload(1, 4, 1024, 128, true, Pass::kForward));
  REQUIRE(causal);
  REQUIRE(causal->cta_work.size() == 8);
  CHECK(causal->cta_work.front().first == 1);  // the first query tile: its diagonal key tile
  CHECK(causal->cta_work.back().first == 8);
  CHECK(causal->cta_work.back().second == 4);
  const auto bwd = bundled_grid(v3, workload(1, 4, 1024, 128, true, Pass::kBackward));
  REQUIRE(bwd);
  CHECK(bwd->ctas == 8 * 4);  // key tiles of 128
  CHECK_FALSE(
      bundled_grid(find_kernel_model("standard"), workload(1, 4, 1024, 64, false, Pass::kForward)));
}

TEST_CASE("tail effect: CTAs handed out in launch order keep fewer SMs busy than the bound") {
  // Two SMs, one CTA each at a time: work 4, 1, 1, 1, 1 in that order. Slot A takes the 4,
  // slot B the four 1s one after another: both end at 4, the whole 8 done at the bound's best.
  LaunchGrid g = equal(5, 1);
  g.launch_order = {4, 1, 1, 1, 1};
  CHECK(launch_order_efficiency(g, 2) == doctest::Approx(1.0));
  // Lightest first (1, 1, 1, 1, 4): A and B take two 1s each; the 4 starts at 2 and ends at 6.
  g.launch_order = {1, 1, 1, 1, 4};
  CHECK(launch_order_efficiency(g, 2) == doctest::Approx(8.0 / (2 * 6)));
  // Two CTAs resident per SM: together they run at the SM's rate, one alone at sqrt(1/2) of it.
  g = equal(4, 2);
  g.launch_order = {1};  // one period, repeated to all 4 CTAs
  CHECK(launch_order_efficiency(g, 2) == doctest::Approx(1.0));
  g.ctas = 2;  // two CTAs, one on each SM (spread before any SM takes a second): each alone
  CHECK(launch_order_efficiency(g, 2) == doctest::Approx(std::sqrt(0.5)));
  g.ctas = 3;  // the third shares an SM: that SM ends at 2, the other at sqrt(2)
  CHECK(launch_order_efficiency(g, 2) == doctest::Approx(3.0 / (2 * 2)));
  g.ctas = 5;  // SM A: two, then its third alone; B: two: A ends at 2 + sqrt(2)
  CHECK(launch_order_efficiency(g, 2) == doctest::Approx(5.0 / (2 * (2 + std::sqrt(2.0)))));
  // Unequal CTAs sharing an SM: a 3 and a 1 together, each at half the SM's rate until the 1
  // ends at 2; the 3's remaining 2 alone at sqrt(1/2): it ends at 2 + 2 sqrt(2).
  g = equal(2, 2);
  g.launch_order = {3, 1};
  CHECK(launch_order_efficiency(g, 1) == doctest::Approx(4.0 / (2 + 2 * std::sqrt(2.0))));
  CHECK(co_resident_rate(1, 2) == doctest::Approx(std::sqrt(0.5)));
  CHECK(co_resident_rate(2, 2) == doctest::Approx(1.0));
  CHECK(co_resident_rate(1, 1) == doctest::Approx(1.0));
  CHECK(co_resident_rate(0, 2) == 0);
  CHECK(std::isnan(launch_order_efficiency(equal(4, 1), 2)));  // no order known

  // A causal forward grid: each head's query tiles, heaviest first (the kernels walk them from
  // the last); on fewer SMs the heavy CTAs spread better than on many.
  const KernelModel& v2 = find_kernel_model("flash-v2");
  const auto causal = bundled_grid(v2, workload(1, 8, 4096, 64, true, Pass::kForward));
  REQUIRE(causal);
  REQUIRE(causal->launch_order.size() == 32);  // 4096 / 128 query tiles of one head
  CHECK(causal->launch_order.front() == 64);   // the last query tile: 4096 / 64 key tiles
  CHECK(causal->launch_order.back() == 2);     // the first: its 128 rows' two key tiles
  const double many = launch_order_efficiency(*causal, 132);
  const double few = launch_order_efficiency(*causal, 40);
  CHECK(tail_effect(*causal, 132).efficiency == doctest::Approx(1.0));  // the bound: no loss
  CHECK(many < 0.65);
  CHECK(few > many + 0.2);
  // Equal CTAs: one period of one.
  CHECK(bundled_grid(v2, workload(1, 8, 4096, 64, false, Pass::kForward))->launch_order ==
        std::vector<double>{1.0});
}

TEST_CASE("analysis: a grid below one wave is tail-bound, the roof scaled by its busy SMs") {
  Row row;
  row.kernel = "flash-v3";
  row.workload = workload(1, 4, 1024, 128, false, Pass::kForward);  // 32 CTAs on 132 SMs
  row.prediction = predict(find_kernel_model("flash-v3"), row.workload, spec("h200"));
  const RowAnalysis a = analyze(row, spec("h200"));
  REQUIRE(a.tail);
  CHECK(a.tail->efficiency == doctest::Approx(32.0 / 132));
  CHECK(a.tail_bound);
  CHECK(a.binding == "tail");
  CHECK(a.regime == "tail-bound: 32 CTAs on 132 SMs, 24% busy");
  CHECK(a.tail_roof_flops_per_second == doctest::Approx(a.peak_flops_per_second * 32 / 132));
  CHECK(a.attainable_flops_per_second == doctest::Approx(a.tail_roof_flops_per_second));
  // Untimed: the model's time is the tail floor.
  CHECK(a.time_seconds == doctest::Approx(a.flops / a.tail_roof_flops_per_second));

  // A full grid keeps its compute ceiling's name; the bound still counts its last wave.
  row.workload = workload(4, 16, 8192, 128, false, Pass::kForward);  // 4096 CTAs: 31.03 waves
  row.prediction = predict(find_kernel_model("flash-v3"), row.workload, spec("h200"));
  const RowAnalysis big = analyze(row, spec("h200"));
  REQUIRE(big.tail);
  CHECK_FALSE(big.tail_bound);
  CHECK(big.tail->efficiency == doctest::Approx(4096.0 / (32 * 132)));
  CHECK(big.regime == "compute-bound (tensor FP16 (wgmma))");
}

TEST_CASE("analysis: a profiled launch's tail comes from its grid and resources") {
  Row row;
  row.kernel = "gemm";
  row.spec_key = "h200-sxm";
  KernelLaunch launch;
  launch.grid = {2, 33, 1};  // 66 CTAs
  launch.block = {384, 1, 1};
  launch.registers_per_thread = 168;
  launch.dynamic_shared_bytes = 200 * 1024;
  row.launch = launch;
  row.counters[quantity::kTensorWgmma] = 1e12;
  Timing timing;
  timing.samples_seconds = {0.004};
  row.timing = timing;
  const RowAnalysis a = analyze(row, spec("h200"));
  REQUIRE(a.tail);
  CHECK(a.tail->ctas == 66);
  CHECK(a.tail->ctas_per_sm == 1);
  CHECK(a.tail->waves == 1);
  CHECK(a.tail_bound);
  // A graph launch has no grid.
  launch.graph = true;
  row.launch = launch;
  CHECK_FALSE(analyze(row, spec("h200")).tail);
}
