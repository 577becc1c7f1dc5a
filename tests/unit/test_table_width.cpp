// Tables that fit (issue 24, item 3): the terminal's width decides the columns, --wide prints
// them all and --columns chooses; the workload names B, H, N and d; one FLOP convention per
// view (of bound = TFLOP/s ÷ bound as printed); the chart plots what the table prints and its
// arrows follow compare's verdicts.
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <sstream>

#include "lib/core/base/errors.hpp"
#include "lib/core/base/table_layout.hpp"
#include "lib/core/base/text.hpp"
#include "lib/core/chart/chart.hpp"
#include "lib/core/chart/svg_chart.hpp"
#include "lib/core/chart/terminal_chart.hpp"
#include "lib/core/compare/compare.hpp"
#include "lib/core/compare/compare_writers.hpp"
#include "lib/core/domain/metric_catalog.hpp"
#include "lib/core/report/report_read.hpp"
#include "lib/core/verdict/analysis.hpp"
#include "lib/core/writers/report_writers.hpp"
#include "lib/core/writers/stall_section.hpp"
#include "lib/core/writers/summary.hpp"
#include "tests/unit/helpers.hpp"

using namespace roofline;

namespace {

Report fixture(const std::string& name) {
  return read_report_file(std::filesystem::path(ROOFLINE_TEST_DATA_DIR) / "reports" / name);
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// Every line of `text` fits `width` terminal columns.
void check_fits(const std::string& text, std::size_t width) {
  for (const std::string& line : lines_of(text)) {
    CAPTURE(line);
    CHECK(display_width(line) <= width);
  }
}

// The cells of a table line (columns separated by two or more spaces).
std::vector<std::string> cells_of(const std::string& line) {
  std::vector<std::string> cells;
  std::string cell;
  std::size_t spaces = 0;
  for (char c : line) {
    if (c == ' ') {
      ++spaces;
      continue;
    }
    if (spaces >= 2 && !cell.empty()) {
      cells.push_back(cell);
      cell.clear();
    } else if (spaces == 1) {
      cell += ' ';
    }
    spaces = 0;
    cell += c;
  }
  if (!cell.empty()) cells.push_back(cell);
  return cells;
}

// The table's header line and the lines below it that start with a kernel name.
std::vector<std::vector<std::string>> table_rows(const std::string& text) {
  std::vector<std::vector<std::string>> rows;
  bool in_table = false;
  for (const std::string& line : lines_of(text)) {
    if (line.rfind("kernel  ", 0) == 0) {
      in_table = true;
      rows.push_back(cells_of(line));
      continue;
    }
    if (!in_table) continue;
    if (line.rfind("standard", 0) != 0 && line.rfind("flash", 0) != 0) break;
    rows.push_back(cells_of(line));
  }
  return rows;
}

const std::vector<TableColumn> kColumns = {
    {"name", "name", false, 0, 6, 0},     {"value", "value", true, 1, 0},
    {"detail", "detail", false, 3, 8, 3}, {"extra", "extra", true, 2, 0},
    {"note", "note", false, 4, 0},
};
const std::vector<std::vector<std::string>> kRows = {
    {"alpha-beta-gamma", "1.0", "a long detail text here", "42", "n"},
    {"b", "22.5", "short", "7", "a note"},
};

}  // namespace

TEST_CASE("table width: without a limit every column is printed whole") {
  const FittedTable table = fit_table(kColumns, kRows, {});
  CHECK(table.shown.size() == kColumns.size());
  CHECK(table.left_out.empty());
  CHECK_FALSE(table.cut);
  CHECK(lines_of(table.text).at(1) == "alpha-beta-gamma    1.0  a long detail text here     42  n");
  CHECK(fit_footer(table, 0).empty());
}

TEST_CASE("table width: columns are left out by priority, then text cells cut") {
  // Whole: 16 + 5 + 23 + 5 + 6 + 8 gaps = 63 columns.
  FittedTable table = fit_table(kColumns, kRows, {60, {}});
  CHECK(table.left_out == std::vector<std::string>{"note"});
  CHECK_FALSE(table.cut);
  check_fits(table.text, 60);
  // 40: note goes; then cutting name and detail (which rank above `extra`) cannot save 15
  // columns without going below their min widths... it can: name 16 → 6 and detail 23 → 8
  // give 25. So `extra` stays and the widest text column is cut first.
  table = fit_table(kColumns, kRows, {40, {}});
  CHECK(table.left_out == std::vector<std::string>{"note"});
  CHECK(table.cut);
  check_fits(table.text, 40);
  CHECK(table.text.find("…") != std::string::npos);
  // 25: only priority 0 and 1 fit, cut.
  table = fit_table(kColumns, kRows, {25, {}});
  CHECK(table.left_out == std::vector<std::string>{"detail", "extra", "note"});
  check_fits(table.text, 25);
  CHECK(lines_of(table.text).at(1) == "alpha-beta-gamma    1.0");
  // Narrower than priority 0 at its min width: cut as far as it goes, never dropped.
  table = fit_table(kColumns, kRows, {5, {}});
  CHECK(table.shown == std::vector<std::size_t>{0});
  CHECK(lines_of(table.text).at(1) == "alpha…");
  const std::string footer = fit_footer(table, 40);
  CHECK(footer.find("left out to fit 40 columns: value,\n  detail, extra, note.") !=
        std::string::npos);
  CHECK(footer.find("--wide") != std::string::npos);
  check_fits(footer, 40);
}

TEST_CASE("table width: --columns prints the chosen columns in the given order") {
  const FittedTable table = fit_table(kColumns, kRows, {0, {"EXTRA", "name"}});
  CHECK(table.shown == std::vector<std::size_t>{3, 0});
  CHECK(table.left_out.empty());  // chosen, not left out to fit
  CHECK(lines_of(table.text).at(0) == "extra  name");
  CHECK(lines_of(table.text).at(2) == "    7  b");
}

TEST_CASE("table width: an unknown --columns key names the closest and every key") {
  try {
    check_column_keys({"name", "detial"}, kColumns, "--columns");
    FAIL("no error");
  } catch (const InputError& error) {
    CHECK(std::string(error.what()) ==
          "--columns: no column \"detial\" (did you mean detail?); columns: "
          "name,value,detail,extra,note");
  }
  CHECK_THROWS_WITH_AS(check_column_keys({"name", "Name"}, kColumns, "--columns"),
                       "--columns: column \"Name\" given twice", InputError);
}

TEST_CASE("table width: words wrap to the width, long words are broken") {
  CHECK(wrap_words("one two three", 0) == "one two three\n");
  CHECK(wrap_words("one two three four", 9) == "one two\n  three\n  four\n");
  CHECK(wrap_words("  lead word", 20) == "  lead word\n");
  CHECK(wrap_words("abcdefghij", 4, "") == "abcd\nefgh\nij\n");
  CHECK(elide("regime text", 6) == "regim…");
  CHECK(elide("µs µs", 3) == "µs…");
  CHECK(elide("fits", 4) == "fits");
}

TEST_CASE("table width: a number keeps its unit on its line") {
  // Without the rule these break between 966 and µs, and between 3.2 and TB/s.
  CHECK(wrap_words("took 579 µs, against 966 µs in the graph", 14) ==
        "took 579 µs,\n  against\n  966 µs in\n  the graph\n");
  CHECK(wrap_words("at 3.2 TB/s now", 10) == "at\n  3.2 TB/s\n  now\n");
  // A unit after a word that is not a number, and a number before a word that is not a unit,
  // break as any words do.
  CHECK(wrap_words("many s and 12 apples", 8) == "many s\n  and 12\n  apples\n");
}

TEST_CASE("table width: run, model and merged tables fit 80 and 120 columns") {
  for (const char* name : {"head.json", "model.json", "head_a100.json"}) {
    CAPTURE(name);
    const Report report = fixture(name);
    for (std::size_t width : {80, 120}) {
      CAPTURE(width);
      TableOptions options;
      options.max_width = width;
      const std::string table = render_table(report, options);
      check_fits(table, width);
      CHECK(table.find("left out to fit " + std::to_string(width) + " columns") !=
            std::string::npos);
      // The columns a narrow terminal keeps.
      const auto header = table_rows(table).at(0);
      for (const char* column : {"kernel", "workload", "time", "TFLOP/s", "of bound", "regime"})
        CHECK(std::find(header.begin(), header.end(), column) != header.end());
    }
    // At 80 the regime is in eight characters or fewer ("mem DRAM", "compute", "tail 52%").
    TableOptions narrow;
    narrow.max_width = 80;
    const std::string table = render_table(report, narrow);
    for (const auto& cells : table_rows(table))
      for (const std::string& cell : cells) CHECK(cell.find("-bound") == std::string::npos);
    CHECK(table.find("regime in short:") != std::string::npos);
    CHECK((table.find("  mem ") != std::string::npos ||
           table.find("  compute") != std::string::npos ||
           table.find("  tail ") != std::string::npos));
    // 120 columns also keep the regime and the bound.
    TableOptions options;
    options.max_width = 120;
    const auto header = table_rows(render_table(report, options)).at(0);
    for (const char* column : {"regime", "bound TFLOP/s"})
      CHECK(std::find(header.begin(), header.end(), column) != header.end());
  }
}

TEST_CASE(
    "table width: --wide prints all 16 columns (20 with energy, stalls and the energy model), "
    "--columns the chosen ones") {
  const Report report = fixture("head.json");
  const std::string wide = render_table(report, {});
  // Every column but the measured extras (energy, GFLOP/J, stall) and the energy model, which
  // only reports with such rows show.
  CHECK(table_rows(wide).at(0).size() == report_table_columns().size() - 4);
  CHECK(report_table_columns().back().key == "energy-model");
  CHECK(report_table_columns()[report_table_columns().size() - 4].key == "energy");
  CHECK(wide.find("left out") == std::string::npos);
  TableOptions options;
  options.columns = {"kernel", "of-bound", "regime"};
  const auto rows = table_rows(render_table(report, options));
  CHECK(rows.at(0) == std::vector<std::string>{"kernel", "of bound", "regime"});
  CHECK(rows.at(1).size() == 3);
  options.columns = {"kernel", "rgime"};
  CHECK_THROWS_WITH_AS(render_table(report, options),
                       doctest::Contains("no column \"rgime\" (did you mean regime?)"), InputError);
}

TEST_CASE("table width: the workload names B, H, N and d") {
  const std::string table = render_table(fixture("head.json"), {});
  CHECK(table.find("B1 H8 N1024 d64 causal fwd") != std::string::npos);
  CHECK(table.find("N=1024") == std::string::npos);
}

TEST_CASE("table width: an unsupported row's message is a note, not a column's width") {
  Report report = fixture("model.json");
  for (Row& row : report.rows)
    if (row.kernel == "flash-v1") {
      row.status = RowStatus::kUnsupported;
      row.message = "flash-v1 is not built for this GPU: a long message of several words here";
    }
  TableOptions options;
  options.max_width = 80;
  const std::string table = render_table(report, options);
  check_fits(table, 80);
  CHECK(table.find("note: unsupported (flash-v1 B1 H8 N1024 d64 causal fwd and 7 more): flash-v1 "
                   "is") != std::string::npos);
  // Whole, the regime column is as wide as its widest verdict, not the message.
  const std::string wide = render_table(report, {});
  for (const std::string& line : lines_of(wide))
    if (line.rfind("flash-v1", 0) == 0) CHECK(line.find("see note") != std::string::npos);
}

TEST_CASE("table width: one FLOP convention per view, of bound = TFLOP/s ÷ bound") {
  for (const char* name : {"head.json", "model.json"}) {
    for (FlopConvention convention : {FlopConvention::kAlgorithmic, FlopConvention::kPipe}) {
      CAPTURE(name);
      CAPTURE(to_string(convention));
      const Report report = fixture(name);
      TableOptions options;
      options.columns = {"kernel", "workload", "tflops", "bound", "of-bound"};
      options.flops = convention;
      const std::string table = render_table(report, options);
      CHECK(table.find(convention == FlopConvention::kAlgorithmic
                           ? "FLOPs: FlashAttention convention"
                           : "FLOPs: executed on the kernel's own pipe") != std::string::npos);
      const auto rows = table_rows(table);
      REQUIRE(rows.size() == report.rows.size() + 1);
      for (std::size_t i = 1; i < rows.size(); ++i) {
        const Row& row = report.rows[i - 1];
        const RowAnalysis a = analyze(row, report);
        CAPTURE(rows[i][0] + " " + rows[i][1]);
        const double tflops = std::stod(rows[i][2]);
        const double bound = std::stod(rows[i][3]);
        const double of_bound = std::stod(rows[i][4]) / 100;
        // Printed with one decimal and a whole percent: within their rounding.
        CHECK(tflops / bound == doctest::Approx(of_bound).epsilon(0.01));
        const double expected = convention == FlopConvention::kAlgorithmic
                                    ? a.algorithmic_flops_per_second
                                    : a.flops_per_second;
        CHECK(tflops == doctest::Approx(expected / 1e12).epsilon(0.002));
      }
    }
  }
}

TEST_CASE("table width: the standard kernel's causal rows, in either convention") {
  // cuBLAS computes the whole square: the pipe executes twice the FlashAttention count. The
  // bound is scaled with the rate, so the fraction of it stays the kernel's.
  const Report report = fixture("model.json");
  TableOptions options;
  options.columns = {"kernel", "workload", "tflops", "bound", "of-bound"};
  const auto algorithmic = table_rows(render_table(report, options));
  options.flops = FlopConvention::kPipe;
  const auto pipe = table_rows(render_table(report, options));
  CHECK(algorithmic.at(1) == std::vector<std::string>{"standard", "B1 H8 N1024 d64 causal fwd",
                                                      "50.4*", "50.4", "100%"});
  CHECK(pipe.at(1).at(2) == "102.9*");
  CHECK(pipe.at(1).at(3) == "102.9");
  CHECK(pipe.at(1).at(4) == "100%");
}

TEST_CASE("table width: the chart plots the table's FLOP/s") {
  const std::vector<Report> reports = {fixture("model.json")};
  for (FlopConvention convention : {FlopConvention::kAlgorithmic, FlopConvention::kPipe}) {
    PlotOptions plot;
    plot.flops = convention;
    const std::vector<JudgedReport> judged = {JudgedReport(reports[0])};  // the chart points in
    const Chart chart = build_chart(judged, plot);
    for (const ChartPoint& p : chart.panels.at(0).points) {
      if (p.level != MemoryLevel::kDram) continue;
      const RowAnalysis a = analyze(reports[0].rows[p.row], reports[0]);
      CHECK(p.flops == doctest::Approx(convention == FlopConvention::kAlgorithmic
                                           ? a.algorithmic_flops_per_second
                                           : a.flops_per_second));
    }
  }
}

TEST_CASE("table width: chart arrows carry compare's verdicts") {
  const std::vector<Report> reports = {fixture("base.json"), fixture("head.json")};
  const Comparison comparison = compare_reports(reports[0], reports[1], {}, "base", "head");
  const std::vector<JudgedReport> judged = {JudgedReport(reports[0]), JudgedReport(reports[1])};
  const Chart chart = build_chart(judged, {});
  CHECK(chart.arrow_note.empty());
  std::size_t arrows = 0, same = 0;
  for (const ChartPanel& panel : chart.panels)
    for (const ChartArrow& arrow : panel.arrows) {
      const ChartPoint& from = panel.points[arrow.from];
      const ChartPoint& to = panel.points[arrow.to];
      REQUIRE(arrow.verdict.has_value());
      bool found = false;
      for (const RowComparison& row : comparison.rows)
        if (row.base_index == from.row && row.head_index == to.row) {
          CHECK(*arrow.verdict == row.verdict);
          found = true;
        }
      CHECK(found);
      ++arrows;
      if (*arrow.verdict == Verdict::kSame) ++same;
    }
  CHECK(arrows == comparison.rows.size());
  CHECK(same == comparison.count(Verdict::kSame));
  // In the SVG, a `same` arrow shows no change: its label (if any) reads "same".
  const std::string svg = render_svg(reports, {});
  std::size_t at = 0;
  while ((at = svg.find("data-verdict=\"same\"", at)) != std::string::npos) {
    const std::size_t end = svg.find("</g>", at);
    const std::string arrow = svg.substr(at, end - at);
    if (arrow.find("arrow-label") != std::string::npos) {
      CHECK(arrow.find(">same</text>") != std::string::npos);
      CHECK(arrow.find("%</text>") == std::string::npos);
    }
    at = end;
  }
  // Model reports have no timing samples: compare cannot judge them, and the chart says so.
  const std::vector<Report> models = {fixture("model.json"), fixture("model.json")};
  const std::vector<JudgedReport> judged_models = {JudgedReport(models[0]),
                                                   JudgedReport(models[1])};
  const Chart model_chart = build_chart(judged_models, {});
  CHECK(model_chart.arrow_note.find("arrows without a verdict") == 0);
}

TEST_CASE("table width: a profiled program's table counts its FLOPs on the kernels' pipes") {
  // No row is an attention workload: the FlashAttention convention has nothing to count, and
  // the header says which FLOPs the figures are (it said "FlashAttention convention" before).
  Report report;
  report.context.command = "profile";
  report.specs = {shipped_spec("h200")};
  report.rows = {profiled_row("ampere_sgemm", {64, 8, 1}, {256, 1, 1},
                              {{quantity::kDramRead, 4e7}, {quantity::kTensorMmaSync, 6e10}},
                              2e-4)};
  const std::string table = render_table(report, {});
  CHECK(table.find("FLOPs: executed on the kernel's own pipe") != std::string::npos);
  CHECK(table.find("no row is an attention workload") != std::string::npos);
  CHECK(table.find("FlashAttention count") == std::string::npos);  // no stand-in footnote
  // With one attention workload among them the convention applies, stand-ins footnoted.
  Row attention = report.rows.front();
  attention.launch->workload_known = true;  // an NVTX range named its workload
  attention.workload.seq_len = 4096;
  attention.workload.head_dim = 64;
  report.rows.push_back(attention);
  CHECK(render_table(report, {}).find("FLOPs: FlashAttention convention") != std::string::npos);
}

TEST_CASE("table width: rows judged against several GPUs get a table each, headed by its GPU") {
  // One table of rows for two GPUs did not say which GPU a row was for.
  const CliResult r = cli({"model", "--gpu", "h200,a100", "--seq", "1024", "--kernel", "flash-v2",
                           "--head-dim", "64", "--pass", "fwd"});
  REQUIRE(r.code == 0);
  const std::size_t h200 = r.out.find("judged against NVIDIA H200 SXM 141GB [h200-sxm]\n");
  const std::size_t a100 = r.out.find("judged against NVIDIA A100 SXM4 80GB [a100-sxm4-80gb]\n");
  REQUIRE(h200 != std::string::npos);
  REQUIRE(a100 != std::string::npos);
  CHECK(h200 < a100);
  // Each table holds its GPU's two rows (causal and full): 132 SMs above, 108 below.
  const std::string first = r.out.substr(h200, a100 - h200), second = r.out.substr(a100);
  CHECK(first.find("on 132 SMs") != std::string::npos);
  CHECK(first.find("on 108 SMs") == std::string::npos);
  CHECK(second.find("on 108 SMs") != std::string::npos);
  CHECK(second.find("on 132 SMs") == std::string::npos);
}

TEST_CASE("table width: compare's and show's summary tables fit 80 and 120 columns") {
  const Comparison comparison =
      compare_reports(fixture("base.json"), fixture("head.json"), {}, "base.json", "head.json");
  for (std::size_t width : {80, 120}) {
    CAPTURE(width);
    const std::string table = render_compare_table(comparison, {width, {}});
    check_fits(table, width);
    // The ambiguous row's note moves below the table.
    CHECK(table.find("note: flash-v2 B1 H8 N1024 d64 full fwd: +5.2% exceeds the 4% threshold") !=
          std::string::npos);
    for (const char* name : {"head.json", "model.json"})
      check_fits(render_summary(summarize(fixture(name), GroupBy::kFunctor), 15, width), width);
  }
}

TEST_CASE("table width: the command line takes $COLUMNS, --wide and --columns") {
  const std::string model =
      std::filesystem::path(ROOFLINE_TEST_DATA_DIR) / "reports" / "model.json";
  setenv("COLUMNS", "80", 1);
  CliResult r = cli({"show", model});
  CHECK(r.code == 0);
  check_fits(r.out, 80);
  CHECK(r.out.find("left out to fit 80 columns") != std::string::npos);
  r = cli({"model", "--gpu", "a100,h100", "--seq", "1024,4096", "--pass", "fwd,bwd"});
  CHECK(r.code == 0);
  check_fits(r.out, 80);
  r = cli({"show", model, "--wide"});
  CHECK(r.out.find("left out") == std::string::npos);
  CHECK(table_rows(r.out).at(0).size() == report_table_columns().size() - 4);  // no extras
  r = cli({"show", model, "--columns", "kernel,bound,of-bound", "--flops", "pipe"});
  CHECK(r.code == 0);
  CHECK(table_rows(r.out).at(0) == std::vector<std::string>{"kernel", "bound TFLOP/s", "of bound"});
  r = cli({"model", "--columns", "kernel,rigime"});
  CHECK(r.code == 2);
  CHECK(r.out.empty());
  CHECK(r.err.find("--columns: no column \"rigime\" (did you mean regime?)") != std::string::npos);
  // A saved compare document: compare's columns, fitted the same way.
  const std::string compare =
      std::filesystem::path(ROOFLINE_TEST_DATA_DIR) / "golden" / "compare_head.json";
  for (const char* width : {"80", "120"}) {
    CAPTURE(width);
    setenv("COLUMNS", width, 1);
    r = cli({"show", compare});
    CHECK(r.code == 0);
    check_fits(r.out, static_cast<std::size_t>(std::stoul(width)));
    CHECK(r.out.find("verdict") != std::string::npos);
  }
  // compare --across-devices: its own columns, fitted the same way.
  const std::string reports = std::filesystem::path(ROOFLINE_TEST_DATA_DIR) / "reports";
  for (const char* width : {"80", "120"}) {
    CAPTURE(width);
    setenv("COLUMNS", width, 1);
    r = cli({"compare", "--across-devices", reports + "/head_a100.json", reports + "/base.json"});
    CHECK(r.code == 0);
    check_fits(r.out, static_cast<std::size_t>(std::stoul(width)));
    CHECK(r.out.find("speed-up") != std::string::npos);
  }
  // The list takes one argument: the reports after it stay positional.
  r = cli({"compare", "--across-devices", "--columns", "kernel,speed-up",
           reports + "/head_a100.json", reports + "/base.json"});
  CHECK(r.code == 0);
  CHECK(table_rows(r.out).at(0) == std::vector<std::string>{"kernel", "speed-up"});
  r = cli({"compare", "--across-devices", reports + "/head_a100.json", reports + "/base.json",
           "--columns", "kernel,verdict"});
  CHECK(r.code == 2);  // compare's own key, not the device table's
  unsetenv("COLUMNS");
  r = cli({"show", model});
  CHECK(r.out.find("left out") == std::string::npos);  // not a terminal: whole
}

TEST_CASE("table width: the terminal chart fits 80 and 60 columns, and is whole without a limit") {
  const Report report = fixture("base.json");
  const std::string whole = render_ascii_plot(report, 72, 22);
  bool wider = false;
  for (const std::string& line : lines_of(whole)) wider = wider || display_width(line) > 80;
  CHECK(wider);  // without a limit: its 72 cells, labels and keys
  for (std::size_t width : {80, 60}) {
    CAPTURE(width);
    const std::string chart =
        render_ascii_plot(report, 72, 22, FlopConvention::kAlgorithmic, width);
    check_fits(chart, width);
    CHECK(chart.find("FLOP/byte") != std::string::npos);
    CHECK(chart.find("points: ") != std::string::npos);
  }
}
