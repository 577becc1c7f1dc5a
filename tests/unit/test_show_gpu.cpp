// A saved report projected onto other GPUs (verdict/reproject.hpp) and `show --gpu`'s table
// (writers/projection_table.hpp): onto its own spec nothing moves, onto another the total
// follows its rows, and what cannot be projected is refused with one line.
#include <doctest/doctest.h>

#include <string>

#include "lib/core/base/errors.hpp"
#include "lib/core/report/report_read.hpp"
#include "lib/core/verdict/judged_report.hpp"
#include "lib/core/verdict/reproject.hpp"
#include "lib/core/writers/projection_table.hpp"
#include "tests/unit/helpers.hpp"

using namespace roofline;

namespace {

const std::string kHead = std::string(ROOFLINE_TEST_DATA_DIR) + "/reports/head.json";  // H100
const std::string kModel = std::string(ROOFLINE_TEST_DATA_DIR) + "/reports/model.json";

double total_of(const Report& report) {
  return summarize(JudgedReport(report), GroupBy::kName).total_seconds;
}

}  // namespace

TEST_CASE("reproject: onto its own spec nothing moves, onto another every row is projected") {
  const Report measured = read_report_file(kHead);
  const GpuSpec& own = measured.spec_for(measured.rows.front());
  const Report same = reproject(measured, own, "head.json");
  CHECK(same.context.projection);
  CHECK(total_of(same) == doctest::Approx(total_of(measured)));

  const Report h200 = reproject(measured, shipped_spec("h200"), "head.json");
  CHECK(h200.context.measured_spec == own.key);
  REQUIRE(h200.specs.size() == 2);
  for (const Row& row : h200.rows) CHECK(row.spec_key == "h200-sxm");
  const JudgedReport judged(h200);
  for (std::size_t i = 0; i < judged.rows().size(); ++i)
    if (judged.at(i).has_verdict) CHECK(judged.at(i).projected);
  // The H200 has the H100's FLOP rates and more DRAM bandwidth: no row gets slower.
  const JudgedReport before(measured);
  for (std::size_t i = 0; i < judged.rows().size(); ++i)
    if (judged.at(i).has_verdict && before.at(i).has_verdict)
      CHECK(judged.at(i).time_seconds <= before.at(i).time_seconds * (1 + 1e-9));
}

TEST_CASE("reproject: a model report, a projection and a merged report are refused") {
  CHECK_THROWS_AS(reproject(read_report_file(kModel), shipped_spec("h100"), "model.json"),
                  InputError);
  const Report once = reproject(read_report_file(kHead), shipped_spec("h200"), "head.json");
  CHECK_THROWS_AS(reproject(once, shipped_spec("b200"), "once.json"), InputError);
  Report merged = read_report_file(kHead);
  merged.rows.back().spec_key = "other";
  CHECK_THROWS_AS(reproject(merged, shipped_spec("h200"), "merged.json"), InputError);
}

TEST_CASE("show --gpu: the program measured and projected, by group, and its bad uses") {
  CliResult r = cli({"show", kHead, "--gpu", "h100,b200"});
  REQUIRE(r.code == 0);
  CHECK(r.out.find("The program on other GPUs") != std::string::npos);
  CHECK(r.out.find("h100-sxm5") != std::string::npos);
  CHECK(r.out.find("b200") != std::string::npos);
  // Onto its own spec the total is the measured one.
  const std::size_t total = r.out.find("\ntotal");
  REQUIRE(total != std::string::npos);
  CHECK(r.out.find("×1.00", total) != std::string::npos);
  // A B200 has no wgmma or mma.sync: the rows that used them are named.
  CHECK(r.out.find("not as measured on b200") != std::string::npos);

  expect_input_error(cli({"show", kHead, kHead, "--gpu", "h100"}), "--gpu projects one report");
  expect_input_error(cli({"show", kHead, "--gpu", "h100,b200", "--json", "-"}),
                     "--gpu with --json or --csv writes the report projected onto one spec");
  expect_input_error(cli({"show", kHead, "--gpu", "h999"}), "h999");
  expect_input_error(cli({"show", kHead, "--gpu", "h100,,b200"}), "an empty name");
  expect_input_error(cli({"show", kModel, "--gpu", "h100"}), "nothing measured to project");
}

TEST_CASE("show --gpu: what moves a group is its binding roof on both GPUs") {
  const GpuSpec& h200 = shipped_spec("h200");
  const GpuSpec& h100 = shipped_spec("h100");
  const GpuSpec& b200 = shipped_spec("b200");
  CHECK(roof_change("DRAM", h200, h100) == "DRAM 4.80 → 3.35 TB/s");
  CHECK(roof_change("tail", h200, b200) == "tail 132 → 148 SMs");
  CHECK(roof_change("tensor FP16 (wgmma)", h200, h100) == "tensor FP16 (wgmma) 989 → 989 TFLOP/s");
  // A pipe the measured GPU lacks: its name alone.
  CHECK(roof_change("tensor FP16 (tcgen05)", h200, b200) == "tensor FP16 (tcgen05)");
}
