// The cache-aware DRAM model: its building block on synthetic streams, its bounds, and its
// predictions against DRAM bytes and regimes counted on an H200 (tests/data/reports).
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>

#include "lib/core/analysis.hpp"
#include "lib/core/cache_model.hpp"
#include "lib/core/metric_catalog.hpp"
#include "lib/core/model.hpp"
#include "lib/core/report_io.hpp"

using namespace roofline;

namespace {

const std::filesystem::path kRecorded =
    std::filesystem::path(ROOFLINE_TEST_DATA_DIR) / "reports" / "h200_counted_40_workloads.json";

GpuSpec spec(const std::string& name) {
  SpecRegistry registry;
  registry.add_directory(ROOFLINE_TEST_SPECS_DIR);
  return registry.find(name);
}

StreamedOperand stream(long long heads, long long ctas, long long resident, double rows,
                       double row_bytes) {
  StreamedOperand op;
  op.heads = heads;
  op.ctas_per_head = ctas;
  op.resident_ctas = resident;
  op.rows = [rows](long long) { return rows; };
  op.read_row_bytes = row_bytes;
  return op;
}

double counted_dram(const Row& row) {
  return row.counters.at(quantity::kDramRead) + row.counters.at(quantity::kDramWrite);
}

}  // namespace

TEST_CASE("cache model: hit fraction is 1 below half the L2, 0 above it, linear between") {
  CHECK(l2_hit_fraction(10e6, 60e6) == 1);
  CHECK(l2_hit_fraction(30e6, 60e6) == 1);
  CHECK(l2_hit_fraction(45e6, 60e6) == doctest::Approx(0.5));
  CHECK(l2_hit_fraction(60e6, 60e6) == 0);
  CHECK(l2_hit_fraction(1e9, 60e6) == 0);
  CHECK(l2_hit_fraction(1, 0) == 0);
}

TEST_CASE("cache model: a head whose CTAs are resident together reads its operand once") {
  // 8 heads of 10 CTAs, 132 resident: every head fits in one wave, rows read once per head.
  const StreamedTraffic t = stream_through_l2(stream(8, 10, 132, 1000, 256), 60e6);
  CHECK(t.read_bytes == doctest::Approx(8 * 1000 * 256.0));
  CHECK(t.write_bytes == 0);
  CHECK(t.waves == 1);
}

TEST_CASE("cache model: waves of one head re-read what outgrew L2, and only that") {
  // One head, 4 waves of 100 CTAs each streaming 1e6 rows of 256 B (256 MB > L2): every wave
  // reads the operand again.
  const StreamedTraffic big = stream_through_l2(stream(1, 400, 100, 1e6, 256), 60e6);
  CHECK(big.waves == 4);
  CHECK(big.read_bytes == doctest::Approx(4 * 256e6));
  // The same with 1e5 rows (25.6 MB, under half the L2): read once.
  const StreamedTraffic small = stream_through_l2(stream(1, 400, 100, 1e5, 256), 60e6);
  CHECK(small.read_bytes == doctest::Approx(256e5));
  // An accumulator streamed the same way is read and written back per wave that misses.
  StreamedOperand rmw = stream(1, 400, 100, 1e6, 0);
  rmw.rmw_row_bytes = 256;
  rmw.rmw_first_touch_miss = 0;
  const StreamedTraffic acc = stream_through_l2(rmw, 60e6);
  CHECK(acc.read_bytes == doctest::Approx(3 * 256e6));
  CHECK(acc.write_bytes == doctest::Approx(3 * 256e6));
}

TEST_CASE("cache model: between the compulsory and the no-reuse bounds, with their formulas") {
  const GpuSpec h200 = spec("h200");
  for (const KernelModel& kernel : kernel_models())
    for (Pass pass : {Pass::kForward, Pass::kBackward})
      for (bool causal : {false, true})
        for (int n : {1, 777, 4096, 65537}) {
          Workload w;
          w.batch = 2;
          w.heads = 3;
          w.seq_len = n;
          w.head_dim = 64;
          w.causal = causal;
          w.pass = pass;
          const Prediction p = predict(kernel, w, h200);
          CAPTURE(kernel.name + " " + w.label());
          CHECK(p.model_dram_bytes <= p.no_reuse_dram_bytes * (1 + 1e-12));
          CHECK(p.model_dram_bytes > 0);
          CHECK_FALSE(p.compulsory_formula.empty());
          CHECK_FALSE(p.cache_aware_byte_terms.empty());
          CHECK(p.dram_model.find("cache-aware") == 0);
          double sum = 0;
          for (const ModelTerm& term : p.cache_aware_byte_terms) sum += term.value;
          CHECK(sum == doctest::Approx(p.model_dram_bytes));
          // Without a spec the estimate is the no-reuse bound.
          const Prediction plain = predict(kernel, w);
          CHECK(plain.model_dram_bytes == plain.no_reuse_dram_bytes);
          CHECK(plain.no_reuse_dram_bytes == doctest::Approx(p.no_reuse_dram_bytes));
        }
}

TEST_CASE("cache model: a smaller L2 never predicts less traffic (A100 40 MB vs H200 60 MB)") {
  const GpuSpec h200 = spec("h200");
  const GpuSpec a100 = spec("a100");
  Workload w;
  w.batch = 1;
  w.heads = 1;
  w.seq_len = 262144;
  w.head_dim = 128;
  for (Pass pass : {Pass::kForward, Pass::kBackward}) {
    w.pass = pass;
    const Prediction here = predict(find_kernel_model("flash-v2"), w, h200);
    const Prediction there = predict(find_kernel_model("flash-v2"), w, a100);
    CHECK(there.model_dram_bytes >= here.model_dram_bytes);
    // K/V (or Q/dO) per head outgrow both caches: many times the compulsory bytes.
    CHECK(here.model_dram_bytes > 3 * here.compulsory_dram_bytes);
  }
}

TEST_CASE("cache model: against counted DRAM bytes and regimes of 112 rows on the H200") {
  const Report report = read_report_file(kRecorded);
  const GpuSpec& h200 = report.specs.at(0);
  int compared = 0, big = 0;
  for (const Row& counted : report.rows) {
    if (counted.status != RowStatus::kOk) continue;
    CAPTURE(counted.kernel + " " + counted.workload.label());
    const Prediction p = predict(find_kernel_model(counted.kernel), counted.workload, h200);
    const double measured = counted_dram(counted);
    // Model DRAM bytes within 1.5× of the counted ones wherever those exceed 10 MB.
    if (measured > 10e6) {
      CHECK(p.model_dram_bytes / measured <= 1.5);
      CHECK(p.model_dram_bytes / measured >= 1 / 1.5);
      ++big;
    }
    // The regime without counters (what `run --no-counters` and `model` say) is the counted one.
    Row modelled;
    modelled.kernel = counted.kernel;
    modelled.workload = counted.workload;
    modelled.spec_key = counted.spec_key;
    modelled.prediction = p;
    const RowAnalysis with_counters = analyze(counted, h200);
    const RowAnalysis without = analyze(modelled, h200);
    if (with_counters.binding == "L1" && counted.kernel == "standard") {
      // Known gap: cuBLAS's mma.sync GEMMs (d <= 64) move 7-8× their DRAM bytes through L1,
      // which the model does not predict (it has DRAM bytes only); on the DRAM level alone the
      // two agree.
      Row dram_only = counted;
      dram_only.counters.erase(quantity::kL1);
      CHECK(without.regime == analyze(dram_only, h200).regime);
    } else {
      CHECK(without.regime == with_counters.regime);
    }
    ++compared;
  }
  CHECK(compared == 112);
  CHECK(big >= 70);
}
