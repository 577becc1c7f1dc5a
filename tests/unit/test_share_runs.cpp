// show --share-run: the rows of a report measured on a few SMs, matched to those measured on all
// of them (compare/share_runs.hpp).
#include <doctest/doctest.h>

#include "lib/core/base/errors.hpp"
#include "lib/core/compare/share_runs.hpp"
#include "lib/core/domain/metric_catalog.hpp"
#include "lib/core/model/model.hpp"
#include "tests/unit/helpers.hpp"

using namespace roofline;

namespace {

// Two standard rows (N 4096, 8192) measured on `sms` SMs of an H200 (0: all of them), each at
// `seconds` per launch, with DRAM bytes counted when `counted`.
Report measured_on(int sms, double seconds, bool counted) {
  Report report;
  report.context = make_context("run");
  report.context.device =
      DeviceInfo{"NVIDIA H200", "GH100", "9.0", 132, 150754820096, 62914560, "580.1", "13.0"};
  report.context.green_context_sms = sms;
  report.specs.push_back(shipped_registry().find("h200"));
  for (const int seq : {4096, 8192}) {
    Row row;
    row.kernel = "standard";
    row.workload.seq_len = seq;
    row.spec_key = "h200-sxm";
    row.prediction = predict(find_kernel_model("standard"), row.workload);
    row.timing = Timing{{seconds, seconds, seconds}, 1980, 1980};
    if (counted) row.counters = {{quantity::kDramRead, 4e8}, {quantity::kDramWrite, 2e8}};
    report.rows.push_back(row);
  }
  return report;
}

}  // namespace

TEST_CASE("share runs: each row gets its time and counted bytes on the few SMs") {
  const Report all = measured_on(0, 1e-3, true);
  SUBCASE("counted there") {
    const Report with = with_share_runs(all, measured_on(16, 3e-3, true), "few.json", "all.json");
    for (const Row& row : with.rows) {
      REQUIRE(row.share_run.has_value());
      CHECK(row.share_run->sms == 16);
      CHECK(row.share_run->seconds == doctest::Approx(3e-3));
      CHECK(row.share_run->bytes.at(MemoryLevel::kDram) == doctest::Approx(6e8));
      CHECK(row.share_run->source == "few.json");
    }
  }
  SUBCASE("a green context counts nothing: the time alone") {
    const Report with = with_share_runs(all, measured_on(16, 3e-3, false), "few.json", "all.json");
    REQUIRE(with.rows[0].share_run.has_value());
    CHECK(with.rows[0].share_run->bytes.count(MemoryLevel::kDram) == 0);
  }
  SUBCASE("only the rows that match") {
    Report few = measured_on(16, 3e-3, true);
    few.rows.pop_back();
    const Report with = with_share_runs(all, few, "few.json", "all.json");
    CHECK(with.rows[0].share_run.has_value());
    CHECK_FALSE(with.rows[1].share_run.has_value());
  }
}

TEST_CASE("share runs: a report that is not a run on fewer SMs of the same GPU is refused") {
  const Report all = measured_on(0, 1e-3, true);
  CHECK_THROWS_WITH_AS(
      with_share_runs(all, measured_on(0, 1e-3, true), "few.json", "all.json"),
      doctest::Contains("--share-run few.json: not measured on a share of the SMs"), InputError);
  Report other = measured_on(16, 3e-3, true);
  other.context.device->name = "NVIDIA H100 80GB HBM3";
  CHECK_THROWS_WITH_AS(with_share_runs(all, other, "few.json", "all.json"),
                       doctest::Contains("measured on NVIDIA H100 80GB HBM3, not on NVIDIA H200"),
                       InputError);
  CHECK_THROWS_WITH_AS(with_share_runs(measured_on(40, 1e-3, true), measured_on(16, 3e-3, true),
                                       "few.json", "all.json"),
                       doctest::Contains("all.json must be measured on all 132 and it on fewer"),
                       InputError);
  Report unmatched = measured_on(16, 3e-3, true);
  unmatched.rows.pop_back();
  unmatched.rows[0].workload.seq_len = 2048;
  CHECK_THROWS_WITH_AS(with_share_runs(all, unmatched, "few.json", "all.json"),
                       doctest::Contains("no timed row matches a row of all.json"), InputError);
}
