// Splitting sweeps: --shard I/N parsing, cost balancing, and the partition property (every point
// in exactly one shard) for N = 1..64.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "lib/core/base/errors.hpp"
#include "lib/core/domain/gpu_spec.hpp"
#include "lib/core/model/model.hpp"
#include "lib/core/verdict/partition.hpp"

using namespace roofline;

namespace {

// The seed sweep, fwd+bwd: 3 kernels × N 1k..16k × causal/full × 2 passes = 48 points, plus a
// second head size to make it less regular.
struct Point {
  std::string kernel;
  Workload workload;
};
std::vector<Point> sweep() {
  std::vector<Point> points;
  for (int head_dim : {64, 128})
    for (Pass pass : {Pass::kForward, Pass::kBackward})
      for (int n : {1024, 4096, 8192, 16384})
        for (bool causal : {true, false})
          for (const KernelModel& k : kernel_models()) {
            if (k.decode_only) continue;  // the seed sweep is prefill
            Workload w;
            w.seq_len = n;
            w.head_dim = head_dim;
            w.causal = causal;
            w.pass = pass;
            points.push_back({k.name, w});
          }
  return points;
}

SpecRegistry shipped() {
  SpecRegistry registry;
  registry.add_directory(ROOFLINE_TEST_SPECS_DIR);
  return registry;
}

std::vector<double> costs(const std::vector<Point>& points, const GpuSpec& spec) {
  std::vector<double> out;
  for (const Point& p : points) out.push_back(estimated_point_seconds(p.kernel, p.workload, spec));
  return out;
}

}  // namespace

TEST_CASE("partition: --shard I/N parses 0-based shards and refuses the rest") {
  CHECK(parse_shard("0/1").index == 0);
  CHECK(parse_shard("3/4").index == 3);
  CHECK(parse_shard("3/4").count == 4);
  CHECK(parse_shard("99999/100000").count == 100000);
  for (const char* bad : {"", "/", "1", "1/", "/4", "4/4", "5/4", "-1/4", "1/0", "0/0", "a/b",
                          "1/4/", " 1/4", "1/4 ", "+1/4", "0x1/4", "1/100001", "1.0/4"}) {
    CAPTURE(bad);
    CHECK_THROWS_AS(parse_shard(bad), InputError);
  }
  CHECK_THROWS_WITH(parse_shard("4/4"),
                    "--shard 4/4: I must be below N (shards are numbered from 0)");
}

TEST_CASE("partition: every point in exactly one shard, for N = 1..64, the same every time") {
  const SpecRegistry registry = shipped();
  const std::vector<Point> points = sweep();
  const std::vector<double> c = costs(points, registry.find(kShardCostSpec));
  const double total = std::accumulate(c.begin(), c.end(), 0.0);
  const double largest = *std::max_element(c.begin(), c.end());
  for (std::size_t n = 1; n <= 64; ++n) {
    CAPTURE(n);
    const std::vector<std::size_t> bins = balance_costs(c, n);
    REQUIRE(bins.size() == points.size());
    CHECK(bins == balance_costs(c, n));  // deterministic
    std::vector<int> seen(points.size(), 0);
    std::vector<double> load(n, 0.0);
    for (std::size_t shard = 0; shard < n; ++shard)
      for (std::size_t i = 0; i < points.size(); ++i)
        if (bins[i] == shard) {
          ++seen[i];
          load[shard] += c[i];
        }
    CHECK(std::all_of(seen.begin(), seen.end(), [](int s) { return s == 1; }));
    // Balanced: no shard above the mean by more than the costliest point.
    CHECK(*std::max_element(load.begin(), load.end()) <= total / n + largest + 1e-12);
  }
}

TEST_CASE("partition: two GPUs get about half of the seed sweep's estimated time each") {
  const SpecRegistry registry = shipped();
  std::vector<Point> points;
  for (const Point& p : sweep())
    if (p.workload.head_dim == 64) points.push_back(p);
  const std::vector<double> c = costs(points, registry.find("h200-sxm"));
  const std::vector<std::size_t> bins = balance_costs(c, 2);
  double load[2] = {0, 0};
  for (std::size_t i = 0; i < c.size(); ++i) load[bins[i]] += c[i];
  const double total = load[0] + load[1];
  CHECK(std::max(load[0], load[1]) / total < 0.52);
}

TEST_CASE("partition: costs follow the model and must be finite") {
  const SpecRegistry registry = shipped();
  const GpuSpec& h200 = registry.find("h200-sxm");
  Workload small, big;
  small.seq_len = 1024;
  big.seq_len = 16384;
  // 256× the score matrix: the launches (36: the defaults' warm-ups, repetitions and ranges)
  // take far more than 16× the time, far less than 1000×.
  const double ratio = (estimated_point_seconds("flash-v2", big, h200, 36) - kPointSetupSeconds) /
                       (estimated_point_seconds("flash-v2", small, h200, 36) - kPointSetupSeconds);
  CHECK(ratio > 16);
  CHECK(ratio < 300);
  // Each launch costs its share of the floor; a point costs its setup even when tiny.
  const double one = estimated_point_seconds("flash-v2", big, h200, 1);
  CHECK(estimated_point_seconds("flash-v2", big, h200, 11) - one ==
        doctest::Approx(10 * (one - kPointSetupSeconds)));
  Workload tiny;
  tiny.seq_len = 1;
  CHECK(estimated_point_seconds("standard", tiny, h200, 36) >= kPointSetupSeconds);
  // A family that reaches a smaller share of its floor costs more per floor second.
  CHECK(typical_share_of_floor("flash-v3") < typical_share_of_floor("standard"));
  // flash-v1 runs on CUDA cores: slower than flash-v2 on tensor cores at the same size.
  CHECK(estimated_point_seconds("flash-v1", big, h200) >
        estimated_point_seconds("flash-v2", big, h200));
  CHECK_THROWS_AS(balance_costs({1.0, -1.0}, 2), InputError);
  CHECK_THROWS_AS(balance_costs({1.0, std::nan("")}, 2), InputError);
  CHECK_THROWS_AS(balance_costs({1.0}, 0), InputError);
  CHECK(balance_costs({}, 3).empty());
  CHECK(balance_costs({5, 1, 1, 1, 1, 1}, 2) == std::vector<std::size_t>{0, 1, 1, 1, 1, 1});
}
