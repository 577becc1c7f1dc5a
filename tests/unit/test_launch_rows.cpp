// Rows of a profiled launch (KernelLaunch): names, JSON round trip, CSV, table, matching, plot.
#include <doctest/doctest.h>

#include <cmath>

#include <nlohmann/json.hpp>

#include "lib/core/base/errors.hpp"
#include "lib/core/base/text.hpp"
#include "lib/core/chart/chart.hpp"
#include "lib/core/chart/svg_chart.hpp"
#include "lib/core/compare/row_match.hpp"
#include "lib/core/domain/metric_catalog.hpp"
#include "lib/core/report/report_read.hpp"
#include "lib/core/verdict/analysis.hpp"
#include "lib/core/verdict/report_notes.hpp"
#include "lib/core/writers/report_writers.hpp"

using namespace roofline;
using nlohmann::json;

namespace {

Row launch_row(const std::string& demangled, int grid_x, std::int64_t index) {
  Row row;
  row.kernel = short_kernel_name(demangled);
  row.spec_key = "h200-sxm";
  KernelLaunch launch;
  launch.mangled_name = "_Z6kernelv";
  launch.demangled_name = demangled;
  launch.nvtx_range = "step / attention";
  launch.grid = {grid_x, 8, 1};
  launch.block = {128, 1, 1};
  launch.registers_per_thread = 96;
  launch.static_shared_bytes = 16384;
  launch.dynamic_shared_bytes = 32768;
  launch.index = index;
  launch.stream_id = 7;
  launch.process_id = 4242;
  launch.process = "python3";
  row.launch = launch;
  row.timing = Timing{{2.0e-4}, 0, 0};
  row.counters = {{quantity::kDramRead, 4e7},
                  {quantity::kDramWrite, 1e7},
                  {quantity::kL2, 3e8},
                  {quantity::kTensorMmaSync, 6e10},
                  {quantity::kSmClock, 1.9e9}};
  return row;
}

Report launch_report() {
  SpecRegistry registry;
  registry.add_directory(ROOFLINE_TEST_SPECS_DIR);
  Report report;
  report.context = make_context("profile");
  report.context.device =
      DeviceInfo{"NVIDIA H200", "GH100", "9.0", 132, 150754820096, 62914560, "580.1", "13.0"};
  report.specs.push_back(registry.find("h200"));
  report.rows.push_back(launch_row("void flash::fwd<Traits<64, 128>, true>(Params)", 32, 3));
  report.rows.push_back(launch_row("void flash::fwd<Traits<64, 128>, true>(Params)", 64, 9));
  return report;
}

}  // namespace

TEST_CASE("short kernel names drop return type, templates and parameters") {
  CHECK(short_kernel_name("void flash::fwd<Traits<64, 128>, true>(Params)") == "flash::fwd");
  CHECK(short_kernel_name("vectorAdd(float const*, float*, int)") == "vectorAdd");
  CHECK(short_kernel_name("void (anonymous namespace)::softmax<float>(float*, int)") ==
        "(anonymous namespace)::softmax");
  CHECK(short_kernel_name("void at::native::vectorized_elementwise_kernel<4, "
                          "at::native::(anonymous namespace)::Op<float>, "
                          "std::array<char*, 2ul> >(int, Op<float>, std::array<char*, 2ul>)") ==
        "at::native::vectorized_elementwise_kernel");
  CHECK(short_kernel_name("plain_c_kernel") == "plain_c_kernel");
  CHECK(short_kernel_name("") == "");
}

TEST_CASE("launch rows: JSON round trip keeps the launch and writes no workload") {
  const Report report = launch_report();
  const json j = report_to_json(report);
  const json& row = j["rows"][0];
  CHECK(row["workload"].is_null());
  CHECK(row["launch"]["grid"] == json::array({32, 8, 1}));
  CHECK(row["launch"]["process_id"] == 4242);
  CHECK(row["launch"]["nvtx_range"] == "step / attention");
  const Report again = report_from_json(j, "p.json");
  REQUIRE(again.rows.size() == 2);
  REQUIRE(again.rows[0].launch.has_value());
  CHECK(*again.rows[0].launch == *report.rows[0].launch);
  CHECK_FALSE(has_workload(again.rows[0]));
  CHECK(row_label(again.rows[0]) == "grid 32x8x1 block 128x1x1 #3");

  json bad = j;
  bad["rows"][0]["launch"]["grid"] = json::array({1, 2});
  CHECK_THROWS_WITH_AS(report_from_json(bad, "p.json"),
                       "p.json: rows[0].launch.grid: must be three integers", InputError);
  json no_launch = j;
  no_launch["rows"][0].erase("launch");
  CHECK_THROWS_WITH_AS(report_from_json(no_launch, "p.json"),
                       "p.json: rows[0].workload: null only for a launch without workload",
                       InputError);
}

TEST_CASE("launch rows: a workload named by NVTX survives the round trip") {
  Report report = launch_report();
  report.rows[0].launch->workload_known = true;
  report.rows[0].workload.seq_len = 8192;
  const Report again = report_from_json(report_to_json(report), "p.json");
  CHECK(has_workload(again.rows[0]));
  CHECK(again.rows[0].workload.seq_len == 8192);
  CHECK(row_label(again.rows[0]) == again.rows[0].workload.label());
}

TEST_CASE("launch rows: counted FLOPs judge them, missing FLOPs are said") {
  const Report report = launch_report();
  const RowAnalysis a = analyze(report.rows[0], report.specs[0]);
  CHECK(a.flops == doctest::Approx(6e10));
  CHECK(a.flops_source == Source::kMeasured);
  REQUIRE(a.ceiling != nullptr);
  CHECK(a.dram()->bytes == doctest::Approx(5e7));

  Row uncounted = report.rows[0];
  uncounted.counters.erase(quantity::kTensorMmaSync);
  const RowAnalysis b = analyze(uncounted, report.specs[0]);
  // A bandwidth verdict: no FLOP ceiling, the binding level's share of its bandwidth.
  CHECK(b.bandwidth_only);
  CHECK(b.ceiling == nullptr);
  CHECK(b.warnings.empty());
  REQUIRE(b.footnotes.size() == 1);
  CHECK(b.footnotes[0].kind == NoteKind::kBytesOnly);
  CHECK(b.footnotes[0].text.find("judged on bytes alone") != std::string::npos);
  CHECK(b.footnotes[0].text.find("--counter-set full") != std::string::npos);
  // 5e7 DRAM bytes in 200 us: 250 GB/s of the H200's 4800 (5%); 3e8 L2 bytes bind if the spec
  // has an L2 bandwidth, else DRAM does.
  CHECK(b.regime.rfind("memory-bound: ", 0) == 0);
  CHECK(b.regime.find("% of ") != std::string::npos);
  CHECK_FALSE(b.compute_bound);
  CHECK(b.time_floor_seconds > 0);
  CHECK(b.fraction_of_bound == doctest::Approx(b.time_floor_seconds / 2.0e-4));
  CHECK(std::isnan(b.attainable_flops_per_second));

  // A profiled launch whose tensor FLOPs were counted keeps its FLOP verdict.
  CHECK_FALSE(a.bandwidth_only);
}

TEST_CASE("launch rows: warnings once per cause with their count, fixed properties as footnotes") {
  Report report = launch_report();
  for (Row& row : report.rows) row.counters.erase(quantity::kTensorMmaSync);
  Row timed = report.rows[0];
  timed.status = RowStatus::kCountersUnavailable;
  timed.message = "another process kept the counters for more than 10 s: kernel time only";
  report.rows.push_back(timed);
  timed.message = "another process kept the counters for more than 12 s: kernel time only";
  report.rows.push_back(timed);
  const std::vector<ReportNote> warnings = report_warnings(JudgedReport(report));
  REQUIRE(warnings.size() == 1);  // the two messages differ only in a number
  CHECK(warnings[0].rows == 2);
  CHECK(describe(warnings[0]).find("(2 rows, the first: ") != std::string::npos);
  const std::vector<ReportNote> footnotes = report_footnotes(JudgedReport(report));
  REQUIRE(footnotes.size() == 1);
  CHECK(footnotes[0].rows == 4);
  const std::string table = render_table(report, {});
  CHECK(table.find("warning") == std::string::npos);  // warnings are for stderr
  CHECK(table.find("judged on bytes alone") == table.rfind("judged on bytes alone"));
  CHECK(table.find("(4 rows, the first: ") != std::string::npos);
  CHECK(table.find("memory-bound: ") != std::string::npos);
  CHECK(table.find("tensor FP16") == std::string::npos);  // no FLOP ceiling on any row
}

TEST_CASE("launch rows: CSV and table show the launch") {
  const Report report = launch_report();
  const std::vector<std::string> lines = split(render_csv(report), '\n');
  const std::vector<std::string> header = split(lines[0], ',');
  const std::vector<std::string> cells = split(lines[1], ',');
  REQUIRE(cells.size() >= header.size());
  auto cell = [&](const std::string& column) {
    for (std::size_t i = 0; i < header.size(); ++i)
      if (header[i] == column) return cells[i];
    FAIL("no column " << column);
    return std::string();
  };
  CHECK(cell("seq_len").empty());
  CHECK(cell("grid") == "32x8x1");
  CHECK(cell("registers_per_thread") == "96");
  CHECK(cell("shared_bytes") == "49152");
  CHECK(cell("process_id") == "4242");
  const std::string table = render_table(report, {});
  CHECK(table.find("grid 32x8x1 block 128x1x1 #3") != std::string::npos);
  CHECK(table.find("60.00") != std::string::npos);  // counted GFLOP
}

TEST_CASE("launch rows: compare matches by kernel and launch shape") {
  const Report base = launch_report();
  Report head = launch_report();
  std::swap(head.rows[0], head.rows[1]);
  const RowMatching m = match_rows(base, head, {}, "base", "head");
  REQUIRE(m.matched.size() == 2);
  CHECK(m.matched[0].head_index == 1);  // grid 32 with grid 32
  CHECK(m.matched[1].head_index == 0);
  head.rows[0].launch->grid = {16, 8, 1};
  CHECK(match_rows(base, head, {}, "base", "head").matched.size() == 1);
}

TEST_CASE("launch rows: plot labels points with the launch index") {
  const Report report = launch_report();
  const std::string svg = render_svg({report});
  CHECK(svg.find("grid 32x8x1 block 128x1x1 #3") != std::string::npos);
  CHECK(svg.find(">#3<") != std::string::npos);
}

TEST_CASE("launch rows: a launch without counted FLOPs is drawn on the bandwidth chart") {
  Report report = launch_report();
  report.rows[1].counters.erase(quantity::kTensorMmaSync);          // #9: bytes alone
  const std::vector<JudgedReport> judged = {JudgedReport(report)};  // the chart points in
  const Chart chart = build_chart(judged, {});
  REQUIRE(chart.panels.size() == 1);
  const ChartPanel& panel = chart.panels[0];
  for (const ChartPoint& p : panel.points) CHECK(p.row == 0);  // only #3 on the roofline
  REQUIRE(panel.bandwidth_points.size() == 2);                 // its DRAM and L2 bytes
  for (const BandwidthPoint& p : panel.bandwidth_points) {
    CHECK(p.row == 1);
    CHECK(p.bytes_per_second == doctest::Approx(p.bytes / 2.0e-4));
  }
  CHECK(panel.notes.back().find("1 launches without counted FLOPs") == 0);
  const std::string svg = render_svg({report});
  CHECK(svg.find("class=\"bandwidth-panel\"") != std::string::npos);
  CHECK(svg.find("data-launches=\"1\"") != std::string::npos);
  CHECK(svg.find("data-bytes=\"50000000\"") != std::string::npos);  // 4e7 + 1e7 DRAM bytes
}
