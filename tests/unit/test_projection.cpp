// Projection: counts measured on one GPU placed on another's roofs (analysis.hpp). Invariants
// for every pair of spec files, on the rows counted on the H200 (tests/data/reports).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "lib/core/domain/sm_share.hpp"
#include "lib/core/report/report_read.hpp"
#include "lib/core/verdict/analysis.hpp"

using namespace roofline;

namespace {

const std::filesystem::path kRecorded = ROOFLINE_COUNTED_REPORT;

SpecRegistry all_specs() {
  SpecRegistry registry;
  registry.add_directory(ROOFLINE_TEST_SPECS_DIR);
  return registry;
}

// The recorded rows as if measured on `measured` and judged against `target`.
Report projection(const Report& recorded, const GpuSpec& measured, const GpuSpec& target) {
  Report r = recorded;
  r.specs = {target, measured};
  r.context.projection = true;
  r.context.measured_spec = measured.key;
  for (Row& row : r.rows) row.spec_key = target.key;
  return r;
}

// The H200's spec with a DRAM share curve of three points.
GpuSpec h200_with_test_curve() {
  GpuSpec h200 = all_specs().find("h200");
  for (MemoryLevelSpec& level : h200.memory)
    if (level.level == MemoryLevel::kDram) {
      level.shares = {{16, 2400}, {48, 4500}, {132, 4600}};
      level.shares_source = "a test curve";
    }
  return h200;
}

bool at_most_one(double x) {
  return std::isnan(x) || x <= 1 + 1e-9;
}

}  // namespace

TEST_CASE("projection: no utilisation above 100% for any pair of spec files") {
  const Report recorded = read_report_file(kRecorded);
  const SpecRegistry registry = all_specs();
  int projected = 0;
  for (const GpuSpec& measured : registry.all())
    for (const GpuSpec& target : registry.all()) {
      if (measured.key == target.key) continue;
      const Report report = projection(recorded, measured, target);
      for (const Row& row : report.rows) {
        const RowAnalysis a = analyze(row, report);
        if (!a.has_verdict) continue;
        CAPTURE(measured.key + " -> " + target.key + ": " + row.kernel + " " +
                row.workload.label());
        CHECK(a.projected);
        CHECK(a.time_source == Source::kProjected);
        CHECK(at_most_one(a.compute_utilisation));
        CHECK(at_most_one(a.fraction_of_bound));
        for (const LevelAnalysis& level : a.levels) CHECK(at_most_one(level.bandwidth_utilisation));
        CHECK(a.projection_note.find("projected from " + measured.name) == 0);
        ++projected;
      }
    }
  CHECK(projected > 1000);
}

TEST_CASE("projection: H200 to H100 SXM, compute-bound rows scale by the pipes' peaks") {
  const Report recorded = read_report_file(kRecorded);
  const SpecRegistry registry = all_specs();
  const GpuSpec& h200 = registry.find("h200");
  const GpuSpec& h100 = registry.find("h100");
  const Report report = projection(recorded, h200, h100);
  int checked = 0;
  for (const Row& row : report.rows) {
    const RowAnalysis here = analyze(row, h200);
    const RowAnalysis there = analyze(row, report);
    if (!here.has_verdict || !here.compute_bound || !there.compute_bound) continue;
    if (!(here.fraction_of_bound <= 1)) continue;  // above the roof here: clamped to the bound
    CAPTURE(row.kernel + " " + row.workload.label());
    const double expected =
        here.flops_per_second * there.ceiling->peak_tflops / here.ceiling->peak_tflops;
    CHECK(there.flops_per_second == doctest::Approx(expected).epsilon(0.02));
    ++checked;
  }
  CHECK(checked > 40);
}

TEST_CASE("projection: a wgmma kernel on an A100 says which pipe it falls back to") {
  const Report recorded = read_report_file(kRecorded);
  const SpecRegistry registry = all_specs();
  const Report report = projection(recorded, registry.find("h200"), registry.find("a100"));
  bool seen = false;
  for (const Row& row : report.rows) {
    // cuBLAS runs wgmma where rows of S and P are multiples of 16 bytes (N % 8 == 0).
    if (row.kernel != "standard" || row.workload.seq_len % 8 != 0 || row.status != RowStatus::kOk)
      continue;
    const RowAnalysis a = analyze(row, report);
    CAPTURE(a.projection_note);
    CHECK(a.projection_note.find("has no wgmma: the work falls back to") != std::string::npos);
    seen = true;
  }
  CHECK(seen);
}

TEST_CASE("projection: onto a share of the SMs, a flash grid's launch order is carried over") {
  const Report recorded = read_report_file(kRecorded);
  const SpecRegistry registry = all_specs();
  const GpuSpec& h200 = registry.find("h200");
  int causal = 0, equal = 0, co_resident = 0;
  for (const int sms : {40, 72}) {
    const GpuSpec share = with_sm_count(h200, sms);
    const Report report = projection(recorded, h200, share);
    for (const Row& row : report.rows) {
      const RowAnalysis here = analyze(row, h200);
      const RowAnalysis a = analyze(row, report);
      if (!a.has_verdict) continue;
      CAPTURE(std::to_string(sms) + " SMs: " + row.kernel + " " + row.workload.label());
      CAPTURE(a.projection_note);
      CHECK(at_most_one(a.fraction_of_bound));
      CHECK(at_most_one(a.compute_utilisation));
      const bool order = a.projection_note.find("handed out in launch order") != std::string::npos;
      // Only a bundled flash grid, bound by compute here and there, has one.
      if (order) {
        CHECK(row.kernel.rfind("flash-", 0) == 0);
        CHECK((here.compute_bound || here.exp_bound));
        ++(row.workload.causal ? causal : equal);
        if (a.projection_note.find("resident per SM") != std::string::npos) ++co_resident;
        CHECK((a.projection_note.find("CTAs of unequal work") != std::string::npos) ==
              row.workload.causal);
      } else if (row.kernel.rfind("flash-", 0) == 0 && here.compute_bound &&
                 (a.compute_bound || a.exp_bound)) {
        FAIL_CHECK("a compute-bound flash row without its launch order");
      }
    }
  }
  CHECK(causal > 4);
  CHECK(equal > 4);
  CHECK(co_resident > 0);  // flash-v1 and flash-v2's forwards: two CTAs per SM
}

TEST_CASE("projection: a DRAM-bound row on a share of its GPU draws by its bytes in flight") {
  const Report recorded = read_report_file(kRecorded);
  const GpuSpec h200 = h200_with_test_curve();
  const GpuSpec share = with_sm_count(h200, 40);
  const Report report = projection(recorded, h200, share);
  int drawn = 0;
  for (const Row& row : report.rows) {
    const RowAnalysis here = analyze(row, h200);
    const RowAnalysis a = analyze(row, report);
    if (!a.has_verdict || here.binding != "DRAM") continue;
    CAPTURE(row.kernel + " " + row.workload.label());
    CAPTURE(a.projection_note);
    if (a.projection_note.find("the level's share curve") == std::string::npos) continue;
    const double gbps = here.dram()->achieved_bytes_per_second / 1e9;
    const double expected = row.timing->median_seconds() * gbps /
                            share_drawn_gbps(*h200.level(MemoryLevel::kDram), 132, gbps, 40);
    CHECK(a.time_seconds == doctest::Approx(std::max(expected, a.time_floor_seconds)));
    CHECK(a.time_seconds >= here.time_seconds);  // fewer SMs: never faster
    // Past the curve's knee the time is the longest it may take, and the note says so.
    const bool past = past_share_knee(*h200.level(MemoryLevel::kDram), gbps);
    CHECK(a.share_time_at_most == past);
    CHECK((a.projection_note.find("at most this long") != std::string::npos) == past);
    CHECK(at_most_one(a.fraction_of_bound));
    ++drawn;
  }
  CHECK(drawn > 0);
}

TEST_CASE("projection: a share run gives a DRAM-bound row's bytes in flight") {
  const Report recorded = read_report_file(kRecorded);
  const GpuSpec h200 = h200_with_test_curve();
  const MemoryLevelSpec& dram = *h200.level(MemoryLevel::kDram);
  const GpuSpec share = with_sm_count(h200, 40);
  Report report = projection(recorded, h200, share);
  int read_from_share = 0;
  for (Row& row : report.rows) {
    const RowAnalysis here = analyze(row, h200);
    if (!here.has_verdict || here.binding != "DRAM") continue;
    CAPTURE(row.kernel + " " + row.workload.label());
    const double drawn = here.dram()->achieved_bytes_per_second / 1e9;
    const double seconds = row.timing->median_seconds();
    // On 8 SMs at a quarter of its rate on all of them (its bytes counted there, 10% fewer).
    const double bytes_there = 0.9 * here.dram()->bytes;
    row.share_run = ShareRun{
        8, bytes_there / (drawn / 4 * 1e9), {{MemoryLevel::kDram, bytes_there}}, "few.json"};
    RowAnalysis a = analyze(row, report);
    CAPTURE(a.projection_note);
    if (a.binding != "DRAM") continue;
    // Fitted through both times where the fit has a fixed part of at least zero, else its bytes
    // in flight from the share run alone.
    const auto expected = [&](double bytes_few) {
      if (const auto fit = fit_share_run(dram, 132, here.dram()->bytes, seconds, 8, bytes_few,
                                         row.share_run->seconds))
        return share_fit_seconds(dram, *fit, here.dram()->bytes, 40);
      const double drawn_few = bytes_few / row.share_run->seconds / 1e9;
      return seconds * drawn /
             std::min(drawn, share_curve_gbps(dram, share_curve_sms(dram, drawn_few) * 40 / 8));
    };
    CHECK(a.time_seconds == doctest::Approx(std::max(expected(bytes_there), a.time_floor_seconds)));
    CHECK(a.projection_note.find("(its share run)") != std::string::npos);
    CHECK(a.from_share_run);
    // Without bytes counted there (a green context counts none): those counted on all SMs.
    row.share_run->bytes.clear();
    a = analyze(row, report);
    CHECK(a.projection_note.find("with the bytes counted on all SMs") != std::string::npos);
    CHECK(a.time_seconds ==
          doctest::Approx(std::max(expected(here.dram()->bytes), a.time_floor_seconds)));
    // A share run on all the SMs says nothing of a share: the curve from all of them.
    row.share_run->sms = 132;
    a = analyze(row, report);
    CHECK(a.projection_note.find("share run") == std::string::npos);
    CHECK_FALSE(a.from_share_run);
    CHECK(a.projection_note.find("the level's share curve") != std::string::npos);
    ++read_from_share;
  }
  CHECK(read_from_share > 0);
}
