// compare: the statistics, the verdict rules, the matching, the refusals (exact text) and the
// command line's exit codes, on the recorded reports in tests/data/reports (see README.md there).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "app/cli.hpp"
#include "lib/core/base/errors.hpp"
#include "lib/core/base/text.hpp"
#include "lib/core/compare/compare.hpp"
#include "lib/core/compare/compare_writers.hpp"
#include "lib/core/model/model.hpp"
#include "lib/core/report/report_read.hpp"
#include "lib/core/writers/report_writers.hpp"
#include "tests/unit/helpers.hpp"

using namespace roofline;

namespace {

const std::string kReports = std::string(ROOFLINE_TEST_DATA_DIR) + "/reports/";

std::string fixture(const std::string& name) {
  return kReports + name;
}

const GpuSpec& h100() {
  static const GpuSpec spec =
      load_gpu_spec_file(std::string(ROOFLINE_TEST_SPECS_DIR) + "/h100-sxm5.json");
  return spec;
}

// `base_seconds` × each factor: samples around a median.
std::vector<double> samples(double base_seconds, const std::vector<double>& factors) {
  std::vector<double> out;
  for (double f : factors) out.push_back(base_seconds * f);
  return out;
}

Row make_row(const std::string& kernel, int seq_len, std::vector<double> times,
             std::map<std::string, double> counters = {}) {
  Row row;
  row.kernel = kernel;
  row.workload.seq_len = seq_len;
  row.spec_key = h100().key;
  row.prediction =
      predict(find_kernel_model(kernel == "custom" ? "flash-v2" : kernel), row.workload);
  Timing timing;
  timing.samples_seconds = std::move(times);
  timing.sm_clock_before_mhz = 1980;
  timing.sm_clock_after_mhz = 1965;
  row.timing = timing;
  row.counters = std::move(counters);
  return row;
}

Report make_report(std::vector<Row> rows, const std::string& device = "NVIDIA H100 80GB HBM3") {
  Report report;
  report.context.command = "run";
  DeviceInfo info;
  info.name = device;
  report.context.device = info;
  report.specs = {h100()};
  report.rows = std::move(rows);
  return report;
}

const std::vector<double> kTight = {0.998, 0.999, 1.0, 1.001, 1.002};
const std::vector<double> kTight15 = {0.996, 0.997, 0.998, 0.998, 0.999, 0.999, 1.0,  1.0,
                                      1.0,   1.001, 1.001, 1.002, 1.002, 1.003, 1.004};

Comparison compare_one(const Row& base, const Row& head, CompareOptions options = {}) {
  return compare_reports(make_report({base}), make_report({head}), options, "base.json",
                         "head.json");
}

const RowComparison& find_row(const Comparison& c, const std::string& kernel, int seq_len,
                              bool causal) {
  for (const RowComparison& row : c.rows)
    if (row.kernel_head == kernel && row.workload.seq_len == seq_len &&
        row.workload.causal == causal)
      return row;
  FAIL("no row " << kernel << " N" << seq_len);
  throw std::logic_error("unreachable");
}

}  // namespace

// ---- verdicts ----

namespace {

// `rounds` rounds of samples: round k's samples are base × round_factors[k] × each of `within`.
std::vector<double> rounds_of(double base_seconds, const std::vector<double>& round_factors,
                              const std::vector<double>& within = {0.999, 1.0, 1.0, 1.001}) {
  std::vector<double> out;
  for (double r : round_factors)
    for (double w : within) out.push_back(base_seconds * r * w);
  return out;
}

Row timed_row(double base_seconds, const std::vector<double>& round_factors,
              std::map<std::string, double> counters = {}) {
  Row row = make_row("flash-v2", 4096, rounds_of(base_seconds, round_factors), std::move(counters));
  row.timing->rounds = static_cast<int>(round_factors.size());
  return row;
}

const std::vector<double> kSteady = {0.998, 1.001, 1.0, 0.999, 1.002};
const std::vector<double> kDrifting = {0.90, 1.08, 1.0, 0.94, 1.10};

}  // namespace

TEST_CASE("compare: time verdicts on round medians need both the threshold and the noise") {
  const double t = 100e-6;
  SUBCASE("10% slower, steady rounds: slower") {
    const Comparison c = compare_one(timed_row(t, kSteady), timed_row(1.1 * t, kSteady));
    REQUIRE(c.rows.size() == 1);
    const RowComparison& row = c.rows[0];
    CHECK(row.verdict == Verdict::kSlower);
    CHECK(row.regressed);
    CHECK(row.time->base.rounds == 5);
    CHECK(row.time->head.samples == 20);
    CHECK(row.time->relative_change == doctest::Approx(0.1));
    CHECK(row.time->p_value < 1e-6);
    CHECK(c.warnings.empty());
    CHECK(c.exit_code() == 1);
  }
  SUBCASE("10% faster: faster, exit 0") {
    const Comparison c = compare_one(timed_row(t, kSteady), timed_row(0.9 * t, kSteady));
    CHECK(c.rows[0].verdict == Verdict::kFaster);
    CHECK(c.exit_code() == 0);
  }
  SUBCASE("rounds that drift by ±10%: +8% is within the noise") {
    const Comparison c = compare_one(timed_row(t, kDrifting), timed_row(1.08 * t, kDrifting));
    CHECK(c.rows[0].verdict == Verdict::kAmbiguous);
    CHECK(c.rows[0].time->relative_change == doctest::Approx(0.08));
    CHECK(c.rows[0].time->note.rfind("+8.0% exceeds the 4% threshold but not the noise (±", 0) ==
          0);
    CHECK_FALSE(c.rows[0].regressed);
    CHECK(c.exit_code() == 0);
  }
  SUBCASE("a real change below the threshold is the same, with a note") {
    CompareOptions options;
    options.noise.process_noise = 0;
    const Comparison c = compare_one(timed_row(t, kSteady), timed_row(1.03 * t, kSteady), options);
    CHECK(c.rows[0].verdict == Verdict::kSame);
    CHECK(c.rows[0].time->note == "a real change of +3.0% (p < 0.001), below the 4% threshold");
    CHECK(c.exit_code() == 0);
  }
  SUBCASE("the process noise turns an unseen drift into noise") {
    CompareOptions options;
    options.noise.process_noise = 0.05;
    const Comparison c = compare_one(timed_row(t, kSteady), timed_row(1.1 * t, kSteady), options);
    CHECK(c.rows[0].verdict == Verdict::kAmbiguous);
  }
  SUBCASE("no change: same, p = 1") {
    const Comparison c = compare_one(timed_row(t, kSteady), timed_row(t, kSteady));
    CHECK(c.rows[0].verdict == Verdict::kSame);
    CHECK(c.rows[0].time->p_value == 1.0);
    CHECK(c.rows[0].time->note.empty());
  }
  SUBCASE("detectable change: the threshold plus the power's share of the noise") {
    // Identical rounds: no between-round variance, so the noise is the process noise of both
    // reports, se = sqrt(2) · 0.5%, with infinite degrees of freedom.
    const std::vector<double> flat(5, 1.0);
    const Comparison c = compare_one(timed_row(t, flat), timed_row(t, flat));
    CHECK(c.rows[0].time->standard_error == doctest::Approx(std::sqrt(2.0) * 0.005));
    CHECK(std::isinf(c.rows[0].time->df));
    // exp(log(1.04) + z(0.8) · se) − 1
    CHECK(c.rows[0].time->detectable_change == doctest::Approx(0.046208).epsilon(1e-4));
    CHECK(c.detectable_count(0.05) == 1);
    CHECK(c.detectable_count(0.04) == 0);
    CHECK(render_compare_table(c).find(
              "this pair could detect a change of 5% or more on 1 of 1 rows (median 4.6%, "
              "largest 4.6%; α 0.05, power 80%)") != std::string::npos);
  }
  SUBCASE("reports timed in one round fall back to their samples, with a warning") {
    const Comparison c = compare_one(make_row("flash-v2", 4096, rounds_of(t, kSteady)),
                                     make_row("flash-v2", 4096, rounds_of(1.1 * t, kSteady)));
    CHECK(c.rows[0].time->base.rounds == 0);
    CHECK(c.rows[0].verdict == Verdict::kSlower);
    CHECK(c.warnings.empty());
    REQUIRE(c.notes.size() == 2);
    CHECK(c.notes[0] ==
          "base.json was timed in one round: its samples show within-run noise only (run with "
          "--rounds 2 or more)");
  }
}

TEST_CASE("compare: counted bytes and FLOPs against the tolerance and both reports' noise") {
  const double t = 100e-6;
  const std::map<std::string, double> base_counters = {
      {"dram_read_bytes", 3e8},          {"dram_write_bytes", 1e6}, {"l2_bytes", 2e9},
      {"tensor_mma_sync_flops", 3.4e10}, {"tensor_wgmma_flops", 0}, {"fp32_flops", 6e8}};
  auto with = [&](std::map<std::string, double> changes) {
    std::map<std::string, double> out = base_counters;
    for (const auto& [key, value] : changes) out[key] = value;
    return out;
  };
  CompareOptions no_floors;
  no_floors.noise.cache_floor = 0;
  no_floors.noise.cache_floor_bytes = 0;
  auto run = [&](std::map<std::string, double> head, CompareOptions options) {
    return compare_one(timed_row(t, kSteady, base_counters), timed_row(t, kSteady, head), options);
  };
  auto change = [](const RowComparison& row, const std::string& id) -> const QuantityChange& {
    for (const QuantityChange& q : row.quantities)
      if (q.id == id) return q;
    FAIL("no quantity " << id);
    throw std::logic_error("unreachable");
  };

  SUBCASE("within the tolerance: no change") {
    const Comparison c = run(with({{"dram_read_bytes", 3.015e8}}), no_floors);
    const QuantityChange& dram = change(c.rows[0], "dram_read_bytes");
    CHECK(dram.base == 3e8);
    CHECK(dram.relative_change == doctest::Approx(0.005));
    CHECK(dram.margin == doctest::Approx(0.01));
    CHECK_FALSE(dram.changed);
    CHECK(c.exit_code() == 0);
  }
  SUBCASE("more DRAM-read bytes: a regression even when time is the same") {
    const Comparison c = run(with({{"dram_read_bytes", 3.3e8}}), no_floors);
    const RowComparison& row = c.rows[0];
    CHECK(row.verdict == Verdict::kSame);
    CHECK(change(row, "dram_read_bytes").increased);
    CHECK(row.more_work);
    CHECK(row.regressed);
    CHECK(c.exit_code() == 1);
    CHECK(c.more_work_count() == 1);
    CHECK(render_compare_table(c).find("DRAM-read bytes +10.0%") != std::string::npos);
  }
  SUBCASE("the cache floors widen the margin of cache-dependent bytes") {
    CompareOptions options;
    options.noise.cache_floor = 0.02;
    options.noise.cache_floor_bytes = 3e6;  // 1% of the base's DRAM reads, per side
    const Comparison c = run(with({{"dram_read_bytes", 3.2e8}}), options);
    CHECK(change(c.rows[0], "dram_read_bytes").margin == doctest::Approx(0.01 + 0.04 + 0.02));
    CHECK_FALSE(change(c.rows[0], "dram_read_bytes").increased);
    CHECK(run(with({{"dram_read_bytes", 3.3e8}}), options).exit_code() == 1);
  }
  SUBCASE("each report's own spread widens the margin") {
    Row base = timed_row(t, kSteady, base_counters);
    base.counter_samples["l2_bytes"] = {1.96e9, 2e9, 2.04e9};  // spread 4%
    Row head = timed_row(t, kSteady, with({{"l2_bytes", 2.16e9}}));
    head.counter_samples["l2_bytes"] = {2.16e9, 2.16e9, 2.16e9};
    const Comparison c = compare_one(base, head, no_floors);
    const QuantityChange& l2 = change(c.rows[0], "l2_bytes");
    CHECK(l2.base_counts == 3);
    CHECK(l2.base_spread == doctest::Approx(0.04));
    CHECK(l2.head_spread == 0);
    CHECK(l2.margin == doctest::Approx(0.05));
    CHECK(l2.increased);  // +8% > 5%
    head.counters["l2_bytes"] = 2.08e9;
    head.counter_samples["l2_bytes"] = {2.08e9, 2.08e9, 2.08e9};
    CHECK_FALSE(change(compare_one(base, head, no_floors).rows[0], "l2_bytes").increased);
  }
  SUBCASE("DRAM writes depend on L2 residency: listed, never gated") {
    const Comparison c = run(with({{"dram_write_bytes", 30e6}}), no_floors);
    const QuantityChange& writes = change(c.rows[0], "dram_write_bytes");
    CHECK_FALSE(writes.gated);
    CHECK(writes.changed);
    CHECK_FALSE(writes.increased);
    CHECK(c.exit_code() == 0);
  }
  SUBCASE("a wider tolerance accepts more") {
    CompareOptions options = no_floors;
    options.tolerance = 0.2;
    CHECK(run(with({{"dram_read_bytes", 3.3e8}}), options).exit_code() == 0);
  }
  SUBCASE("fewer bytes: listed, not a regression") {
    const Comparison c = run(with({{"l2_bytes", 1e9}}), no_floors);
    CHECK(change(c.rows[0], "l2_bytes").changed);
    CHECK_FALSE(change(c.rows[0], "l2_bytes").increased);
    CHECK(c.exit_code() == 0);
  }
  SUBCASE("FLOPs on a pipe the base counted none on: a note, not a regression") {
    std::map<std::string, double> base = base_counters;
    base["tensor_mma_sync_flops"] = 0;
    const Comparison c =
        compare_one(timed_row(t, kSteady, base), timed_row(t, kSteady, base_counters), no_floors);
    CHECK(std::isinf(change(c.rows[0], "tensor_flops").relative_change));
    CHECK_FALSE(c.rows[0].more_work);
    CHECK(c.exit_code() == 0);
    CHECK(c.rows[0].notes.at(0) ==
          "tensor FLOPs new in head (none in base): work on another pipe, not a regression by "
          "itself");
    CHECK(render_compare_table(c).find("tensor FLOPs new") != std::string::npos);
  }
  SUBCASE("FLOPs moving between pipes at the same total: a note") {
    const Comparison c =
        run(with({{"fp32_flops", 1.2e9}, {"tensor_mma_sync_flops", 3.34e10}}), no_floors);
    CHECK(change(c.rows[0], "fp32_flops").changed);
    CHECK_FALSE(c.rows[0].more_work);
    CHECK(c.rows[0].notes.at(0) ==
          "FP32 FLOPs +100.0%, but the counted FLOPs of all pipes 0.0%: work moved between pipes");
  }
  SUBCASE("more FLOPs in total: a regression") {
    CHECK(run(with({{"fp32_flops", 8e8}}), no_floors).exit_code() == 0);    // +0.6% of all pipes
    CHECK(run(with({{"fp32_flops", 1.2e9}}), no_floors).exit_code() == 1);  // +1.7%
    CHECK(run(with({{"tensor_mma_sync_flops", 3.6e10}}), no_floors).exit_code() == 1);
  }
  SUBCASE("tensor work moving from mma.sync to wgmma is a note, not a regression") {
    const Comparison c =
        run(with({{"tensor_mma_sync_flops", 0}, {"tensor_wgmma_flops", 3.4e10}}), no_floors);
    CHECK(change(c.rows[0], "tensor_flops").relative_change == 0);
    CHECK(c.rows[0].notes ==
          std::vector<std::string>{"tensor FLOPs on wgmma: 0% → 100% (the rest mma.sync)"});
    CHECK(c.exit_code() == 0);
  }
  SUBCASE("counters on one side only: nothing compared, said so") {
    const Comparison c = run({}, no_floors);
    CHECK(c.rows[0].quantities.empty());
    CHECK(c.rows[0].notes ==
          std::vector<std::string>{"no counters in head: bytes and FLOPs not compared"});
  }
}

TEST_CASE("compare: rows that stopped working fail, rows the base could not judge are skipped") {
  const double t = 100e-6;
  Row ok = make_row("flash-v2", 4096, samples(t, kTight));
  Row broken = make_row("flash-v2", 4096, {});
  broken.timing.reset();
  broken.status = RowStatus::kIncorrect;
  broken.message = "relative L2 error 0.31 > 2 × FP16's 0.0012\nsecond line";
  const Comparison failed = compare_one(ok, broken);
  CHECK(failed.rows[0].verdict == Verdict::kFailed);
  CHECK(failed.rows[0].notes ==
        std::vector<std::string>{"head: incorrect: relative L2 error 0.31 > 2 × FP16's 0.0012"});
  CHECK(failed.exit_code() == 1);
  const Comparison skipped = compare_one(broken, ok);
  CHECK(skipped.rows[0].verdict == Verdict::kNotCompared);
  CHECK(skipped.exit_code() == 0);
}

TEST_CASE("compare: matching by kernel, workload and spec, leftovers listed") {
  const double t = 100e-6;
  Report base = make_report({make_row("flash-v1", 1024, samples(t, kTight)),
                             make_row("flash-v2", 1024, samples(t, kTight)),
                             make_row("flash-v2", 2048, samples(t, kTight))});
  Report head = make_report({make_row("flash-v2", 2048, samples(t, kTight)),
                             make_row("flash-v2", 1024, samples(t, kTight)),
                             make_row("flash-v2", 8192, samples(t, kTight))});
  const Comparison c = compare_reports(base, head, {}, "b.json", "h.json");
  REQUIRE(c.rows.size() == 2);
  CHECK(c.rows[0].workload.seq_len == 1024);  // base order
  CHECK(c.rows[0].head_index == 1);
  CHECK(c.rows[1].workload.seq_len == 2048);
  REQUIRE(c.only_base.size() == 1);
  CHECK(c.only_base[0].kernel == "flash-v1");
  REQUIRE(c.only_head.size() == 1);
  CHECK(c.only_head[0].workload.seq_len == 8192);
  const std::string table = render_compare_table(c);
  CHECK(table.find("only in base: flash-v1 B1 H8 N1024 d64 full fwd [h100-sxm5]\n") !=
        std::string::npos);
  CHECK(table.find("only in head: flash-v2 B1 H8 N8192 d64 full fwd [h100-sxm5]\n") !=
        std::string::npos);

  SUBCASE("same device judged against another spec: matched by kernel and workload") {
    Report other = head;
    GpuSpec renamed = h100();
    renamed.key = "h100-custom";
    other.specs = {renamed};
    for (Row& row : other.rows) row.spec_key = renamed.key;
    const Comparison d = compare_reports(base, other, {}, "b.json", "h.json");
    CHECK(d.rows.size() == 2);
    CHECK(d.rows[0].spec_head == "h100-custom");
  }
  SUBCASE("two kernels of one report") {
    CompareOptions options;
    options.kernel_base = "flash-v1";
    options.kernel_head = "flash-v2";
    const Comparison d = compare_reports(base, base, options, "b.json", "b.json");
    REQUIRE(d.rows.size() == 1);
    CHECK(d.rows[0].kernel_base == "flash-v1");
    CHECK(d.rows[0].kernel_head == "flash-v2");
    CHECK(d.only_head.size() == 1);  // flash-v2 N2048 has no flash-v1 partner
    options.kernel_head = "flash-v9";
    CHECK_THROWS_WITH_AS(compare_reports(base, base, options, "b.json", "b.json"),
                         "b.json: no rows of kernel \"flash-v9\" (--kernel-head): did you mean "
                         "flash-v1 or flash-v2? (the report has: flash-v1, flash-v2)",
                         InputError);
  }
}

TEST_CASE("compare: refuses incompatible reports in one line") {
  const double t = 100e-6;
  const Report h100_report = make_report({make_row("flash-v2", 1024, samples(t, kTight))});
  SUBCASE("no rows") {
    CHECK_THROWS_WITH_AS(compare_reports(h100_report, make_report({}), {}, "b.json", "h.json"),
                         "h.json: the report has no rows", InputError);
  }
  SUBCASE("another device, unless allowed") {
    const Report a100 =
        make_report({make_row("flash-v2", 1024, samples(t, kTight))}, "NVIDIA A100-SXM4-80GB");
    CHECK_THROWS_WITH_AS(compare_reports(h100_report, a100, {}, "b.json", "h.json"),
                         "devices differ: b.json was measured on NVIDIA H100 80GB HBM3, h.json on "
                         "NVIDIA A100-SXM4-80GB; pass --allow-mismatch to compare anyway",
                         InputError);
    CompareOptions allow;
    allow.allow_mismatch = true;
    const Comparison c = compare_reports(h100_report, a100, allow, "b.json", "h.json");
    CHECK(c.warnings == std::vector<std::string>{
                            "compared despite: devices differ: b.json was measured on NVIDIA H100 "
                            "80GB HBM3, h.json on NVIDIA A100-SXM4-80GB"});
    CHECK(c.rows.size() == 1);
  }
  SUBCASE("SM clocks more than 10% apart") {
    Row slow = make_row("flash-v2", 1024, samples(t, kTight));
    slow.counters["sm_clock_hz"] = 1.6e9;
    CHECK_THROWS_WITH_AS(compare_reports(h100_report, make_report({slow}), {}, "b.json", "h.json"),
                         "SM clocks differ: median 1972 MHz in b.json, 1600 MHz in h.json (-18.9%, "
                         "more than 10%); pass --allow-mismatch to compare anyway",
                         InputError);
    Row close = slow;
    close.counters["sm_clock_hz"] = 1.8e9;  // -8.7%: fine
    CHECK_NOTHROW(compare_reports(h100_report, make_report({close}), {}, "b.json", "h.json"));
  }
  SUBCASE("a row without samples") {
    Row untimed = make_row("flash-v2", 1024, {});
    CHECK_THROWS_WITH_AS(
        compare_reports(h100_report, make_report({untimed}), {}, "b.json", "h.json"),
        "h.json: flash-v2 B1 H8 N1024 d64 full fwd has no timing samples "
        "(compare needs reports written by `cuflash-roofline run`)",
        InputError);
  }
}

TEST_CASE("compare: a significantly faster row that counts more work is faster, the work a note") {
  const double t = 100e-6;
  const std::map<std::string, double> base_counters = {
      {"dram_read_bytes", 3e8}, {"l2_bytes", 2e9}, {"tensor_mma_sync_flops", 3.4e10}};
  // A kernel swap: half the time, 2% more tensor FLOPs (whole tiles on the padding).
  std::map<std::string, double> more = base_counters;
  more["tensor_mma_sync_flops"] = 3.468e10;
  CompareOptions options;
  options.noise.cache_floor = 0;
  options.noise.cache_floor_bytes = 0;
  const Row base = timed_row(t, kSteady, base_counters);

  SUBCASE("2x faster with 2% more FLOPs: faster, not a regression") {
    const Comparison c = compare_one(base, timed_row(0.5 * t, kSteady, more), options);
    const RowComparison& row = c.rows.at(0);
    CHECK(row.verdict == Verdict::kFaster);
    CHECK(row.more_work);
    CHECK_FALSE(row.regressed);
    CHECK(c.exit_code() == 0);
    CHECK(c.more_work_count() == 1);
    REQUIRE_FALSE(row.notes.empty());
    CHECK(row.notes.back() ==
          "more work (tensor FLOPs +2.0%) but significantly faster: not a regression "
          "(--fail-on-more-work makes it one)");
    const std::string table = render_compare_table(c);
    CHECK(table.find("faster !") == std::string::npos);
    CHECK(table.find("result: no regression (exit 0)") != std::string::npos);
    const std::string markdown = render_compare_markdown(c);
    CHECK(markdown.find("✅ no regression") != std::string::npos);
    CHECK(markdown.find("🟢 faster, more work") != std::string::npos);
    const auto j = nlohmann::json::parse(render_compare_json(c));
    CHECK(j["options"]["fail_on_more_work"] == false);
    CHECK(j["rows"][0]["verdict"] == "faster");
    CHECK(j["rows"][0]["more_work"] == true);
    CHECK(j["rows"][0]["regressed"] == false);
  }
  SUBCASE("--fail-on-more-work: the old rule, more work is a regression") {
    CompareOptions strict = options;
    strict.fail_on_more_work = true;
    const Comparison c = compare_one(base, timed_row(0.5 * t, kSteady, more), strict);
    CHECK(c.rows.at(0).verdict == Verdict::kFaster);
    CHECK(c.rows.at(0).regressed);
    CHECK(c.exit_code() == 1);
    CHECK(render_compare_markdown(c).find("🔴 faster, **more work**") != std::string::npos);
    CHECK(nlohmann::json::parse(render_compare_json(c))["options"]["fail_on_more_work"] == true);
  }
  SUBCASE("the same speed with more bytes stays a regression") {
    std::map<std::string, double> bytes = base_counters;
    bytes["dram_read_bytes"] = 3.3e8;
    const Comparison c = compare_one(base, timed_row(t, kSteady, bytes), options);
    CHECK(c.rows.at(0).verdict == Verdict::kSame);
    CHECK(c.rows.at(0).regressed);
    CHECK(c.exit_code() == 1);
  }
  SUBCASE("faster but not beyond the noise (ambiguous) with more work: a regression") {
    const Comparison c = compare_one(base, timed_row(0.9 * t, kDrifting, more), options);
    CHECK(c.rows.at(0).verdict == Verdict::kAmbiguous);
    CHECK(c.rows.at(0).regressed);
  }
  SUBCASE("the command line: --fail-on-more-work turns exit 0 into exit 1") {
    TempDir dir;
    Report b = make_report({base});
    Report h = make_report({timed_row(0.5 * t, kSteady, more)});
    for (Report* report : {&b, &h}) {  // what a report file must say of itself and its device
      DeviceInfo device = *report->context.device;
      report->context = make_context("run");
      device.compute_capability = "9.0";
      device.cc_major = 9;
      device.sm_count = 132;
      device.memory_bytes = 80LL << 30;
      device.l2_cache_bytes = 50LL << 20;
      device.chip = "GH100";
      device.driver_version = "560.35.03";
      device.runtime_version = "12.6";
      report->context.device = device;
    }
    write_text(dir.path / "base.json", render_json(b));
    write_text(dir.path / "head.json", render_json(h));
    const std::string bp = (dir.path / "base.json").string();
    const std::string hp = (dir.path / "head.json").string();
    const CliResult lenient = cli({"compare", bp, hp});
    CAPTURE(lenient.err);
    CHECK(lenient.code == 0);
    CHECK(cli({"compare", bp, hp, "--fail-on-more-work"}).code == 1);
  }
}

// ---- recorded reports ----

TEST_CASE("compare: recorded H100 reports, base against head") {
  const Report base = read_report_file(fixture("base.json"));
  const Report head = read_report_file(fixture("head.json"));
  const Comparison c = compare_reports(base, head, {}, "base.json", "head.json");
  CHECK(c.rows.size() == 24);
  CHECK(c.count(Verdict::kSlower) == 1);
  CHECK(c.count(Verdict::kFaster) == 2);
  CHECK(c.count(Verdict::kSame) == 20);
  CHECK(c.count(Verdict::kAmbiguous) == 1);
  CHECK(c.more_work_count() == 1);
  CHECK(c.exit_code() == 1);
  // The constructed reports were timed in one round: their samples stand in, with a note.
  CHECK(c.notes.size() == 2);
  CHECK(c.base_device == "NVIDIA H100 80GB HBM3");

  const RowComparison& slower = find_row(c, "flash-v2", 4096, true);
  CHECK(slower.verdict == Verdict::kSlower);
  CHECK(slower.time->relative_change == doctest::Approx(0.086).epsilon(0.05));

  const RowComparison& noisy = find_row(c, "flash-v2", 1024, false);
  CHECK(noisy.verdict == Verdict::kAmbiguous);
  CHECK(noisy.time->head.samples == 6);
  CHECK(noisy.time->note == "+5.2% exceeds the 4% threshold but not the noise (±2.7%, p = 0.111)");

  const RowComparison& small = find_row(c, "standard", 4096, false);
  CHECK(small.verdict == Verdict::kSame);
  CHECK(small.time->note == "a real change of +1.8% (p = 0.030), below the 4% threshold");

  const RowComparison& bytes = find_row(c, "flash-v1", 16384, true);
  CHECK(bytes.verdict == Verdict::kSame);
  CHECK(bytes.more_work);
  CHECK(bytes.regressed);
  CHECK(render_compare_table(c).find("DRAM-read bytes +16.0%") != std::string::npos);

  const Comparison improved = compare_reports(base, read_report_file(fixture("head_improved.json")),
                                              {}, "base.json", "head_improved.json");
  CHECK(improved.count(Verdict::kSlower) == 0);
  CHECK(improved.more_work_count() == 0);
  CHECK(improved.exit_code() == 0);
}
