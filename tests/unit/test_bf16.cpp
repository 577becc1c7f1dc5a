// BF16 workloads without a GPU: --dtype on the command line (and flash-v1's refusal), the dtype
// in reports (JSON, CSV, table) and its absence in old reports, row matching that never pairs
// different dtypes, and the tensor ceilings per dtype from the specs.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "lib/core/base/errors.hpp"
#include "lib/core/base/text.hpp"
#include "lib/core/compare/row_match.hpp"
#include "lib/core/domain/gpu_spec.hpp"
#include "lib/core/model/model.hpp"
#include "lib/core/report/report_read.hpp"
#include "lib/core/report/verification.hpp"
#include "lib/core/verdict/analysis.hpp"
#include "lib/core/writers/report_writers.hpp"
#include "tests/unit/helpers.hpp"

using namespace roofline;
using nlohmann::json;

namespace {

Row model_row(const std::string& kernel, DType dtype, const GpuSpec& spec) {
  Row row;
  row.kernel = kernel;
  row.workload.seq_len = 4096;
  row.workload.dtype = dtype;
  row.spec_key = spec.key;
  row.prediction = predict(find_kernel_model(kernel), row.workload, spec);
  return row;
}

Report model_report(const std::vector<Row>& rows, const GpuSpec& spec) {
  Report report;
  report.context = make_context("model");
  report.specs.push_back(spec);
  report.rows = rows;
  return report;
}

GpuSpec spec_named(const char* name) {
  SpecRegistry registry;
  registry.add_directory(ROOFLINE_TEST_SPECS_DIR);
  return registry.find(name);
}

}  // namespace

TEST_CASE("bf16: dtype names parse both ways and the label names BF16 only") {
  CHECK(to_string(DType::kFp16) == "fp16");
  CHECK(to_string(DType::kBf16) == "bf16");
  CHECK(parse_dtype("bf16") == DType::kBf16);
  CHECK(parse_dtype("fp16") == DType::kFp16);
  CHECK_FALSE(parse_dtype("fp32").has_value());
  Workload w;
  CHECK(w.label() == "B1 H8 N1024 d64 full fwd");  // FP16 labels as before BF16 existed
  w.dtype = DType::kBf16;
  CHECK(w.label() == "B1 H8 N1024 d64 full fwd bf16");
  CHECK_NOTHROW(w.validate());
}

TEST_CASE("bf16: --dtype on model, and flash-v1 refused in one line with exit 2") {
  const CliResult r = cli(
      {"model", "--gpu", "h100", "--seq", "4096", "--no-causal", "--dtype", "bf16", "--json", "-"});
  REQUIRE(r.code == 0);
  const json j = json::parse(r.out);
  // Without --kernel: the kernels that run BF16 (flash-v1 is FP16 only).
  REQUIRE(j["rows"].size() == 3);
  for (const json& row : j["rows"]) {
    CAPTURE(row["kernel"]);
    CHECK(row["kernel"] != "flash-v1");
    CHECK(row["workload"]["dtype"] == "bf16");
    CHECK(row["analysis"]["ceiling"]["id"].get<std::string>().rfind("tensor_bf16", 0) == 0);
  }
  CHECK(j["rows"][1]["analysis"]["ceiling"]["id"] == "tensor_bf16.mma_sync");  // flash-v2
  CHECK(j["rows"][2]["analysis"]["ceiling"]["id"] == "tensor_bf16.wgmma");     // flash-v3

  const CliResult fp16 =
      cli({"model", "--gpu", "h100", "--seq", "4096", "--no-causal", "--json", "-"});
  REQUIRE(fp16.code == 0);
  const json k = json::parse(fp16.out);
  REQUIRE(k["rows"].size() == 4);
  CHECK(k["rows"][0]["workload"]["dtype"] == "fp16");
  CHECK(k["rows"][2]["analysis"]["ceiling"]["id"] == "tensor_fp16.mma_sync");
  // Bytes and FLOPs do not depend on the dtype.
  CHECK(k["rows"][2]["model"]["algorithmic_flops"] == j["rows"][1]["model"]["algorithmic_flops"]);
  CHECK(k["rows"][2]["model"]["dram_bytes"] == j["rows"][1]["model"]["dram_bytes"]);

  // `run` shares these options (SweepOptions) and refuses the same way before touching a GPU.
  TempDir dir;
  const std::string out = (dir.path / "r.json").string();
  struct Case {
    std::vector<std::string> args;
    std::string message;
  } cases[] = {
      {{"model", "--dtype", "bf16", "--kernel", "flash-v1", "--json", out},
       "error: --dtype bf16: flash-v1 runs FP16 only (BF16 kernels: standard, flash-v2, "
       "flash-v3, flash-decode)\n"},
      {{"model", "--dtype", "fp32", "--json", out}, "error: "},
  };
  for (const Case& c : cases) {
    CAPTURE(join(c.args, " "));
    const CliResult bad = cli(c.args);
    CHECK(bad.code == 2);
    CHECK(bad.err.rfind(c.message, 0) == 0);
    CHECK(std::count(bad.err.begin(), bad.err.end(), '\n') == 1);
    CHECK_FALSE(std::filesystem::exists(out));
  }
}

TEST_CASE("bf16: the dtype goes through JSON, CSV and the table, and old reports read as FP16") {
  const GpuSpec spec = spec_named("h200");
  const Report report = model_report(
      {model_row("flash-v2", DType::kBf16, spec), model_row("flash-v2", DType::kFp16, spec)}, spec);
  const json written = report_to_json(report);
  CHECK(written["rows"][0]["workload"]["dtype"] == "bf16");
  CHECK(written["rows"][1]["workload"]["dtype"] == "fp16");
  const Report again = report_from_json(written, "mem");
  REQUIRE(again.rows.size() == 2);
  CHECK(again.rows[0].workload.dtype == DType::kBf16);
  CHECK(again.rows[1].workload.dtype == DType::kFp16);
  CHECK(render_json(again) == render_json(report));

  // A report written before BF16 existed: no dtype key at all.
  // (Its BF16 row read as FP16 would duplicate the FP16 row, which readers refuse: keep one.)
  json old = written;
  old["rows"].erase(1);
  old["rows"][0]["workload"].erase("dtype");
  const Report read_old = report_from_json(old, "old.json");
  REQUIRE(read_old.rows.size() == 1);
  CHECK(read_old.rows[0].workload.dtype == DType::kFp16);
  // The same pair with dtypes is two rows, not duplicates.
  CHECK(report_from_json(written, "new.json").rows.size() == 2);

  const std::string csv = render_csv(report);
  const std::vector<std::string> lines = split(csv, '\n');
  REQUIRE(lines.size() >= 3);
  CHECK(lines[0].find(",pass,dtype,spec,") != std::string::npos);
  CHECK(lines[1].find(",fwd,bf16,h200-sxm,") != std::string::npos);
  CHECK(lines[2].find(",fwd,fp16,h200-sxm,") != std::string::npos);

  const std::string table = render_table(report);
  CHECK(table.find("N4096 d64 full fwd bf16") != std::string::npos);
  CHECK(table.find("tensor BF16 (mma_sync)") != std::string::npos);
  CHECK(table.find("tensor FP16 (mma_sync)") != std::string::npos);
}

TEST_CASE("bf16: row matching never pairs different dtypes") {
  const GpuSpec spec = spec_named("h200");
  const Report base = model_report(
      {model_row("flash-v2", DType::kFp16, spec), model_row("flash-v3", DType::kBf16, spec)}, spec);
  const Report head = model_report(
      {model_row("flash-v2", DType::kBf16, spec), model_row("flash-v3", DType::kBf16, spec)}, spec);
  const RowMatching m = match_rows(base, head, {}, "base.json", "head.json");
  REQUIRE(m.matched.size() == 1);  // flash-v3 BF16 with itself; flash-v2 FP16 and BF16 apart
  CHECK(m.matched[0].base_index == 1);
  CHECK(m.matched[0].head_index == 1);
  REQUIRE(m.only_base.size() == 1);
  CHECK(m.only_base[0] == 0);
  REQUIRE(m.only_head.size() == 1);
  CHECK(m.only_head[0] == 0);

  // Nor across a kernel pair, nor when another spec leaves one candidate on each side.
  KernelPair pair{"flash-v2", "flash-v2"};
  CHECK(match_rows(base, head, pair, "base.json", "head.json").matched.empty());
  Report other = head;
  GpuSpec renamed = spec;
  renamed.key = "h200-custom";
  other.specs = {renamed};
  for (Row& row : other.rows) row.spec_key = renamed.key;
  const RowMatching n = match_rows(base, other, {}, "base.json", "other.json");
  REQUIRE(n.matched.size() == 1);
  CHECK(n.matched[0].base_index == 1);
}

TEST_CASE("bf16: tensor peaks per dtype come from the spec files") {
  SpecRegistry registry;
  registry.add_directory(ROOFLINE_TEST_SPECS_DIR);
  for (const GpuSpec& spec : registry.all()) {
    CAPTURE(spec.key);
    const ComputeCeiling* fp16 = spec.ceiling(ComputePath::kTensorFp16);
    const ComputeCeiling* bf16 = spec.ceiling(ComputePath::kTensorBf16);
    // V100 (sm_70) has no BF16 tensor cores; every later part has them at the FP16 rate.
    if (spec.compute_capability == "7.0") {
      CHECK(bf16 == nullptr);
      continue;
    }
    REQUIRE(fp16 != nullptr);
    REQUIRE(bf16 != nullptr);
    CHECK_FALSE(bf16->source.empty());
    CHECK(bf16->peak_tflops == doctest::Approx(fp16->peak_tflops));
    for (TensorInstruction instruction : {TensorInstruction::kMmaSync, TensorInstruction::kWgmma}) {
      const ComputeCeiling* a = spec.ceiling(ComputePath::kTensorFp16, instruction);
      const ComputeCeiling* b = spec.ceiling(ComputePath::kTensorBf16, instruction);
      // Each instruction with an FP16 roof has a BF16 one, so BF16 rows are never judged
      // against a fallback.
      CHECK((a == nullptr) == (b == nullptr));
      if (a != nullptr && b != nullptr) {
        CHECK(b->peak_tflops == doctest::Approx(a->peak_tflops));
        CHECK(b->clock_mhz == doctest::Approx(a->clock_mhz));
      }
    }
  }
  // A BF16 row of the analysis is judged on the BF16 ceiling, an FP16 row on the FP16 one.
  const GpuSpec h200 = spec_named("h200");
  const Row bf16_row = model_row("flash-v3", DType::kBf16, h200);
  const Row fp16_row = model_row("flash-v3", DType::kFp16, h200);
  const RowAnalysis a = analyze(bf16_row, h200, false);
  const RowAnalysis b = analyze(fp16_row, h200, false);
  REQUIRE(a.ceiling != nullptr);
  REQUIRE(b.ceiling != nullptr);
  CHECK(a.ceiling->id() == "tensor_bf16.wgmma");
  CHECK(b.ceiling->id() == "tensor_fp16.wgmma");
  CHECK(a.warnings.empty());
}

TEST_CASE("bf16: verification's allowance is 2x the plain implementation of the same dtype") {
  // A BF16 kernel whose error is 1.5x the plain BF16 implementation's passes; it would fail
  // against the FP16 baseline (about 8x smaller), which the rule never uses for BF16 rows.
  OutputErrors o{"o", 1000, 3e-2, 0.15, 20.0, 2e-2, 0.1};
  const Verification v = judge_verification({o}, DType::kBf16);
  CHECK(v.passed);
  OutputErrors too_far = o;
  too_far.l2_diff = 0.25;
  const Verification w = judge_verification({too_far}, DType::kBf16);
  CHECK_FALSE(w.passed);
  CHECK(describe_failure(w, DType::kBf16).find("2× the BF16 reference's") != std::string::npos);
  CHECK(describe_failure(w).find("2× the FP16 reference's") != std::string::npos);
  // torch.testing's atol is 1e-5 for both types.
  CHECK(verification_atol({o}, DType::kBf16) == doctest::Approx(verification_atol({o})));
}
