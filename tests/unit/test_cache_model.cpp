// The cache-aware DRAM model: its building block on synthetic streams, its bounds, and its
// predictions against DRAM bytes and regimes counted on an H200 (tests/data/reports).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "lib/core/domain/metric_catalog.hpp"
#include "lib/core/model/cache_model.hpp"
#include "lib/core/model/model.hpp"
#include "lib/core/report/report_read.hpp"
#include "lib/core/verdict/analysis.hpp"

using namespace roofline;

namespace {

const std::filesystem::path kRecorded = ROOFLINE_COUNTED_REPORT;
const std::filesystem::path kRecordedGroups = ROOFLINE_COUNTED_GROUPS;

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

TEST_CASE("cache model: rows re-read while rows of about their length are in flight") {
  const double l2 = 60e6, per_element = 2000;  // in flight: 2000 B per element of row length
  // Every row as long as N: the plain hit fraction of N·2000 B.
  CHECK(rows_reread_miss_fraction(10000, per_element, false, l2) ==
        doctest::Approx(1 - l2_hit_fraction(10000 * per_element, l2)));
  // Growing rows (a causal prefix): all short enough to hit, all long enough to miss, and in
  // between the byte-weighted integral: footprints reach L2/2 at 15000 and L2 at 30000
  // elements, so over N = 30000 the misses are ∫ x(x/15000 − 1) dx from 15000 to 30000 over
  // ∫ x dx from 0 to 30000, which is 5/12.
  CHECK(rows_reread_miss_fraction(10000, per_element, true, l2) == 0);
  CHECK(rows_reread_miss_fraction(1e6, per_element, true, l2) == doctest::Approx(1).epsilon(0.04));
  CHECK(rows_reread_miss_fraction(30000, per_element, true, l2) ==
        doctest::Approx(5.0 / 12).epsilon(0.002));
}

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
  for (const KernelModel& kernel : kernel_models())  // prefill kernels (decode: test_decode.cpp)
    for (Pass pass : {Pass::kForward, Pass::kBackward})
      for (bool causal : {false, true})
        for (int n : {1, 777, 4096, 65537}) {
          if (kernel.decode_only) continue;
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

namespace {

// The roofs of an analysed row: the compute ceiling and every level that may decide the regime.
std::vector<std::pair<std::string, double>> roofs(const RowAnalysis& a) {
  std::vector<std::pair<std::string, double>> out;
  if (a.ceiling != nullptr)
    out.emplace_back("compute-bound (" + a.ceiling->label() + ")", a.peak_flops_per_second);
  for (const LevelAnalysis& level : a.levels)
    if (!level.partial && !std::isnan(level.attainable_flops_per_second))
      out.emplace_back("memory-bound (" + std::string(display_name(level.level)) + ")",
                       level.attainable_flops_per_second);
  return out;
}

// Counted roofs within 5% of the binding one are a tie: the counted DRAM bytes of one point
// vary up to 4.5% between processes (NOTES.md, "The CI gate"), so either regime is the measured
// one there.
bool within_tie(const RowAnalysis& counted, const std::string& regime) {
  for (const auto& [name, rate] : roofs(counted))
    if (name == regime) return rate <= counted.attainable_flops_per_second * 1.05;
  return false;
}

// The model (without counters) against every `ok` row of a counted report: what
// scripts/model_vs_counters.py checks, on recordings.
struct Judged {
  int compared = 0, big = 0, ties = 0;
  std::vector<std::string> regime_mismatches;  // not the counted regime, nor its tie
  std::vector<std::string> dram_outside;       // model DRAM bytes beyond 1.5x of counted > 10 MB
};

Judged judge(const Report& report) {
  const GpuSpec& h200 = report.specs.at(0);
  Judged j;
  for (const Row& counted : report.rows) {
    if (counted.status != RowStatus::kOk) continue;
    const std::string name = counted.kernel + " " + counted.workload.label();
    const Prediction p = predict(find_kernel_model(counted.kernel), counted.workload, h200);
    const double measured = counted_dram(counted);
    if (measured > 10e6) {
      ++j.big;
      const double ratio = p.model_dram_bytes / measured;
      if (ratio > 1.5 || ratio < 1 / 1.5) j.dram_outside.push_back(name);
    }
    Row modelled;
    modelled.kernel = counted.kernel;
    modelled.workload = counted.workload;
    modelled.spec_key = counted.spec_key;
    modelled.prediction = p;
    const RowAnalysis with_counters = analyze(counted, h200);
    const RowAnalysis without = analyze(modelled, h200);
    if (without.regime != with_counters.regime) {
      if (within_tie(with_counters, without.regime))
        ++j.ties;
      else
        j.regime_mismatches.push_back(name);
    }
    ++j.compared;
  }
  std::sort(j.regime_mismatches.begin(), j.regime_mismatches.end());
  std::sort(j.dram_outside.begin(), j.dram_outside.end());
  return j;
}

}  // namespace

TEST_CASE("cache model: against counted DRAM bytes and regimes of 140 rows on the H200") {
  const Judged j = judge(read_report_file(kRecorded));
  CHECK(j.compared == 140);
  CHECK(j.big >= 90);
  CHECK(j.ties <= 1);
  CHECK(j.dram_outside.empty());
  // Every row: standard at N = 65537 (causal forward, full backward), where the counted DRAM
  // roof lies 18% and 12% below the L1 one, was named L1-bound while cuBLAS's element-wise GEMMs
  // were charged a sector per element (1.3× the counted L1 bytes there).
  CHECK(j.regime_mismatches.empty());
}

TEST_CASE("cache model: the holdout and fresh groups counted on the H200 (2026-11-30)") {
  // scripts/model_groups.sh (model_vs_counters.py --groups holdout .. fresh5) on the H200, the
  // counted reports merged. The rows that fail are named, so that a change of the model shows
  // here whichever way it goes (docs/results/2026-11-30-h200-model-vs-counters.md says why each
  // fails). fresh4 was counted before the rules it tests were written and judged once, after;
  // fresh5 was fixed with the model frozen.
  const Judged j = judge(read_report_file(kRecordedGroups));
  CHECK(j.compared == 752);
  // cuBLAS ran these N×d GEMMs as sm90 wgmma kernels at odd N; the model names mma.sync.
  const std::vector<std::string> regimes = {"standard B1 H2 N2049 d128 causal bwd",
                                            "standard B1 H2 N2049 d128 full bwd"};
  CHECK(j.regime_mismatches == regimes);
  // 1.52× the counted bytes: dP kept in L2 and rewritten there as dS beyond what
  // l2_retained_writes keeps.
  const std::vector<std::string> dram = {"standard B12 H1 N999 d64 causal bwd"};
  CHECK(j.dram_outside == dram);
}

TEST_CASE("L1 model: cuBLAS's GEMMs at N % 8 != 0 against ncu's per-kernel bytes on the H200") {
  // scripts/device_check.sh l1probe (ncu l1tex__t_bytes per kernel, L2 flushed, one launch):
  // the sum over the GEMM kernels of one point. Odd N: CUTLASS sm75 align1 kernels; N even and
  // not a multiple of 8: CUTLASS sm80 kernels with 4-byte accesses.
  struct Probe {
    Workload w;
    double gemm_bytes;
  };
  auto workload = [](int b, int h, int n, Pass pass) {
    Workload w;
    w.batch = b;
    w.heads = h;
    w.head_dim = 64;
    w.seq_len = n;
    w.causal = false;
    w.pass = pass;
    return w;
  };
  const std::vector<Probe> probes = {
      // S (128x128 tn) 68854.7 + 12618.7 MB, O = P·V (128x128 nn) 120379.5 MB.
      {workload(1, 1, 65537, Pass::kForward), (68854.7 + 12618.7 + 120379.5) * 1e6},
      // dP (tn), dQ (nn), dV and dK (nt) 111765.2 MB each.
      {workload(1, 1, 65537, Pass::kBackward), (68854.7 + 12618.7 + 120379.5 + 2 * 111765.2) * 1e6},
      // S (128x256) 115.20 + 44.70 MB, O (64x64 nn) 322.56 MB.
      {workload(1, 3, 2500, Pass::kForward), (115.20 + 44.70 + 322.56) * 1e6},
      {workload(1, 3, 2502, Pass::kForward), (115.29 + 45.97 + 323.06) * 1e6},
      {workload(1, 3, 2506, Pass::kBackward), (115.48 + 46.10 + 323.94 + 2 * 323.93) * 1e6},
  };
  const GpuSpec h200 = read_report_file(kRecorded).specs.at(0);
  auto gemm_bytes = [&h200](const Workload& w) {
    const Prediction p = predict(find_kernel_model("standard"), w, h200);
    double gemm = 0;
    for (const ModelTerm& term : p.l1_byte_terms)
      if (term.name.rfind("cuBLAS", 0) == 0) gemm += term.value;
    return gemm;
  };
  for (const Probe& probe : probes) {
    CAPTURE(probe.w.label());
    CHECK(gemm_bytes(probe.w) / probe.gemm_bytes == doctest::Approx(1).epsilon(0.01));
  }

  // The second and third probes (session 5): every GEMM kernel of the four passes (forward and
  // backward, causal and not) summed, split-K reductions included, in MB. They chose the tiles
  // and split-K that odd_nd_kernel and four_byte_nd_kernel name.
  struct Sweep {
    int b, h, d, n;
    double mb;
  };
  const std::vector<Sweep> sweeps = {
      {1, 6, 128, 1537, 6270.3}, {2, 2, 128, 3001, 15366.2}, {2, 2, 128, 3002, 7103.7},
      {2, 4, 64, 1500, 2515.6},  {4, 2, 128, 2052, 5742.7},  {1, 1, 128, 2049, 2092.6},
      {1, 1, 128, 3002, 1621.5}, {1, 2, 128, 3001, 12683.7}, {1, 2, 64, 3002, 3078.5},
      {1, 3, 128, 1025, 3068.8}, {1, 4, 128, 1025, 4091.8},  {1, 5, 128, 1025, 3853.9},
      {6, 2, 64, 2002, 5935.3},
  };
  for (const Sweep& sweep : sweeps) {
    Workload w = workload(sweep.b, sweep.h, sweep.n, Pass::kForward);
    w.head_dim = sweep.d;
    CAPTURE(w.label());
    double model = 2 * gemm_bytes(w);
    w.pass = Pass::kBackward;
    model += 2 * gemm_bytes(w);
    CHECK(model / (sweep.mb * 1e6) == doctest::Approx(1).epsilon(0.01));
  }
  // The one probe the rules miss: B1 H2 N2049 d128 ran its N×d GEMMs as sm90 wgmma kernels with
  // element-wise loads (5908.9 MB); the model's wmma and 64×64 kernels are 1.36× that.
  Workload missed = workload(1, 2, 2049, Pass::kForward);
  missed.head_dim = 128;
  double model = 2 * gemm_bytes(missed);
  missed.pass = Pass::kBackward;
  model += 2 * gemm_bytes(missed);
  CHECK(model / 5908.9e6 == doctest::Approx(1.36).epsilon(0.02));
}

TEST_CASE("L1 model: standard attention's L1 bytes against the counted ones on the H200") {
  const Report report = read_report_file(kRecorded);
  const GpuSpec& h200 = report.specs.at(0);
  int unaligned = 0;
  for (const Row& counted : report.rows) {
    if (counted.kernel != "standard" || counted.status != RowStatus::kOk) continue;
    if (counted.workload.seq_len < 512) continue;  // cuBLAS's fixed costs dominate
    CAPTURE(counted.workload.label());
    const Prediction p = predict(find_kernel_model("standard"), counted.workload, h200);
    const double ratio = p.model_l1_bytes / counted.counters.at(quantity::kL1);
    // The FLOPs ran on the pipe the model names for this N.
    const bool wgmma = counted.counters.at(quantity::kTensorWgmma) > 0;
    CHECK(wgmma == (counted.workload.seq_len % 8 == 0));
    if (counted.workload.seq_len % 8 == 0) {
      // wgmma GEMMs (TMA): the cached row kernels' bytes alone.
      CHECK(ratio == doctest::Approx(1).epsilon(0.05));
    } else {
      // Element-wise cuBLAS GEMMs, by tile (model_l1.hpp): within 1% on every recorded row
      // (N = 777 to 65537, d 32 and 64, B·H 1 to 64). These recordings are the ones the
      // per-element costs were read beside; scripts/model_vs_counters.py --groups holdout
      // checks shapes they never saw.
      CHECK(ratio == doctest::Approx(1).epsilon(0.02));
      ++unaligned;
    }
  }
  CHECK(unaligned >= 28);
}

TEST_CASE("L1 model: wgmma GEMMs of the seed sweep move only the row kernels' bytes through L1") {
  // scripts/gate_check.sh's first process (h200_gate.tar.xz): N = 1024..16384, d = 64.
  const Report report =
      read_report_file(std::filesystem::path(ROOFLINE_GATE_REPORTS_DIR) / "a_00.json");
  int checked = 0;
  for (const Row& counted : report.rows) {
    if (counted.kernel != "standard" || counted.status != RowStatus::kOk) continue;
    CAPTURE(counted.workload.label());
    const Prediction p =
        predict(find_kernel_model("standard"), counted.workload, report.spec_for(counted));
    CHECK(counted.counters.at(quantity::kTensorWgmma) > 0);
    CHECK(counted.counters.at(quantity::kTensorMmaSync) == 0);
    CHECK(p.model_l1_bytes / counted.counters.at(quantity::kL1) ==
          doctest::Approx(1).epsilon(0.02));
    ++checked;
  }
  CHECK(checked == 16);
}

TEST_CASE("analysis: a wgmma row's L1 level is partial and never decides the regime") {
  const Report report = read_report_file(kRecorded);
  const GpuSpec& h200 = report.specs.at(0);
  int wgmma_rows = 0;
  for (const Row& counted : report.rows) {
    if (counted.status != RowStatus::kOk) continue;
    const RowAnalysis a = analyze(counted, h200);
    const bool wgmma = a.ceiling != nullptr && a.ceiling->instruction == TensorInstruction::kWgmma;
    for (const LevelAnalysis& level : a.levels)
      CHECK(level.partial == (wgmma && level.level == MemoryLevel::kL1));
    if (!wgmma) continue;
    CAPTURE(counted.kernel + " " + counted.workload.label());
    CHECK(a.binding != "L1");
    bool noted = false;
    for (const RowNote& footnote : a.footnotes)  // a fixed property: not a warning
      noted = noted || footnote.kind == NoteKind::kL1Partial;
    CHECK(noted);
    ++wgmma_rows;
  }
  CHECK(wgmma_rows >= 30);  // flash-v3 (28 rows) and standard at N = 3000
}

TEST_CASE("model: flash-v3's FLOPs with its padding against the counted wgmma FLOPs") {
  const Report report = read_report_file(kRecorded);
  int checked = 0;
  for (const Row& counted : report.rows) {
    if (counted.kernel != "flash-v3" || counted.status != RowStatus::kOk) continue;
    if (counted.workload.seq_len < 2) continue;  // N = 1 without a mask: 0.6× (padding)
    CAPTURE(counted.workload.label());
    const Prediction p = predict(find_kernel_model("flash-v3"), counted.workload);
    const double ratio = p.model_flops / counted.counters.at(quantity::kTensorWgmma);
    if (counted.workload.pass == Pass::kForward)
      CHECK(ratio == doctest::Approx(1).epsilon(0.005));
    else
      CHECK(ratio == doctest::Approx(1).epsilon(0.08));
    ++checked;
  }
  CHECK(checked == 24);
}

TEST_CASE("analysis: without counters, standard on a GPU without wgmma runs mma.sync, L1 whole") {
  const GpuSpec a100 = spec("a100");
  const GpuSpec h200 = spec("h200");
  Row row;
  row.kernel = "standard";
  row.workload.seq_len = 4096;
  row.workload.head_dim = 128;
  row.spec_key = a100.key;
  row.prediction = predict(find_kernel_model("standard"), row.workload, a100);
  const RowAnalysis there = analyze(row, a100);
  CHECK(there.warnings.empty());
  REQUIRE(there.ceiling != nullptr);
  CHECK(there.ceiling->peak_tflops == 312);
  REQUIRE(there.levels.size() == 2);
  CHECK_FALSE(there.levels[1].partial);
  // On the H200 the same GEMMs are wgmma: TMA moves their operands, the L1 level is partial.
  row.spec_key = h200.key;
  row.prediction = predict(find_kernel_model("standard"), row.workload, h200);
  const RowAnalysis here = analyze(row, h200);
  CHECK(here.ceiling->instruction == TensorInstruction::kWgmma);
  REQUIRE(here.levels.size() == 2);
  CHECK(here.levels[1].partial);
  CHECK(row.prediction.model_l1_bytes <
        predict(find_kernel_model("standard"), row.workload, a100).model_l1_bytes);
}
