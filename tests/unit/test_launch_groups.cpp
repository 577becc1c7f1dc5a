// Two `profile` reports compared by group of launches (lib/core/compare/launch_groups.hpp): the
// groups, and the verdicts on launch jitter and on a real slowdown.
#include <doctest/doctest.h>

#include <cmath>

#include "lib/core/compare/compare.hpp"
#include "lib/core/compare/launch_groups.hpp"
#include "lib/core/domain/metric_catalog.hpp"
#include "tests/unit/helpers.hpp"

using namespace roofline;

namespace {

// A program that launches a GEMM 8 times (two shapes of K: 20 and 60 µs), a 1.5 µs elementwise
// kernel 12 times and a reduction once, each launch scaled by `scale` and jittered by `jitter`
// (its k-th launch by +jitter·(-1)^k).
Report program(double scale, double jitter) {
  Report report;
  report.context.command = "profile";
  DeviceInfo device;
  device.name = "NVIDIA H200";
  report.context.device = device;
  report.specs = {shipped_spec("h200")};
  int k = 0;
  auto add = [&](const std::string& kernel, std::array<int, 3> grid, double seconds) {
    const double t = seconds * scale * (1 + ((k % 2) ? jitter : -jitter));
    Row row = profiled_row(kernel, grid, {128, 1, 1},
                           {{quantity::kDramRead, 1e6}, {quantity::kSmClock, 1.98e9}}, t);
    row.launch->index = k++;
    report.rows.push_back(row);
  };
  for (int i = 0; i < 8; ++i) {
    add("gemm", {132, 1, 1}, i % 2 ? 60e-6 : 20e-6);
    add("elementwise", {1024, 1, 1}, 1.5e-6);
    if (i % 2) add("elementwise", {1024, 1, 1}, 1.5e-6);
  }
  add("reduce", {64, 1, 1}, 10e-6);
  return report;
}

const RowComparison& row_of(const Comparison& c, const std::string& kernel) {
  for (const RowComparison& row : c.rows)
    if (row.kernel_base == kernel) return row;
  FAIL("no row of " << kernel);
  return c.rows.front();
}

}  // namespace

TEST_CASE("launch groups: one row per kernel, grid and block, its launches its samples") {
  const Report report = program(1, 0);
  REQUIRE(is_launch_report(report));
  const Report groups = group_launches(report);
  REQUIRE(groups.rows.size() == 3);
  CHECK(groups.rows[0].kernel == "gemm");  // in the order each group first ran
  CHECK(groups.rows[2].kernel == "reduce");
  const Row& elementwise = groups.rows[1];
  REQUIRE(elementwise.timing);
  CHECK(elementwise.timing->samples_seconds.size() == 12);
  CHECK(elementwise.timing->rounds == 12);
  CHECK(elementwise.counters.at(quantity::kDramRead) == doctest::Approx(1e6));  // per launch
  CHECK(elementwise.counters.at(quantity::kSmClock) == doctest::Approx(1.98e9));
  CHECK(launch_group_label(elementwise) == "grid 1024x1x1 block 128x1x1, 12 launches");
  CHECK(launch_group_label(groups.rows[2]) == "grid 64x1x1 block 128x1x1, 1 launch");
  // A report of the bundled kernels is not one.
  Report run = report;
  run.rows[0].launch.reset();
  CHECK_FALSE(is_launch_report(run));
}

TEST_CASE("launch groups: launch jitter of unchanged code is `same`, a 10% slower program is not") {
  const Report base = program(1, 0.02);
  // Unchanged code, another process: each launch 2% the other way.
  Comparison c = compare_reports(base, program(1, -0.02), CompareOptions{}, "a.json", "b.json");
  CHECK(c.exit_code() == 0);
  CHECK(c.count(Verdict::kSlower) == 0);
  CHECK(c.count(Verdict::kFaster) == 0);
  CHECK(row_of(c, "gemm").point == "grid 132x1x1 block 128x1x1, 8 launches");
  // Launches of one group differ threefold (two K): paired launch by launch, that is no noise.
  c = compare_reports(base, program(1.10, 0.02), CompareOptions{}, "a.json", "b.json");
  CHECK(row_of(c, "gemm").verdict == Verdict::kSlower);
  CHECK(row_of(c, "gemm").time->relative_change == doctest::Approx(0.10).epsilon(0.01));
  // 1.5 µs launches: 0.25 µs a launch is 17%; over 12 launches 10% is still within the noise,
  // and the row says how large a change it could have seen.
  CHECK(row_of(c, "elementwise").verdict == Verdict::kAmbiguous);
  CHECK(row_of(c, "elementwise").time->detectable_change > 0.10);
  // One launch of 10 µs: 10% is within one launch's noise between processes.
  CHECK(row_of(c, "reduce").verdict != Verdict::kSlower);
  CHECK(c.exit_code() == 1);
  // The same reports compared launch by launch (the chart's arrows): one row per launch.
  CompareOptions apart;
  apart.group_launches = false;
  CHECK(compare_reports(base, program(1, -0.02), apart, "a.json", "b.json").rows.size() ==
        base.rows.size());
}
