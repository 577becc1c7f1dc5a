// compare's writers (JSON, Markdown) and its command line: exit codes that gate CI, outputs to
// files and stdout, kernel against kernel, refusals in one line, --allow-mismatch; on the
// recorded reports in tests/data/reports (the verdicts themselves are test_compare.cpp's).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "app/cli.hpp"
#include "lib/core/base/errors.hpp"
#include "lib/core/base/text.hpp"
#include "lib/core/compare/compare.hpp"
#include "lib/core/compare/compare_writers.hpp"
#include "lib/core/report/report_read.hpp"
#include "tests/unit/helpers.hpp"

using namespace roofline;

namespace {

std::string fixture(const std::string& name) {
  return std::string(ROOFLINE_TEST_DATA_DIR) + "/reports/" + name;
}

}  // namespace

TEST_CASE("compare: JSON and Markdown writers") {
  const Comparison c =
      compare_reports(read_report_file(fixture("base.json")),
                      read_report_file(fixture("head.json")), {}, "base.json", "head.json");
  const auto j = nlohmann::json::parse(render_compare_json(c));
  CHECK(j["schema_version"] == 2);
  CHECK(j["summary"]["slower"] == 1);
  CHECK(j["summary"]["faster"] == 2);
  CHECK(j["summary"]["same"] == 20);
  CHECK(j["summary"]["ambiguous"] == 1);
  CHECK(j["summary"]["not_compared"] == 0);
  CHECK(j["summary"]["more_work"] == 1);
  CHECK(j["summary"]["regressed"] == true);
  CHECK(j["summary"]["exit_code"] == 1);
  CHECK(j["options"]["threshold"] == 0.04);
  CHECK(j["options"]["process_noise"] == 0.005);
  CHECK(j["summary"]["timed"] == 24);
  CHECK(j["summary"]["detectable_change_max"].get<double>() > 0.04);
  REQUIRE(j["rows"].size() == 24);
  const auto& row = j["rows"][0];
  for (const char* key : {"kernel_base", "kernel_head", "workload", "spec_base", "spec_head",
                          "verdict", "regressed", "more_work", "notes", "time", "quantities"})
    CHECK_MESSAGE(row.contains(key), key);
  CHECK(row["time"]["detectable_change"].is_number());
  CHECK(row["time"]["base"]["rounds"] == 0);
  CHECK(row["time"]["p_value"].is_number());

  const std::string md = render_compare_markdown(c);
  CHECK(md.rfind("### cuflash-roofline compare: ❌ regression\n", 0) == 0);
  CHECK(md.find("| 🔴 **slower** | flash-v2 | B1 H8 N4096 d64 causal fwd |") != std::string::npos);
  CHECK(md.find("<details><summary>19 unchanged rows</summary>") != std::string::npos);
  CHECK(md.find("**DRAM-read bytes +16.0%**") != std::string::npos);
  CHECK(md.find("this pair could detect a change of ") != std::string::npos);
  // Every table line has the same number of cells: escaped pipes do not split cells.
  for (const std::string& line : split(md, '\n')) {
    if (line.rfind("| ", 0) != 0) continue;
    std::size_t cells = 0;
    for (std::size_t i = 0; i < line.size(); ++i)
      if (line[i] == '|' && (i == 0 || line[i - 1] != '\\')) ++cells;
    CHECK_MESSAGE(cells == 11, line);
  }
}

// ---- command line ----

TEST_CASE("cli: compare exit codes gate CI") {
  CHECK(cli({"compare", fixture("base.json"), fixture("head.json")}).code == 1);
  CHECK(cli({"compare", fixture("base.json"), fixture("head_improved.json")}).code == 0);
  CHECK(cli({"compare", fixture("base.json"), fixture("base.json")}).code == 0);
  // A 10% threshold makes the +8.8% row the same; a 20% tolerance accepts the +16% bytes.
  CHECK(cli({"compare", fixture("base.json"), fixture("head.json"), "--threshold", "10",
             "--tolerance", "20%"})
            .code == 0);
  const CliResult r = cli({"compare", fixture("base.json"), fixture("head.json")});
  CHECK(r.err.empty());
  CHECK(r.out.find("result: regression (exit 1)\n") != std::string::npos);
  CHECK(r.out.find("24 rows compared: 1 slower, 2 faster, 20 same, 1 ambiguous; 1 with more "
                   "bytes or FLOPs\n") != std::string::npos);
}

TEST_CASE("cli: compare writes Markdown and JSON files, and either to stdout") {
  TempDir dir;
  const std::string md = (dir.path / "comment.md").string();
  const std::string json = (dir.path / "compare.json").string();
  const CliResult r = cli(
      {"compare", fixture("base.json"), fixture("head.json"), "--markdown", md, "--json", json});
  CHECK(r.code == 1);
  CHECK(r.out.find("result: regression (exit 1)") != std::string::npos);  // table too
  CHECK(read_text(md).rfind("### cuflash-roofline compare", 0) == 0);
  CHECK(nlohmann::json::parse(read_text(json))["summary"]["exit_code"] == 1);

  const CliResult to_stdout =
      cli({"compare", fixture("base.json"), fixture("head_improved.json"), "--markdown", "-"});
  CHECK(to_stdout.code == 0);
  CHECK(to_stdout.out.rfind("### cuflash-roofline compare: ✅ no regression\n", 0) == 0);
  CHECK(to_stdout.out.find("result:") == std::string::npos);  // no table on top of it
}

TEST_CASE("cli: compare two kernels within one report") {
  const CliResult r = cli({"compare", fixture("base.json"), "--kernel-base", "flash-v1",
                           "--kernel-head", "flash-v2", "--json", "-"});
  // flash-v2 counts more tensor FLOPs on the causal diagonal tiles, and is faster on every
  // row: the extra work is a note.
  CHECK(r.code == 0);
  const auto j = nlohmann::json::parse(r.out);
  REQUIRE(j["rows"].size() == 8);
  CHECK(j["rows"][0]["kernel_base"] == "flash-v1");
  CHECK(j["rows"][0]["kernel_head"] == "flash-v2");
  CHECK(j["summary"]["faster"] == 8);
  CHECK(j["summary"]["more_work"].get<int>() > 0);
  CHECK(j["summary"]["regressed"] == false);
  // The old rule on request: more work is a regression at any speed.
  CHECK(cli({"compare", fixture("base.json"), "--kernel-base", "flash-v1", "--kernel-head",
             "flash-v2", "--fail-on-more-work"})
            .code == 1);
}

TEST_CASE("cli: compare bad input gives one line, exit 2, and no output file") {
  TempDir dir;
  const std::string out = (dir.path / "out.json").string();
  const std::string base = fixture("base.json");
  const std::string missing = (dir.path / "missing.json").string();
  struct Case {
    std::vector<std::string> args;
    std::string message;
  } cases[] = {
      {{"compare", base, missing, "--json", out},
       "error: cannot read " + missing + ": No such file or directory\n"},
      {{"compare", base, fixture("schema_v2.json"), "--json", out},
       "error: " + fixture("schema_v2.json") +
           ": schema_version 2 is not supported (this tool "
           "reads 1)\n"},
      {{"compare", base, fixture("empty.json"), "--json", out},
       "error: " + fixture("empty.json") + ": the report has no rows\n"},
      {{"compare", fixture("model.json"), fixture("model.json"), "--json", out},
       "error: " + fixture("model.json") +
           ": standard B1 H8 N1024 d64 causal fwd has no timing "
           "samples (compare needs reports written by `cuflash-roofline run`)\n"},
      {{"compare", base, fixture("model.json"), "--json", out},
       "error: devices differ: " + base + " was measured on NVIDIA H100 80GB HBM3, " +
           fixture("model.json") +
           " is an analytic model report (no device); pass "
           "--allow-mismatch to compare anyway\n"},
      {{"compare", base, fixture("head_a100.json"), "--json", out},
       "error: devices differ: " + base + " was measured on NVIDIA H100 80GB HBM3, " +
           fixture("head_a100.json") +
           " on NVIDIA A100-SXM4-80GB; pass --allow-mismatch to "
           "compare anyway\n"},
      {{"compare", base, fixture("head_low_clock.json"), "--json", out},
       "error: SM clocks differ: median 1971 MHz in " + base + ", 1578 MHz in " +
           fixture("head_low_clock.json") +
           " (-19.9%, more than 10%); pass --allow-mismatch to "
           "compare anyway\n"},
      {{"compare", base, "--json", out},
       "error: compare needs two reports, or one report with --kernel-base and --kernel-head\n"},
      {{"compare", base, "--kernel-base", "flash-v2", "--kernel-head", "flash-v2", "--json", out},
       "error: --kernel-base and --kernel-head name the same kernel \"flash-v2\"\n"},
      {{"compare", base, base, "--markdown", "-", "--json", "-"},
       "error: --markdown - and --json - cannot both write to stdout\n"},
      {{"compare", base, base, "--json", (dir.path / "no" / "x.json").string()},
       "error: cannot write " + (dir.path / "no" / "x.json").string() + ": directory " +
           (dir.path / "no").string() + " does not exist\n"},
  };
  for (const Case& c : cases) {
    CAPTURE(join(c.args, " "));
    const CliResult r = cli(c.args);
    CHECK(r.code == 2);
    CHECK(r.err == c.message);
    CHECK(r.out.empty());
    CHECK_FALSE(std::filesystem::exists(out));
  }
  // Negative tolerances and three reports are usage errors too.
  CHECK(cli({"compare", base, base, "--tolerance", "-1"}).code == 2);
  CHECK(cli({"compare", base, base, base}).code == 2);
}

TEST_CASE("cli: compare --allow-mismatch compares across devices with a warning") {
  const CliResult r = cli({"compare", fixture("base.json"), fixture("head_a100.json"),
                           "--allow-mismatch", "--json", "-"});
  CHECK(r.code != 2);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j["rows"].size() == 8);  // flash-v2 rows, matched across specs by kernel and workload
  CHECK(j["warnings"].size() == 2);
  // The table says so too (spdlog repeats it on stderr).
  const CliResult table =
      cli({"compare", fixture("base.json"), fixture("head_a100.json"), "--allow-mismatch"});
  CHECK(table.out.find("warning: compared despite: devices differ") != std::string::npos);
  CHECK(table.out.find("warning: compared despite: SM clocks differ") != std::string::npos);
}
