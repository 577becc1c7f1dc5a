#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "lib/core/base/errors.hpp"
#include "lib/core/base/output.hpp"
#include "lib/core/base/text.hpp"
#include "lib/core/domain/metric_catalog.hpp"
#include "lib/core/model/model.hpp"
#include "lib/core/report/report_read.hpp"
#include "lib/core/writers/report_writers.hpp"
#include "tests/unit/helpers.hpp"

using namespace roofline;
using nlohmann::json;

namespace {

Report sample_report() {
  SpecRegistry registry;
  registry.add_directory(ROOFLINE_TEST_SPECS_DIR);
  Report report;
  report.context = make_context("run");
  report.context.device =
      DeviceInfo{"NVIDIA H200", "GH100", "9.0", 132, 150754820096, 62914560, "580.1", "13.0"};
  report.context.counters = "test";
  report.specs.push_back(registry.find("h200"));
  for (const char* kernel : {"standard", "flash-v2"}) {
    Row row;
    row.kernel = kernel;
    row.workload.seq_len = 4096;
    row.spec_key = "h200-sxm";
    row.prediction = predict(find_kernel_model(kernel), row.workload);
    row.timing = Timing{{1.0e-3, 1.1e-3, 0.9e-3}, 1980, 1965};
    row.counters = {
        {quantity::kDramRead, 5e8}, {quantity::kDramWrite, 1e8}, {quantity::kTensorMmaSync, 3e10}};
    row.verification = Verification{true, 1e-4, 2e-3, 2e-4, 3e-3, "o"};
    report.rows.push_back(row);
  }
  report.rows[0].timing->sm_clock_timed_mhz = 1530;
  report.rows[0].timing->clock_limit = "power cap";
  report.rows[1].status = RowStatus::kIncorrect;
  report.rows[1].message = "error 3e-2 above tolerance";
  return report;
}

}  // namespace

TEST_CASE("report json: golden keys and types") {
  const json j = report_to_json(sample_report());
  CHECK(j["schema_version"] == kReportSchemaVersion);
  CHECK(j["tool"]["name"] == "cuflash-roofline");
  CHECK(j["context"]["device"]["name"] == "NVIDIA H200");
  CHECK(j["context"]["projection"].is_boolean());
  CHECK(j["specs"]["h200-sxm"]["memory_levels"].is_array());
  const json& row = j["rows"][0];
  for (const char* key : {"kernel", "workload", "spec", "status", "message", "model", "timing",
                          "counters", "verification", "analysis"})
    CHECK_MESSAGE(row.contains(key), key);
  CHECK(row["workload"]["seq_len"] == 4096);
  CHECK(row["workload"]["pass"] == "fwd");
  CHECK(row["timing"]["samples_seconds"].size() == 3);
  CHECK(row["timing"]["median_seconds"].get<double>() == doctest::Approx(1.0e-3));
  CHECK(row["counters"]["dram_read_bytes"].get<double>() == 5e8);
  const json& a = row["analysis"];
  CHECK(a["time_seconds"]["source"] == "measured");
  CHECK(a["algorithmic_flops"]["source"] == "model");
  CHECK(a["flops"]["source"] == "measured");
  CHECK(a["levels"][0]["level"] == "dram");
  CHECK(a["levels"][0]["bytes"]["value"].get<double>() == 6e8);
  CHECK(a["levels"][0]["bytes"]["source"] == "measured");
  CHECK(a["levels"][0]["peak_bandwidth_gbps"]["source"] == "spec");
  CHECK(a["levels"][0]["intensity_flop_per_byte"]["value"].get<double>() == doctest::Approx(50));
  CHECK(a["ceiling"]["id"] == "tensor_fp16.mma_sync");
  CHECK(a["regime"].is_string());
  CHECK(a["ridge_distance"].is_string());
  CHECK(j["rows"][1]["status"] == "incorrect");
}

TEST_CASE("report json: round trip keeps the raw quantities") {
  const Report report = sample_report();
  const Report again = report_from_json(report_to_json(report), "mem");
  REQUIRE(again.rows.size() == report.rows.size());
  for (std::size_t i = 0; i < report.rows.size(); ++i) {
    CHECK(again.rows[i].kernel == report.rows[i].kernel);
    CHECK(again.rows[i].workload == report.rows[i].workload);
    CHECK(again.rows[i].status == report.rows[i].status);
    CHECK(again.rows[i].counters == report.rows[i].counters);
    CHECK(again.rows[i].timing->samples_seconds == report.rows[i].timing->samples_seconds);
    CHECK(again.rows[i].prediction.model_dram_bytes == report.rows[i].prediction.model_dram_bytes);
    CHECK(again.rows[i].prediction.byte_terms.size() ==
          report.rows[i].prediction.byte_terms.size());
  }
  CHECK(again.rows[0].timing->sm_clock_timed_mhz == 1530);
  CHECK(again.rows[0].timing->clock_limit == "power cap");
  CHECK(again.rows[1].timing->sm_clock_timed_mhz == 0);  // written as null: unknown
  CHECK(again.rows[1].timing->clock_limit.empty());
  CHECK(again.context.device->chip == "GH100");
  CHECK(render_json(again) == render_json(report));
}

TEST_CASE("report json: a row's share run reads back, and a bad one is refused") {
  Report report = sample_report();
  report.rows[0].share_run = ShareRun{16, 2.5e-3, {{MemoryLevel::kDram, 6e8}}, "few.json"};
  const json j = report_to_json(report);
  CHECK(j["rows"][0]["share_run"]["sms"] == 16);
  CHECK(j["rows"][0]["share_run"]["bytes"]["dram"].get<double>() == 6e8);
  CHECK_FALSE(j["rows"][1].contains("share_run"));
  const Report again = report_from_json(j, "mem");
  CHECK(again.rows[0].share_run == report.rows[0].share_run);
  CHECK_FALSE(again.rows[1].share_run.has_value());
  json bad = j;
  bad["rows"][0]["share_run"]["bytes"]["hbm"] = 1;
  CHECK_THROWS_WITH_AS(report_from_json(bad, "mem"),
                       doctest::Contains("rows[0].share_run.bytes.hbm: must be dram, l2 or l1"),
                       InputError);
  bad = j;
  bad["rows"][0]["share_run"]["seconds"] = 0;
  CHECK_THROWS_AS(report_from_json(bad, "mem"), InputError);
}

TEST_CASE(
    "report json: every model row the tool writes reads back (every kernel, pass, mask, spec)") {
  // The cache-aware model subtracts the outputs still in L2 at the kernel's end (a negative
  // term): a reader that took every term for a byte count refused the tool's own reports.
  SpecRegistry registry;
  registry.add_directory(ROOFLINE_TEST_SPECS_DIR);
  for (const GpuSpec& spec : registry.all()) {
    Report report;
    report.context = make_context("model");
    report.specs.push_back(spec);
    for (const KernelModel& kernel : kernel_models())
      for (int seq : {1, 1000, 1024, 4096, 16384})
        for (int head_dim : kernel.head_dims)
          for (bool causal : {false, true})
            for (Pass pass : {Pass::kForward, Pass::kBackward}) {
              if (pass == Pass::kBackward && !kernel.has_backward) continue;
              Row row;
              row.kernel = kernel.name;
              row.workload.seq_len = seq;
              row.workload.head_dim = head_dim;
              row.workload.causal = causal;
              row.workload.pass = pass;
              if (kernel.decode_only) {  // decode rows: GQA, a paged cache past 1000 keys
                row.workload.q_len = causal && seq >= 4 ? 4 : 1;
                row.workload.kv_heads = 2;
                row.workload.page_size = seq > 1000 ? 16 : 0;
              }
              row.spec_key = spec.key;
              row.prediction = predict(kernel, row.workload, spec);
              report.rows.push_back(row);
            }
    CAPTURE(spec.key);
    const std::string text = render_json(report);
    Report again;
    CHECK_NOTHROW(again = report_from_json(json::parse(text), "model.json"));
    CHECK(render_json(again) == text);
  }
}

TEST_CASE("report json: the cache-aware terms (some negative) and the L1 terms read back") {
  Report report = sample_report();
  const GpuSpec& h200 = report.specs.at(0);
  for (Row& row : report.rows) {
    row.workload.pass = Pass::kBackward;
    row.workload.seq_len = 1023;
    row.prediction = predict(find_kernel_model(row.kernel), row.workload, h200);
  }
  // The L2 hits of the cache-aware model are subtracted terms.
  bool negative = false;
  for (const ModelTerm& term : report.rows[1].prediction.cache_aware_byte_terms)
    negative = negative || term.value < 0;
  CHECK(negative);
  CHECK(report.rows[0].prediction.model_l1_bytes > 0);
  CHECK(report.rows[1].prediction.l1_byte_terms.empty());
  const Report again = report_from_json(report_to_json(report), "mem");
  for (std::size_t i = 0; i < report.rows.size(); ++i) {
    const Prediction& p = report.rows[i].prediction;
    const Prediction& q = again.rows[i].prediction;
    CHECK(q.cache_aware_byte_terms.size() == p.cache_aware_byte_terms.size());
    CHECK(q.model_l1_bytes == p.model_l1_bytes);
    CHECK(q.l1_byte_terms.size() == p.l1_byte_terms.size());
  }
  CHECK(render_json(again) == render_json(report));
}

TEST_CASE("report: an unsupported row keeps its status and reason through JSON and the table") {
  Report report = sample_report();
  Row& row = report.rows[1];
  row.status = RowStatus::kUnsupported;
  row.message = "flash-v3 is built for compute capability 9.0 only (this GPU: 8.0)";
  row.timing.reset();
  row.counters.clear();
  row.verification.reset();
  const json j = report_to_json(report);
  CHECK(j["rows"][1]["status"] == "unsupported");
  const Report again = report_from_json(j, "mem");
  CHECK(again.rows[1].status == RowStatus::kUnsupported);
  CHECK(again.rows[1].message == row.message);
  CHECK(parse_row_status("unsupported") == RowStatus::kUnsupported);
  const std::string table = render_table(again);
  CHECK(table.find("unsupported") != std::string::npos);
  CHECK(table.find("compute capability 9.0 only") != std::string::npos);
}

TEST_CASE("report json: readers reject what they do not understand") {
  json j = report_to_json(sample_report());
  j["schema_version"] = 2;
  CHECK_THROWS_WITH_AS(report_from_json(j, "old.json"),
                       "old.json: schema_version 2 is not supported (this tool reads 1)",
                       InputError);
  j.erase("schema_version");
  CHECK_THROWS_WITH_AS(report_from_json(j, "x.json"),
                       "x.json: schema_version: missing (not a cuflash-roofline report?)",
                       InputError);
  json k = report_to_json(sample_report());
  k["rows"][0]["workload"].erase("seq_len");
  CHECK_THROWS_WITH_AS(report_from_json(k, "r.json"), "r.json: rows[0].workload.seq_len: missing",
                       InputError);
  json s = report_to_json(sample_report());
  s["rows"][0]["spec"] = "nope";
  CHECK_THROWS_WITH_AS(report_from_json(s, "s.json"),
                       "s.json: rows[0].spec: \"nope\" is not among the report's specs",
                       InputError);
  TempDir dir;
  write_text(dir.path / "bad.json", "not json");
  CHECK_THROWS_AS(read_report_file(dir.path / "bad.json"), InputError);
  CHECK_THROWS_WITH_AS(
      read_report_file(dir.path / "missing.json"),
      ("cannot read " + (dir.path / "missing.json").string() + ": No such file or directory")
          .c_str(),
      InputError);
}

TEST_CASE("report csv: header, plain numbers, one line per row") {
  const std::string csv = render_csv(sample_report());
  const std::vector<std::string> lines = split(csv, '\n');
  REQUIRE(lines.size() == 4);  // header, 2 rows, trailing empty
  CHECK(lines[0] == join(csv_columns(), ","));
  const std::vector<std::string> cells = split(lines[1], ',');
  REQUIRE(cells.size() == csv_columns().size());
  CHECK(cells[0] == "standard");
  CHECK(cells[3] == "4096");
  CHECK(cells[7] == "fp16");    // dtype
  CHECK(cells[10] == "0.001");  // time_s, median
  CHECK(cells[11] == "measured");
  CHECK(cells[21] == "600000000");  // dram_bytes
  CHECK(lines[2].find("\"error 3e-2 above tolerance\"") ==
        std::string::npos);  // no comma: unquoted
  CHECK(lines[2].rfind("flash-v2,", 0) == 0);
}

TEST_CASE("report table: units in headers, provenance marked") {
  Report report = sample_report();
  report.rows[1].status = RowStatus::kOk;
  report.rows[1].counters.clear();
  const std::string table = render_table(report);
  CHECK(table.find("TFLOP/s") != std::string::npos);
  CHECK(table.find("DRAM GB/s") != std::string::npos);
  CHECK(table.find("AI FLOP/B") != std::string::npos);
  CHECK(table.find("measured on NVIDIA H200") != std::string::npos);
  CHECK(table.find("* model: not measured") != std::string::npos);
}

TEST_CASE("output: atomic writes and early path checks") {
  TempDir dir;
  const std::string target = (dir.path / "out.json").string();
  write_output(target, "hello\n");
  CHECK(read_text(target) == "hello\n");
  CHECK_THROWS_WITH_AS(check_output_path((dir.path / "no" / "x.json").string()),
                       ("cannot write " + (dir.path / "no" / "x.json").string() + ": directory " +
                        (dir.path / "no").string() + " does not exist")
                           .c_str(),
                       InputError);
  CHECK_THROWS_WITH_AS(check_output_path(dir.path.string()),
                       ("cannot write " + dir.path.string() + ": is a directory").c_str(),
                       InputError);
  // Nothing but the target is left behind.
  int files = 0;
  for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator(dir.path)) ++files;
  CHECK(files == 1);
}
