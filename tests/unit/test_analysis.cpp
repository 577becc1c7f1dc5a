#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>

#include "lib/core/domain/metric_catalog.hpp"
#include "lib/core/verdict/analysis.hpp"
#include "tests/unit/helpers.hpp"

using namespace roofline;

namespace {
const GpuSpec& spec(const char* name) {
  static const SpecRegistry registry = [] {
    SpecRegistry r;
    r.add_directory(ROOFLINE_TEST_SPECS_DIR);
    return r;
  }();
  return registry.find(name);
}

Row make_row(const char* kernel, int n, bool causal) {
  Row row;
  row.kernel = kernel;
  row.workload.seq_len = n;
  row.workload.causal = causal;
  row.prediction = predict(find_kernel_model(kernel), row.workload);
  return row;
}
}  // namespace

TEST_CASE("analysis: model-only standard attention on A100 is memory-bound on DRAM") {
  Row row = make_row("standard", 16384, false);
  row.spec_key = "a100-sxm4-80gb";
  const RowAnalysis a = analyze(row, spec("a100"));
  CHECK(a.has_verdict);
  CHECK(a.time_source == Source::kModel);
  CHECK(a.dram()->bytes_source == Source::kModel);
  // AI = (4·N²·d + 5·N²) / (4·N·d·2 + 4·N²·2) per head, about d/2 for N ≫ d.
  const double n = 16384, d = 64;
  const double ai = (4 * n * n * d + 5 * n * n) / (8 * n * d + 8 * n * n);
  CHECK(a.dram()->intensity == doctest::Approx(ai));
  CHECK_FALSE(a.compute_bound);
  CHECK(a.regime == "memory-bound (DRAM)");
  CHECK(a.ridge_factor == doctest::Approx(ai / (312e12 / 2039e9)));
  // No measurement: time is the floor, so the kernel sits exactly on its bound.
  CHECK(a.time_seconds == doctest::Approx(row.prediction.model_dram_bytes / 2039e9));
  CHECK(a.fraction_of_bound == doctest::Approx(1.0));
  CHECK(a.attainable_flops_per_second == doctest::Approx(ai * 2039e9));
}

TEST_CASE("analysis: measured flash-v2 on H200 judged on the mma.sync ceiling") {
  Row row = make_row("flash-v2", 16384, false);
  row.spec_key = "h200-sxm";
  row.timing = Timing{{2.0e-3, 2.1e-3, 1.9e-3}, 1980, 1800};
  row.counters = {{quantity::kTensorMmaSync, 1.0e12},
                  {quantity::kFp32Flops, 1.0e10},
                  {quantity::kDramRead, 0.8e9},
                  {quantity::kDramWrite, 0.2e9},
                  {quantity::kL2, 4.0e9},
                  {quantity::kSmClock, 1.8e9}};
  const RowAnalysis a = analyze(row, spec("h200"));
  REQUIRE(a.ceiling != nullptr);
  CHECK(a.ceiling->id() == "tensor_fp16.mma_sync");
  CHECK(a.flops == 1.0e12);
  CHECK(a.flops_source == Source::kMeasured);
  CHECK(a.time_seconds == doctest::Approx(2.0e-3));
  CHECK(a.flops_per_second == doctest::Approx(500e12));
  CHECK(a.compute_utilisation == doctest::Approx(500.0 / 713.7));
  // At the measured 1.8 GHz the same per-cycle rate gives 713.7 × 1800/1980.
  CHECK(a.peak_at_measured_clock == doctest::Approx(713.7e12 * 1800 / 1980));
  CHECK(a.compute_utilisation_measured_clock == doctest::Approx(500e12 / (713.7e12 * 1800 / 1980)));
  REQUIRE(a.levels.size() == 2);
  CHECK(a.dram()->bytes == 1.0e9);
  CHECK(a.dram()->intensity == doctest::Approx(1000));
  CHECK(a.dram()->achieved_bytes_per_second == doctest::Approx(500e9));
  CHECK(a.dram()->bandwidth_utilisation == doctest::Approx(500.0 / 4800));
  CHECK(a.levels[1].level == MemoryLevel::kL2);
  CHECK(a.levels[1].intensity == doctest::Approx(250));
  // L2 has no spec bandwidth on H200: no slope, no verdict from it.
  CHECK(std::isnan(a.levels[1].attainable_flops_per_second));
  CHECK(a.compute_bound);
  CHECK(a.regime == "compute-bound (tensor FP16 (mma_sync))");
  CHECK(a.ridge_factor == doctest::Approx(1000 / (713.7e12 / 4800e9)));
  // 1024 CTAs (128 query tiles × 8 heads) on 132 SMs: the busiest SM holds 8, so the roof is
  // 1024 / 1056 of the pipe's peak (the tail effect).
  REQUIRE(a.tail);
  CHECK(a.tail->efficiency == doctest::Approx(1024.0 / 1056));
  CHECK_FALSE(a.tail_bound);
  CHECK(a.time_floor_seconds == doctest::Approx(1.0e12 / (713.7e12 * 1024 / 1056)));
  CHECK(a.flops_vs_model == doctest::Approx(1.01e12 / row.prediction.model_flops));
  CHECK(a.dram_bytes_vs_model == doctest::Approx(1.0e9 / row.prediction.model_dram_bytes));
  CHECK(a.warnings.empty());
}

TEST_CASE("analysis: without counters, the clock sampled while timed is the measured clock") {
  Row row = make_row("flash-v2", 16384, false);
  row.spec_key = "h200-sxm";
  // Readings around the launches at rest (1980), the median while they ran at the power cap.
  row.timing = Timing{{2.0e-3}, 1980, 1980};
  row.timing->sm_clock_timed_mhz = 1530;
  row.timing->clock_limit = "power cap";
  const RowAnalysis a = analyze(row, spec("h200"));
  CHECK(a.measured_clock_hz == doctest::Approx(1530e6));
  CHECK(a.peak_at_measured_clock == doctest::Approx(713.7e12 * 1530 / 1980));
  const std::string note =
      "timed at the board's power cap: the SM clock's median while timed 1530 MHz (NVML, sampled "
      "every ms), the spec's roofs are at 1980 MHz";
  const RowNote clock{NoteKind::kClockLimited, "power cap spec clock", note};
  CHECK(std::count(a.footnotes.begin(), a.footnotes.end(), clock) == 1);
  // No limit, or an unknown one: no footnote; older reports fall back to before and after.
  row.timing->clock_limit = "none";
  const RowAnalysis calm = analyze(row, spec("h200"));
  CHECK(std::count(calm.footnotes.begin(), calm.footnotes.end(), clock) == 0);
  row.timing->sm_clock_timed_mhz = 0;
  row.timing->sm_clock_before_mhz = 1900;
  row.timing->sm_clock_after_mhz = 1700;
  CHECK(analyze(row, spec("h200")).measured_clock_hz == doctest::Approx(1800e6));
  // Counted, the clock of the counted ranges wins.
  row.timing->sm_clock_timed_mhz = 1530;
  row.counters = {{quantity::kSmClock, 1.6e9}};
  CHECK(analyze(row, spec("h200")).measured_clock_hz == doctest::Approx(1.6e9));
}

TEST_CASE("analysis: wgmma FLOPs pick the wgmma ceiling, a point above its roof is flagged") {
  Row row = make_row("standard", 4096, false);
  row.spec_key = "h100-sxm5";
  row.timing = Timing{{1.0e-4}, 0, 0};
  row.counters = {{quantity::kTensorWgmma, 2.0e11},
                  {quantity::kTensorMmaSync, 0},
                  {quantity::kDramRead, 5e8},
                  {quantity::kDramWrite, 5e8}};
  const RowAnalysis a = analyze(row, spec("h100"));
  CHECK(a.ceiling->id() == "tensor_fp16.wgmma");
  CHECK(a.path_note == "counters: 100% of FLOPs on wgmma");
  // 2e11 FLOPs in 0.1 ms is 2000 TFLOP/s: above the 989 roof.
  REQUIRE(a.warnings.size() == 2);
  CHECK(a.warnings[0].kind == NoteKind::kAboveComputeRoof);
  CHECK(a.warnings[0].text.rfind("above the compute roof", 0) == 0);
  CHECK(a.warnings[1] == RowNote{NoteKind::kAboveLevelRoof, "DRAM",
                                 "above the DRAM roof: bytes or bandwidth are wrong"});
  // In a projection the same point is expected to be off the other GPU's roof.
  CHECK(analyze(row, spec("h100"), true).warnings.empty());
}

TEST_CASE("analysis: rows without a verdict") {
  Row row = make_row("flash-v1", 1024, true);
  row.spec_key = "a100-sxm4-80gb";
  row.status = RowStatus::kIncorrect;
  CHECK_FALSE(analyze(row, spec("a100")).has_verdict);
  row.status = RowStatus::kCountersUnavailable;
  CHECK(analyze(row, spec("a100")).has_verdict);
}

TEST_CASE("metric catalogue: quantities combine per chip") {
  const std::vector<std::string> metrics = catalogue_metrics("GH100");
  // 23, the XU pipe, the shared wavefronts' total and wgmma's share of them, the six
  // SASS-instrumented instruction classes of the integer and control instructions, and L2's
  // reduction and atomic sectors
  CHECK(metrics.size() == 34);
  // The default set leaves out every SASS-instrumented metric, TF32 and FP16-accumulating
  // HMMA on GH100 (BF16 is in: one pass still holds it, metric_host's test says).
  const std::vector<std::string> roofline_set = catalogue_metrics("GH100", CounterSet::kRoofline);
  CHECK(roofline_set.size() == 13);
  for (const std::string& m : roofline_set) CHECK(m.find("sass") == std::string::npos);
  CHECK(catalogue_quantities("GH100", CounterSet::kRoofline).size() == 12);  // with BF16's share
  // + XU, shared wavefronts, BF16's share, integer instructions, L2 reductions
  CHECK(catalogue_quantities("GA100", CounterSet::kFull).size() == 18);
  // The reductions are collected in the full set (they were once catalogued but never asked for).
  for (const char* chip : {"GA100", "GH100"}) {
    const auto full = catalogue_quantities(chip, CounterSet::kFull);
    const auto lean = catalogue_quantities(chip, CounterSet::kRoofline);
    CHECK(std::count(full.begin(), full.end(), quantity::kL2Reduction) == 1);
    CHECK(std::count(lean.begin(), lean.end(), quantity::kL2Reduction) == 0);
  }
  std::vector<double> values(metrics.size(), 1.0);
  auto index = [&](const std::string& name) {
    return static_cast<std::size_t>(std::find(metrics.begin(), metrics.end(), name) -
                                    metrics.begin());
  };
  values[index("sm__sass_thread_inst_executed_op_ffma_pred_on.sum")] = 10;
  values[index("lts__t_sectors_srcunit_tex.sum")] = 3;
  values[index("gpu__time_duration.sum")] = 2500;  // ns
  values[index("dram__bytes_write.sum")] = std::nan("");
  const auto q = combine_metrics("GH100", CounterSet::kFull, metrics, values);
  CHECK(q.at(quantity::kFp32Flops) == 1 + 1 + 2 * 10);
  CHECK(q.at(quantity::kL2) == 96);
  CHECK(q.at(quantity::kGpuTime) == doctest::Approx(2.5e-6));
  CHECK(q.count(quantity::kDramWrite) == 0);  // NaN: not collected
  CHECK(q.at(quantity::kTensorWgmma) == 3);
  // In the roofline set the tensor quantity sums only its FP16 and BF16 terms.
  const auto lean = combine_metrics("GH100", CounterSet::kRoofline, metrics, values);
  CHECK(lean.at(quantity::kTensorWgmma) == 2);
  CHECK(lean.at(quantity::kTensorMmaSync) == 2);
  CHECK(lean.at(quantity::kTensorBf16) == 2);  // the BF16 HMMA and HGMMA terms, no new metric
  CHECK(lean.count(quantity::kFp32Flops) == 0);
  CHECK(metric_terms("GA100", quantity::kTensorWgmma).empty());
  CHECK_THROWS_WITH(catalogue_metrics("GZ999"),
                    "no counter catalogue for chip GZ999; catalogued: GA100, GH100");
}

TEST_CASE("analysis: a profiled launch whose tensor FLOPs are mostly BF16 is judged on BF16") {
  Row row = profiled_row("gemm", {264, 1, 1}, {384, 1, 1},
                         {{quantity::kDramRead, 1e8},
                          {quantity::kDramWrite, 1e7},
                          {quantity::kTensorWgmma, 1e12},
                          {quantity::kTensorBf16, 0.9e12}},
                         2e-3);
  const RowAnalysis bf16 = analyze(row, spec("h200"));
  REQUIRE(bf16.ceiling != nullptr);
  CHECK(bf16.ceiling->label() == "tensor BF16 (wgmma)");
  row.counters[quantity::kTensorBf16] = 0.1e12;  // mostly FP16
  const RowAnalysis fp16 = analyze(row, spec("h200"));
  REQUIRE(fp16.ceiling != nullptr);
  CHECK(fp16.ceiling->label() == "tensor FP16 (wgmma)");
  row.counters.erase(quantity::kTensorBf16);  // not counted (GA100's default set): FP16
  CHECK(analyze(row, spec("h200")).ceiling->label() == "tensor FP16 (wgmma)");
}

TEST_CASE("catalogue: the tensor paths a set leaves uncounted are named") {
  // GH100's default set: FP16-accumulating mma.sync and TF32 on both instructions.
  const std::vector<std::string> missing = tensor_paths_not_counted("GH100", CounterSet::kRoofline);
  CHECK(missing == std::vector<std::string>{"mma.sync FP16 inputs, FP16 accumulator",
                                            "mma.sync TF32 inputs, FP32 accumulator",
                                            "wgmma TF32 inputs, FP32 accumulator"});
  CHECK(
      tensor_paths_note("GH100", CounterSet::kRoofline).find("(--counter-set full counts them)") !=
      std::string::npos);
  CHECK(tensor_paths_not_counted("GH100", CounterSet::kFull).empty());
  CHECK(tensor_paths_note("GH100", CounterSet::kFull).empty());
  CHECK(tensor_paths_not_counted("AD102", CounterSet::kRoofline).empty());  // no catalogue
}
