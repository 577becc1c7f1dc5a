// JudgedReport: each row's verdict made once per command and read by every writer; a part or a
// selection of a judged report keeps its rows' verdicts without judging again.
#include <doctest/doctest.h>

#include <string>

#include "lib/core/report/report_read.hpp"
#include "lib/core/verdict/analysis.hpp"
#include "lib/core/verdict/judged_report.hpp"
#include "tests/unit/helpers.hpp"

using namespace roofline;

namespace {

const std::string kReports = std::string(ROOFLINE_TEST_DATA_DIR) + "/reports/";

// The verdicts (analyze(row, report)) one command makes.
std::size_t verdicts_of(const std::vector<std::string>& args, int expected_code = 0) {
  const std::size_t before = verdicts_made();
  const CliResult r = cli(args);
  CAPTURE(r.err);
  CHECK(r.code == expected_code);
  return verdicts_made() - before;
}

}  // namespace

TEST_CASE("judged report: one verdict per row per command, whatever it writes") {
  TempDir dir;
  const std::string out = dir.path.string() + "/";
  const std::string base = kReports + "base.json";  // 24 timed rows
  // model: 2 GPUs × 2 N × 2 masks × 2 kernels = 16 rows; JSON, CSV, SVG, the table and the
  // terminal chart.
  CHECK(verdicts_of({"model", "--gpu", "h100,a100", "--seq", "1024,4096", "--kernel",
                     "flash-v2,standard", "--json", out + "m.json", "--csv", out + "m.csv", "--svg",
                     out + "m.svg", "--plot"}) == 16);
  // show: JSON, CSV, the summary in Markdown, both exports, then the summary and the table.
  CHECK(verdicts_of({"show", base, "--json", out + "s.json", "--csv", out + "s.csv", "--markdown",
                     out + "s.md", "--export", "gbench=" + out + "g.json", "--export",
                     "bmf=" + out + "b.json", "--view", "both"}) == 24);
  // Sorted by gain: the sort reads the verdicts it will print.
  CHECK(verdicts_of({"show", base, "--sort", "gain"}) == 24);
  CHECK(verdicts_of({"show", base, "--kernel-regex", "flash-v2"}) == 8);
}

TEST_CASE("judged report: parts and selections carry their rows' verdicts") {
  const Report report = read_report_file(kReports + "base.json");
  const JudgedReport judged(report);
  REQUIRE(judged.rows().size() == 24);
  const std::size_t before = verdicts_made();
  const JudgedReport sorted = judged.select({23, 0, 5});
  const JudgedReport part = judged.part({5, 6});
  CHECK(verdicts_made() == before);
  REQUIRE(sorted.rows().size() == 3);
  CHECK(sorted.rows()[0].kernel == report.rows[23].kernel);
  CHECK(sorted.at(0).regime == judged.at(23).regime);
  CHECK(sorted.of(sorted.rows()[2]).time_seconds == judged.at(5).time_seconds);
  CHECK(part.at(1).time_seconds == judged.at(6).time_seconds);
  CHECK(part.advice_at(0).has_value() == judged.advice_at(5).has_value());
  // The verdict of a row as the report judges it, nothing else.
  for (std::size_t i = 0; i < report.rows.size(); ++i)
    CHECK(judged.at(i).regime == analyze(report.rows[i], report).regime);
  // A verdict's ceiling is one of its own report's, in a copy, a selection and a part alike (a
  // selection outlives the report it was taken from: show --sort).
  const auto owns = [](const JudgedReport& j, std::size_t i) {
    const ComputeCeiling* c = j.at(i).ceiling;
    REQUIRE(c != nullptr);
    for (const GpuSpec& spec : j.report().specs)
      if (c >= spec.compute.data() && c < spec.compute.data() + spec.compute.size()) return true;
    return false;
  };
  const JudgedReport copy = judged;  // NOLINT(performance-unnecessary-copy-initialization)
  CHECK(owns(judged, 0));
  CHECK(owns(copy, 0));
  CHECK(owns(sorted, 0));
  CHECK(owns(part, 1));
  CHECK(copy.at(0).ceiling != judged.at(0).ceiling);
  // A row of another report has no verdict here.
  CHECK_THROWS_AS(judged.of(report.rows[0]), std::logic_error);
}
