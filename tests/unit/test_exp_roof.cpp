// The exponential roof (issue 23): the model's exponentials per kernel, mask and pass, the roof
// arithmetic, the "exp-bound (XU)" regime, the new spec fields and the counted path.
#include <doctest/doctest.h>

#include <cmath>
#include <string>

#include <nlohmann/json.hpp>

#include "lib/core/base/errors.hpp"
#include "lib/core/domain/metric_catalog.hpp"
#include "lib/core/model/exp_model.hpp"
#include "lib/core/model/exp_roof.hpp"
#include "lib/core/verdict/analysis.hpp"

using namespace roofline;

namespace {

const SpecRegistry& registry() {
  static const SpecRegistry r = [] {
    SpecRegistry out;
    out.add_directory(ROOFLINE_TEST_SPECS_DIR);
    return out;
  }();
  return r;
}

Workload shape(int n, int d, bool causal, Pass pass) {
  Workload w;
  w.batch = 1;
  w.heads = 1;
  w.seq_len = n;
  w.head_dim = d;
  w.causal = causal;
  w.pass = pass;
  return w;
}

double exps(const char* kernel, int n, int d, bool causal, Pass pass) {
  return predict_exponentials(find_kernel_model(kernel), shape(n, d, causal, pass)).exponentials;
}

Row model_row(const char* kernel, const Workload& w, const GpuSpec& spec) {
  Row row;
  row.kernel = kernel;
  row.workload = w;
  row.spec_key = spec.key;
  row.prediction = predict(find_kernel_model(kernel), w, spec);
  return row;
}

nlohmann::json h200_json() {
  return nlohmann::json::parse(R"({
    "name": "test", "aliases": [], "device_names": [], "chip": "GH100",
    "compute_capability": "9.0", "sm_count": 132, "boost_clock_mhz": 1980,
    "base_clock_mhz": 1590, "l2_cache_bytes": 62914560, "memory_bytes": 150754820096,
    "tdp_watts": 700, "xu_exp2_per_clock_per_sm": 16, "shared_bytes_per_clock_per_sm": 128,
    "sources": {"sm_count": "-", "boost_clock_mhz": "-", "base_clock_mhz": "-",
                "l2_cache_bytes": "-", "memory_bytes": "-", "tdp_watts": "-",
                "xu_exp2_per_clock_per_sm": "guide", "shared_bytes_per_clock_per_sm": "guide"},
    "memory_levels": [{"level": "dram", "bandwidth_gbps": 4800, "source": "-"}],
    "compute_ceilings": [{"path": "tensor_fp16", "instruction": "wgmma", "peak_tflops": 989.4,
                          "clock_mhz": 1830, "source": "-"}]})");
}

std::string parse_error(const nlohmann::json& j) {
  try {
    parse_gpu_spec(j, "t.json");
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("exp model: flash-v3 forward, one exp2 per score plus the quads' rescale and 1/l") {
  // N = 256: 2 CTAs × 2 warpgroups × 2 key tiles of 128: N² scores, 4 rescales per row and
  // key tile, 4 reciprocals per row.
  CHECK(exps("flash-v3", 256, 64, false, Pass::kForward) == 65536 + 2048 + 1024);
  // Causal: the first CTA computes one key tile, the second two, whole (the diagonal tiles).
  CHECK(exps("flash-v3", 256, 64, true, Pass::kForward) == 384 * 128 + 4 * 384 + 1024);
  // Large N: 1 + 1/32 + 4/N scores, the 1.03 × N² that ncu counted at N = 8192 (NOTES.md).
  const double n = 8192;
  CHECK(exps("flash-v3", 8192, 64, false, Pass::kForward) / (n * n) ==
        doctest::Approx(1 + 1.0 / 32 + 4 / n));
  // Head dim does not change the tiles of flash-v3.
  CHECK(exps("flash-v3", 8192, 128, false, Pass::kForward) ==
        exps("flash-v3", 8192, 64, false, Pass::kForward));
}

TEST_CASE("exp model: flash-v2 forward skips warps past the diagonal, Bc = 32 at d = 128") {
  // Warps of 32 rows over 64-key tiles: CTA 0 computes 1+1+2+2 warp tiles, CTA 1 3+3+4+4.
  CHECK(exps("flash-v2", 256, 64, true, Pass::kForward) == 640 * 64 + 4 * 640 + 4 * 256);
  CHECK(exps("flash-v2", 256, 64, false, Pass::kForward) == 65536 + 4 * 1024 + 4 * 256);
  // d = 128: 32-key tiles, so twice the rescales per score.
  CHECK(exps("flash-v2", 256, 128, false, Pass::kForward) == 65536 + 4 * 2048 + 4 * 256);
}

TEST_CASE("exp model: backward recomputes P on every tile pair computed") {
  CHECK(exps("flash-v2", 256, 64, false, Pass::kBackward) == 65536);
  // Warps of 16 keys skip query tiles wholly before their keys.
  CHECK(exps("flash-v2", 256, 64, true, Pass::kBackward) == 640 * 64);
  // flash-v3 adds the integer divisions of its prepare kernel (3 per thread, d/8 threads per
  // padded row) and its dQ conversion (d = 128: 3 per thread, 256 threads per 80-query stage;
  // d = 64: 6 per 8-element vector). At d = 128 its stages are 80 queries: 256 keys over 320
  // padded queries.
  const double prep_convert_d128 = 3 * 320 * 128 / 8 + 3 * 256 * 320 / 80;
  CHECK(exps("flash-v3", 256, 128, false, Pass::kBackward) == 256 * 320 + prep_convert_d128);
  CHECK(exps("flash-v3", 256, 64, false, Pass::kBackward) ==
        65536 + 3 * 256 * 64 / 8 + 6 * 256 * 64 / 8);
  // Causal: key block 0 takes all four query tiles with both warpgroups; key block 1 starts at
  // tile 1 (queries 80-159), where its second warpgroup (keys 192-255) is idle: 13 warpgroup
  // tiles of 64 x 80.
  CHECK(exps("flash-v3", 256, 128, true, Pass::kBackward) == 13 * 64 * 80 + prep_convert_d128);
  // flash-v1 recomputes P in both of its backward kernels.
  CHECK(exps("flash-v1", 128, 64, false, Pass::kBackward) == 2 * 16384);
  CHECK(exps("flash-v1", 128, 64, false, Pass::kForward) == 16384 + 16 * 256 + 16 * 128);
}

TEST_CASE("exp model: the standard kernel's softmax") {
  // Cached rows: the whole register row (1024 at N = 1024), masked or not, and 32 reciprocals;
  // a causal row's query index (row % N) adds three XU instructions per thread.
  CHECK(exps("standard", 1024, 64, false, Pass::kForward) == 1024.0 * 1024 + 1024.0 * 32);
  CHECK(exps("standard", 1024, 64, true, Pass::kForward) ==
        1024.0 * 1024 + 1024.0 * 32 + 3 * 1024.0 * 32);
  CHECK(exps("standard", 1000, 64, false, Pass::kForward) == 1000.0 * 1024 + 1000.0 * 32);
  // Streaming rows (N % 8 != 0): two passes over the valid keys.
  CHECK(exps("standard", 1001, 64, false, Pass::kForward) == 2.0 * 1001 * 1001 + 1001.0 * 256);
  CHECK(exps("standard", 1001, 64, true, Pass::kForward) ==
        2.0 * 1001 * 501 + 1001.0 * 256 + 3 * 1001.0 * 256);
  CHECK(exps("standard", 1024, 64, false, Pass::kBackward) == 0);
}

TEST_CASE("exp model: predict carries the exponentials and their terms") {
  const Prediction p =
      predict(find_kernel_model("flash-v3"), shape(256, 64, false, Pass::kForward));
  CHECK(p.model_exponentials == 68608);
  REQUIRE(p.exp_terms.size() == 3);
  double sum = 0;
  for (const ModelTerm& t : p.exp_terms) sum += t.value;
  CHECK(sum == p.model_exponentials);
}

TEST_CASE("exp roof: arithmetic") {
  CHECK(exp_rate_per_second(16, 132, 1.98e9) == doctest::Approx(4.18176e12));
  CHECK(exp_rate_per_second(0, 132, 1.98e9) == 0);
  CHECK(exp_rate_per_second(16, 132, std::nan("")) == 0);
  CHECK(flops_per_exponential(256, 1) == 256);
  CHECK(std::isnan(flops_per_exponential(256, 0)));
  // 4·d FLOPs per score at d = 64 on the H200: 1070.5 TFLOP/s at 1980 MHz.
  CHECK(exp_roof_flops_per_second(256e9, 1e9, 4.18176e12) ==
        doctest::Approx(1.0705e15).epsilon(1e-4));
  CHECK(std::isnan(exp_roof_flops_per_second(0, 1e9, 4e12)));
  CHECK(exp_time_floor_seconds(4.18176e12, 4.18176e12) == doctest::Approx(1.0));
  CHECK(std::isnan(exp_time_floor_seconds(1, 0)));
}

TEST_CASE("exp roof: flash-v3 d64 forward on the H200 sits within 15% of the wgmma roof") {
  const GpuSpec& h200 = registry().find("h200");
  const Row row = model_row("flash-v3", shape(16384, 64, false, Pass::kForward), h200);
  const RowAnalysis a = analyze(row, h200);
  REQUIRE(a.exp.present);
  CHECK(a.exp.exponentials_source == Source::kModel);
  CHECK(a.exp.flops_per_exponential ==
        doctest::Approx(row.prediction.model_flops / row.prediction.model_exponentials));
  CHECK(a.exp.roof_flops_per_second == doctest::Approx(4.18176e12 * a.exp.flops_per_exponential));
  CHECK(a.exp.roof_flops_per_second / a.peak_flops_per_second ==
        doctest::Approx(1.05).epsilon(0.1));
  CHECK(a.regime == "compute-bound (tensor FP16 (wgmma))");
  CHECK_FALSE(a.exp_bound);
  // d = 128: about twice the tensor roof.
  const Row wide = model_row("flash-v3", shape(16384, 128, false, Pass::kForward), h200);
  const RowAnalysis b = analyze(wide, h200);
  CHECK(b.exp.roof_flops_per_second / b.peak_flops_per_second ==
        doctest::Approx(2.1).epsilon(0.05));
}

TEST_CASE("exp roof: the regime is exp-bound (XU) where the exponential roof is lowest") {
  // d = 32 on mma.sync: 128 FLOPs per score against 16 exp2 per clock and SM.
  const GpuSpec& h200 = registry().find("h200");
  const Row row = model_row("flash-v2", shape(16384, 32, false, Pass::kForward), h200);
  const RowAnalysis a = analyze(row, h200);
  REQUIRE(a.exp.present);
  CHECK(a.exp.roof_flops_per_second < a.peak_flops_per_second);
  CHECK(a.exp_bound);
  CHECK_FALSE(a.compute_bound);
  CHECK(a.binding == "XU");
  CHECK(a.regime == "exp-bound (XU)");
  CHECK(a.attainable_flops_per_second == doctest::Approx(a.exp.roof_flops_per_second));
  // Untimed: the floor is the exponentials' time, and the row sits on it.
  CHECK(a.time_floor_seconds == doctest::Approx(a.exp.time_floor_seconds));
  CHECK(a.fraction_of_bound == doctest::Approx(1.0));
  CHECK(a.exp.utilisation == doctest::Approx(1.0));
}

TEST_CASE("exp roof: counted XU instructions replace the model's exponentials") {
  const GpuSpec& h200 = registry().find("h200");
  Row row = model_row("flash-v3", shape(8192, 64, false, Pass::kForward), h200);
  row.timing = Timing{{1.6e-3, 1.7e-3, 1.65e-3}, 1800, 1750};
  const double model = row.prediction.model_exponentials;
  row.counters = {{quantity::kTensorWgmma, row.prediction.model_flops},
                  {quantity::kXuInstructions, 1.01 * model / 32},
                  {quantity::kSmClock, 1.75e9}};
  const RowAnalysis a = analyze(row, h200);
  REQUIRE(a.exp.present);
  CHECK(a.exp.exponentials_source == Source::kMeasured);
  CHECK(a.exp.exponentials == doctest::Approx(1.01 * model));
  CHECK(a.exp.exponentials_vs_model == doctest::Approx(1.01));
  CHECK(a.exp.rate_at_measured_clock == doctest::Approx(16.0 * 132 * 1.75e9));
  CHECK(a.exp.achieved_per_second == doctest::Approx(1.01 * model / 1.65e-3));
  // A row faster than the XU allows is warned about.
  row.timing = Timing{{1e-5}, 0, 0};
  const RowAnalysis fast = analyze(row, h200);
  bool warned = false;
  for (const RowNote& w : fast.warnings)
    warned =
        warned || (w.kind == NoteKind::kAboveXuRoof && w.text.find("XU roof") != std::string::npos);
  CHECK(warned);
}

TEST_CASE("exp roof: a spec without an XU rate draws no exponential roof") {
  nlohmann::json j = h200_json();
  j.erase("xu_exp2_per_clock_per_sm");
  j["sources"].erase("xu_exp2_per_clock_per_sm");
  const GpuSpec spec = parse_gpu_spec(j, "t.json");
  CHECK(spec.xu_exp2_per_clock_per_sm == 0);
  CHECK(spec.exp2_per_second() == 0);
  const Row row = model_row("flash-v3", shape(4096, 64, false, Pass::kForward), spec);
  const RowAnalysis a = analyze(row, spec);
  CHECK_FALSE(a.exp.present);
  CHECK_FALSE(a.exp_bound);
}

TEST_CASE("spec: the per-SM rates are read, written and validated") {
  const GpuSpec spec = parse_gpu_spec(h200_json(), "t.json");
  CHECK(spec.xu_exp2_per_clock_per_sm == 16);
  CHECK(spec.shared_bytes_per_clock_per_sm == 128);
  CHECK(spec.exp2_per_second() == doctest::Approx(16.0 * 132 * 1.98e9));
  CHECK(spec.exp2_per_second(1.5e9) == doctest::Approx(16.0 * 132 * 1.5e9));
  CHECK(spec.shared_bytes_per_second() == doctest::Approx(128.0 * 132 * 1.98e9));
  CHECK(spec.sources.at("xu_exp2_per_clock_per_sm") == "guide");
  // Round trip through the JSON a report embeds.
  const GpuSpec again = parse_gpu_spec(to_json(spec), "t.json");
  CHECK(again.xu_exp2_per_clock_per_sm == 16);
  CHECK(again.shared_bytes_per_clock_per_sm == 128);

  nlohmann::json no_source = h200_json();
  no_source["sources"].erase("xu_exp2_per_clock_per_sm");
  CHECK(parse_error(no_source).find("sources.xu_exp2_per_clock_per_sm") != std::string::npos);
  nlohmann::json source_only = h200_json();
  source_only.erase("shared_bytes_per_clock_per_sm");
  CHECK(parse_error(source_only).find("shared_bytes_per_clock_per_sm") != std::string::npos);
  CHECK(parse_error(source_only).find("unknown key") != std::string::npos);
  nlohmann::json zero = h200_json();
  zero["xu_exp2_per_clock_per_sm"] = 0;
  CHECK(parse_error(zero).find("xu_exp2_per_clock_per_sm") != std::string::npos);
  nlohmann::json text = h200_json();
  text["xu_exp2_per_clock_per_sm"] = "16";
  CHECK(parse_error(text).find("xu_exp2_per_clock_per_sm") != std::string::npos);
}

TEST_CASE("spec: every shipped spec has both per-SM rates with a source") {
  for (const GpuSpec& spec : registry().all()) {
    INFO(spec.key);
    CHECK(spec.xu_exp2_per_clock_per_sm == 16);
    CHECK(spec.shared_bytes_per_clock_per_sm == 128);
    CHECK_FALSE(spec.sources.at("xu_exp2_per_clock_per_sm").empty());
    CHECK_FALSE(spec.sources.at("shared_bytes_per_clock_per_sm").empty());
  }
}

TEST_CASE("catalogue: XU and shared wavefronts are in the full set only") {
  for (const char* chip : {"GA100", "GH100"}) {
    INFO(chip);
    CHECK(metric_terms(chip, quantity::kXuInstructions, CounterSet::kRoofline).empty());
    const auto xu = metric_terms(chip, quantity::kXuInstructions, CounterSet::kFull);
    REQUIRE(xu.size() == 1);
    CHECK(xu[0].metric == "sm__inst_executed_pipe_xu.sum");
    CHECK(metric_terms(chip, quantity::kSharedWavefronts, CounterSet::kRoofline).empty());
    // The hardware total (every operation, as ncu counts it), not a sum of SASS op_* terms.
    const auto shared = metric_terms(chip, quantity::kSharedWavefronts, CounterSet::kFull);
    REQUIRE(shared.size() == 1);
    CHECK(shared[0].metric == "l1tex__data_pipe_lsu_wavefronts_mem_shared.sum");
  }
  const auto gmma = metric_terms("GH100", quantity::kSharedWavefrontsGmma, CounterSet::kFull);
  REQUIRE(gmma.size() == 1);
  CHECK(gmma[0].metric == "sm__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_gmma.sum");
  CHECK(metric_terms("GA100", quantity::kSharedWavefrontsGmma, CounterSet::kFull).empty());
}

TEST_CASE("analysis: counted shared wavefronts make a wgmma kernel's L1/shared level whole") {
  const GpuSpec& h200 = registry().find("h200");
  Row row = model_row("flash-v3", shape(8192, 64, false, Pass::kForward), h200);
  row.timing = Timing{{1.6e-3}, 0, 0};
  row.counters = {{quantity::kTensorWgmma, row.prediction.model_flops},
                  {quantity::kDramRead, 1e8},
                  {quantity::kDramWrite, 1e7},
                  {quantity::kL1, 2e8}};
  const RowAnalysis partial = analyze(row, h200);
  const LevelAnalysis* l1 = nullptr;
  for (const LevelAnalysis& level : partial.levels)
    if (level.level == MemoryLevel::kL1) l1 = &level;
  REQUIRE(l1 != nullptr);
  CHECK(l1->partial);

  row.counters[quantity::kSharedWavefronts] = 1e9;
  row.counters[quantity::kSharedWavefrontsGmma] = 9e8;
  const RowAnalysis whole = analyze(row, h200);
  l1 = nullptr;
  for (const LevelAnalysis& level : whole.levels)
    if (level.level == MemoryLevel::kL1) l1 = &level;
  REQUIRE(l1 != nullptr);
  CHECK_FALSE(l1->partial);
  CHECK(l1->bytes == doctest::Approx(2e8 + 128 * 1e9));
}

TEST_CASE("exp model: flash-v3 backward at d = 64 walks 128-query stages, as its kernel does") {
  // B1 H1 N3000: 24 CTAs of 128 keys (two warpgroups of 64, the last one all past N, still
  // computed), over 24 stages of 128 queries (N padded to 3072); causal, a warpgroup starts at
  // the stage holding its CTA's first key and skips stages wholly before its keys. The exp2
  // counts of the kernel's loops: 3072 × 3072 and 4,915,200.
  const auto p =
      predict_exponentials(find_kernel_model("flash-v3"), shape(3000, 64, false, Pass::kBackward));
  REQUIRE_FALSE(p.terms.empty());
  CHECK(p.terms.front().value == doctest::Approx(3072.0 * 3072));
  const auto causal =
      predict_exponentials(find_kernel_model("flash-v3"), shape(3000, 64, true, Pass::kBackward));
  CHECK(causal.terms.front().value == doctest::Approx(4915200));
  // The prepare kernel's rows are padded to the stage too: 3 XU instructions × d/8 threads.
  CHECK(p.terms[1].value == doctest::Approx(3.0 * 3072 * 64 / 8));
}
