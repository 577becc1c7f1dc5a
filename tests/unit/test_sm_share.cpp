// A GPU on a share of its SMs (domain/sm_share.hpp): what scales and what does not, the spec
// choice of a run in a green context (`run --sms`), the report that says so, and `show --gpu
// NAME --sms N` with every way to give it a bad count.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "lib/core/base/errors.hpp"
#include "lib/core/domain/sm_share.hpp"
#include "lib/core/report/report_read.hpp"
#include "lib/core/verdict/judged_report.hpp"
#include "lib/core/verdict/reproject.hpp"
#include "lib/core/writers/report_writers.hpp"
#include "tests/unit/helpers.hpp"

using namespace roofline;

namespace {

const std::string kHead = std::string(ROOFLINE_TEST_DATA_DIR) + "/reports/head.json";  // H100
const std::string kModel = std::string(ROOFLINE_TEST_DATA_DIR) + "/reports/model.json";

}  // namespace

TEST_CASE("sm share: compute and L1 roofs scale with the SMs, DRAM, L2 and clocks do not") {
  const GpuSpec& h200 = shipped_spec("h200");
  REQUIRE(h200.sm_count == 132);
  const GpuSpec half = with_sm_count(h200, 66);
  CHECK(half.key == "h200-sxm.66sm");
  CHECK(half.name == h200.name + ", 66 of 132 SMs");
  CHECK(half.sm_count == 66);
  CHECK(half.aliases.empty());
  CHECK(half.device_names.empty());
  CHECK(half.sources.at("sm_count").find("66 of 132 SMs") != std::string::npos);
  REQUIRE(half.compute.size() == h200.compute.size());
  for (std::size_t i = 0; i < h200.compute.size(); ++i) {
    CAPTURE(h200.compute[i].id());
    CHECK(half.compute[i].id() == h200.compute[i].id());
    CHECK(half.compute[i].peak_tflops == doctest::Approx(h200.compute[i].peak_tflops / 2));
    CHECK(half.compute[i].clock_mhz == h200.compute[i].clock_mhz);
    CHECK(half.compute[i].source.find("66 of 132 SMs") != std::string::npos);
  }
  for (MemoryLevel level : kAllMemoryLevels) {
    const MemoryLevelSpec* whole = h200.level(level);
    if (whole == nullptr) continue;
    CAPTURE(display_name(level));
    if (!whole->shares.empty()) continue;  // its share curve: the test below
    const double expected =
        level == MemoryLevel::kL1 ? whole->bandwidth_gbps / 2 : whole->bandwidth_gbps;
    CHECK(half.level(level)->bandwidth_gbps == doctest::Approx(expected));
  }
  CHECK(half.l2_cache_bytes == h200.l2_cache_bytes);
  CHECK(half.boost_clock_mhz == h200.boost_clock_mhz);
  CHECK(half.tdp_watts == h200.tdp_watts);
  CHECK(half.launch_floor_us == h200.launch_floor_us);
  // Per-SM rates stay; the chip's follow the SM count.
  CHECK(half.xu_exp2_per_clock_per_sm == h200.xu_exp2_per_clock_per_sm);
  CHECK(half.exp2_per_second() == doctest::Approx(h200.exp2_per_second() / 2));
  CHECK(half.shared_bytes_per_second() == doctest::Approx(h200.shared_bytes_per_second() / 2));
  // All of the SMs is the spec itself.
  CHECK(with_sm_count(h200, 132).key == "h200-sxm");
  // The share survives a report's JSON (its spec is embedded whole).
  const GpuSpec again = parse_gpu_spec(to_json(half), "half.json");
  CHECK(again.sm_count == 66);
  CHECK(again.compute.front().peak_tflops == doctest::Approx(half.compute.front().peak_tflops));
}

TEST_CASE("sm share: a level with a share curve draws what that many SMs drew, linear between") {
  GpuSpec spec = shipped_spec("h200");
  MemoryLevelSpec& dram = *std::find_if(spec.memory.begin(), spec.memory.end(), [](const auto& l) {
    return l.level == MemoryLevel::kDram;
  });
  dram.bandwidth_gbps = 4800;
  // Measured with one kernel: 4000 GB/s on all 132 SMs (the level's 4800 is another figure).
  dram.shares = {{16, 800}, {64, 2400}, {132, 4000}};
  dram.shares_source = "calibrated on a test";
  SUBCASE("between two points") {
    // 40 SMs: 800 + (40 − 16)/(64 − 16) × 1600 = 1600 of 4000: 0.4 of the level's 4800.
    const GpuSpec share = with_sm_count(spec, 40);
    const MemoryLevelSpec& d = share.dram();
    CHECK(d.bandwidth_gbps == doctest::Approx(0.4 * 4800));
    CHECK(d.source.find("× 0.400: what 40 of 132 SMs draw of it") != std::string::npos);
    CHECK(d.source.find("16 SMs 800 GB/s, 64 SMs 2400 GB/s, 132 SMs 4000 GB/s") !=
          std::string::npos);
    CHECK(d.source.find("calibrated on a test") != std::string::npos);
    CHECK(d.shares.empty());  // a share of the share was never measured
  }
  SUBCASE("below the first point: linear from none") {
    CHECK(with_sm_count(spec, 8).dram().bandwidth_gbps ==
          doctest::Approx(0.1 * 4800));  // 400 of 4000
  }
  SUBCASE("on a measured point, and past where the curve reaches the whole") {
    CHECK(with_sm_count(spec, 64).dram().bandwidth_gbps == doctest::Approx(0.6 * 4800));
    dram.shares = {{16, 800}, {96, 4100}, {132, 4000}};  // 96 SMs drew more than all of them
    CHECK(with_sm_count(spec, 96).dram().bandwidth_gbps == doctest::Approx(4800));
  }
  SUBCASE("all the SMs: the spec itself") {
    CHECK(with_sm_count(spec, 132).dram().bandwidth_gbps == 4800);
    CHECK(with_sm_count(spec, 132).dram().shares.size() == 3);
  }
}

TEST_CASE("sm share: the curve at a count of SMs, the SMs it needs for a rate, and its knee") {
  MemoryLevelSpec dram{MemoryLevel::kDram, 4800, "sheet"};
  CHECK(std::isnan(share_curve_gbps(dram, 16)));
  CHECK(std::isnan(share_curve_sms(dram, 800)));
  CHECK_FALSE(past_share_knee(dram, 4000));
  dram.shares = {{16, 800}, {64, 2400}, {132, 4000}};
  CHECK(share_curve_gbps(dram, 8) == doctest::Approx(400));  // linear from none
  CHECK(share_curve_gbps(dram, 40) == doctest::Approx(1600));
  CHECK(share_curve_gbps(dram, 200) == doctest::Approx(4000));  // its top past the last point
  CHECK(share_curve_sms(dram, 1600) == doctest::Approx(40));
  CHECK(share_curve_sms(dram, 400) == doctest::Approx(8));
  CHECK(share_curve_sms(dram, 5000) == doctest::Approx(132));  // past the top: all of them
  CHECK(std::isnan(share_curve_sms(dram, 0)));
  // The knee: 85% of the top.
  CHECK(past_share_knee(dram, 3400));
  CHECK_FALSE(past_share_knee(dram, 3390));
}

TEST_CASE("sm share: a fit through the time on all the SMs and on a share run") {
  MemoryLevelSpec dram{MemoryLevel::kDram, 4800, "sheet"};
  const double bytes = 1e9;
  CHECK_FALSE(fit_share_run(dram, 132, bytes, 1e-3, 16, bytes, 4e-3));  // no curve
  dram.shares = {{16, 800}, {64, 2400}, {132, 4000}};
  // A row with half the curve's kernel's bytes in flight per SM and 50 µs of gaps: 1 GB on all
  // 132 SMs (the curve at 66: 2400 + 2/68 × 1600) and on 16 (the curve at 8: 400 GB/s).
  const double gaps = 50e-6;
  const double all = bytes / ((2400 + 2 * 1600.0 / 68) * 1e9) + gaps;
  const double few = bytes / (400 * 1e9) + gaps;
  const std::optional<ShareFit> fit = fit_share_run(dram, 132, bytes, all, 16, bytes, few);
  REQUIRE(fit.has_value());
  CHECK(fit->per_sm == doctest::Approx(0.5).epsilon(1e-6));
  CHECK(fit->fixed_seconds == doctest::Approx(gaps).epsilon(1e-6));
  // Through both measurements, and between them on 40 SMs (the curve at 20: 800 + 4/48 × 1600).
  CHECK(share_fit_seconds(dram, *fit, bytes, 132) == doctest::Approx(all));
  CHECK(share_fit_seconds(dram, *fit, bytes, 16) == doctest::Approx(few));
  CHECK(share_fit_seconds(dram, *fit, bytes, 40) ==
        doctest::Approx(bytes / ((800 + 4 * 1600.0 / 48) * 1e9) + gaps));
  // No share run slower than all the SMs, or no fit without a negative fixed part: none.
  CHECK_FALSE(fit_share_run(dram, 132, bytes, all, 16, bytes, all));
  CHECK_FALSE(fit_share_run(dram, 132, bytes, 1e-4, 16, bytes, 1e-3));  // 10 TB/s on all
  CHECK_FALSE(fit_share_run(dram, 132, bytes, all, 132, bytes, few));
  // A share run barely slower: the few SMs draw about the curve's top (per_sm up to its end).
  const std::optional<ShareFit> flat =
      fit_share_run(dram, 132, bytes, 0.3e-3, 64, bytes, 0.3001e-3);
  REQUIRE(flat.has_value());
  CHECK(flat->per_sm > 2);
  CHECK(flat->per_sm <= 132.0 / 64);
}

TEST_CASE("sm share: what a kernel draws on fewer SMs, with its bytes in flight per SM") {
  MemoryLevelSpec dram{MemoryLevel::kDram, 4800, "sheet"};
  CHECK(std::isnan(share_drawn_gbps(dram, 132, 2400, 66)));  // no curve
  dram.shares = {{16, 800}, {64, 2400}, {132, 4000}};
  // 2400 GB/s needs 64 of the curve's SMs; on half the SMs, 32 of them: 800 + 16/48 × 1600.
  CHECK(share_drawn_gbps(dram, 132, 2400, 66) == doctest::Approx(800 + 1600.0 / 3));
  // Past the curve's top: all of its SMs; on 66, the curve at 66.
  CHECK(share_drawn_gbps(dram, 132, 4500, 66) == doctest::Approx(2400 + 2 * 1600.0 / 68));
  // Below the first point: linear from none (400 GB/s: 8 SMs; on 66 of 132, 4: 200 GB/s).
  CHECK(share_drawn_gbps(dram, 132, 400, 66) == doctest::Approx(200));
  // A measured point below an earlier one does not count: the curve is taken rising.
  dram.shares = {{16, 800}, {32, 700}, {64, 2400}, {132, 4000}};
  CHECK(share_drawn_gbps(dram, 132, 2400, 66) == doctest::Approx(800));
  CHECK(std::isnan(share_drawn_gbps(dram, 132, 0, 66)));

  const GpuSpec& h200 = shipped_spec("h200");
  CHECK(is_share_of(with_sm_count(h200, 40), h200));
  CHECK_FALSE(is_share_of(h200, h200));
  CHECK_FALSE(is_share_of(with_sm_count(shipped_spec("h100"), 40), h200));
}

TEST_CASE("sm share: a count that is no share of the spec's SMs is refused") {
  const GpuSpec& h200 = shipped_spec("h200");
  for (int sms : {0, -1, 133, 100000}) {
    CAPTURE(sms);
    try {
      with_sm_count(h200, sms);
      FAIL("accepted");
    } catch (const InputError& error) {
      CHECK(std::string(error.what()) ==
            "h200-sxm has 132 SMs: " + std::to_string(sms) + " is not a share of them (1 to 132)");
    }
  }
}

TEST_CASE("sm share: a run on a share is judged on the share, a projection keeps its target") {
  const GpuSpec& h200 = shipped_spec("h200");
  SpecChoice own;
  own.spec = h200;
  own.measured = h200;
  const SpecChoice mine = on_sm_share(own, 72);
  CHECK(mine.spec.key == "h200-sxm.72sm");
  CHECK(mine.measured.key == "h200-sxm.72sm");
  CHECK_FALSE(mine.projection);

  SpecChoice elsewhere;
  elsewhere.spec = shipped_spec("b200");
  elsewhere.measured = h200;
  elsewhere.projection = true;
  const SpecChoice projected = on_sm_share(elsewhere, 40);
  CHECK(projected.spec.key == shipped_spec("b200").key);
  CHECK(projected.measured.key == "h200-sxm.40sm");
  CHECK_THROWS_AS(on_sm_share(own, 200), InputError);
}

TEST_CASE("sm share: the report says the run had a green context's SMs, and reads back") {
  Report report = read_report_file(kHead);
  report.context.green_context_sms = 72;
  const std::string text = render_json(JudgedReport(report));
  CHECK(nlohmann::json::parse(text)["context"]["green_context_sms"] == 72);
  const Report back = report_from_text(text, "share.json");
  CHECK(back.context.green_context_sms == 72);
  TableOptions table;
  CHECK(
      render_table(JudgedReport(back), table)
          .find(
              "measured on NVIDIA H100 80GB HBM3 (72 of its 132 SMs: a green context (run --sms), "
              "CC 9.0)") != std::string::npos);
  // Without it, no key at all, and a report that lacks it reads as the whole GPU.
  const std::string whole = render_json(JudgedReport(read_report_file(kHead)));
  CHECK_FALSE(nlohmann::json::parse(whole)["context"].contains("green_context_sms"));
  CHECK(report_from_text(whole, "whole.json").context.green_context_sms == 0);
  auto bad = nlohmann::json::parse(text);
  bad["context"]["green_context_sms"] = 0;
  CHECK_THROWS_AS(report_from_text(bad.dump(), "bad.json"), InputError);
}

TEST_CASE("show --gpu --sms: the program projected onto a share of a GPU's SMs") {
  const CliResult r = cli({"show", kHead, "--gpu", "h100", "--sms", "66", "--group-by", "shape",
                           "--top", "0", "--wide"});
  REQUIRE(r.code == 0);
  CHECK(r.out.find("NVIDIA H100 SXM5 80GB, 66 of 132 SMs [h100-sxm5.66sm]") != std::string::npos);

  // One spec: the projected report as JSON. Half the SMs: no row gets faster, none more than
  // twice as slow, the compute-bound ones exactly twice, but for the bundled flash grids, handed
  // out in launch order: a causal grid's unequal CTAs spread better over fewer SMs (less than
  // twice), and CTAs that ran alone on an SM run two to one on fewer (at most twice).
  const CliResult j = cli({"show", kHead, "--gpu", "h100", "--sms", "66", "--json", "-"});
  REQUIRE(j.code == 0);
  const Report projected = report_from_text(j.out, "projected.json");
  CHECK(projected.context.projection);
  CHECK(projected.context.measured_spec == "h100-sxm5");
  const JudgedReport after(projected);
  const JudgedReport before(read_report_file(kHead));
  REQUIRE(after.rows().size() == before.rows().size());
  int compute_bound = 0;
  for (std::size_t i = 0; i < after.rows().size(); ++i) {
    if (!after.at(i).has_verdict || !before.at(i).has_verdict) continue;
    CAPTURE(after.rows()[i].kernel);
    CHECK(after.rows()[i].spec_key == "h100-sxm5.66sm");
    CHECK(after.at(i).projected);
    const double ratio = after.at(i).time_seconds / before.at(i).time_seconds;
    CHECK(ratio >= 1 - 1e-9);
    if (before.at(i).compute_bound && after.at(i).compute_bound && !before.at(i).tail_bound &&
        !after.at(i).tail_bound) {
      if (after.at(i).projection_note.find("in launch order") != std::string::npos) {
        if (after.rows()[i].workload.causal)
          CHECK(ratio < 2);
        else
          CHECK(ratio <= 2 + 1e-9);
      } else {
        CHECK(ratio == doctest::Approx(2.0));
      }
      ++compute_bound;
    }
  }
  CHECK(compute_bound > 0);

  // All of the SMs is the spec itself: a projection of 1.
  const CliResult all = cli({"show", kHead, "--gpu", "h100", "--sms", "132"});
  REQUIRE(all.code == 0);
  CHECK(all.out.find("×1.00", all.out.find("\ntotal")) != std::string::npos);
}

TEST_CASE("show --gpu --sms --share-run: memory-bound rows timed from the share run, and said so") {
  // The H100 report with a DRAM share curve in its spec (its standard rows drew 2,190-2,240 GB/s:
  // past the curve's knee), and the same rows on 16 SMs at four times their time.
  TempDir dir;
  nlohmann::json all = nlohmann::json::parse(read_text(kHead));
  for (auto& [key, spec] : all["specs"].items())
    for (auto& level : spec["memory_levels"])
      if (level["level"] == "dram") {
        level["shares"] = {{{"sms", 16}, {"gbps", 1500}},
                           {{"sms", 48}, {"gbps", 2400}},
                           {{"sms", 132}, {"gbps", 2400}}};
        level["shares_source"] = "a test curve";
      }
  nlohmann::json few = all;
  few["context"]["green_context_sms"] = 16;
  for (auto& row : few["rows"])
    if (row["timing"].is_object())
      for (auto& sample : row["timing"]["samples_seconds"]) sample = 4 * sample.get<double>();
  const std::string all_path = (dir.path / "all.json").string();
  const std::string few_path = (dir.path / "few.json").string();
  write_text(all_path, all.dump());
  write_text(few_path, few.dump());
  const std::string out = (dir.path / "p.json").string();
  const CliResult r = cli(
      {"show", all_path, "--gpu", "h100", "--sms", "40", "--share-run", few_path, "--json", out});
  REQUIRE(r.code == 0);
  const nlohmann::json projected = nlohmann::json::parse(read_text(out));
  int timed = 0;
  for (const auto& row : projected["rows"]) {
    if (!row.contains("share_run")) continue;
    CHECK(row["share_run"]["sms"] == 16);
    CHECK(row["share_run"]["source"] == few_path);
    if (row["analysis"]["projection_note"].get<std::string>().find("(its share run") !=
        std::string::npos)
      ++timed;
  }
  CHECK(timed > 0);
  const CliResult text =
      cli({"show", all_path, "--gpu", "h100", "--sms", "40", "--share-run", few_path, "--wide"});
  REQUIRE(text.code == 0);
  CHECK(text.out.find("share run: " + std::to_string(timed) + " memory-bound row") !=
        std::string::npos);
  // Without the share run: the rows that filled DRAM on all the SMs are said to be at most.
  const CliResult bound = cli({"show", all_path, "--gpu", "h100", "--sms", "40", "--wide"});
  REQUIRE(bound.code == 0);
  CHECK(bound.out.find("filled DRAM or L2 on all the SMs") != std::string::npos);
  CHECK(bound.out.find("share run: ") == std::string::npos);
}

TEST_CASE("show --gpu --sms: every bad count and every bad combination, one line, exit 2") {
  TempDir dir;
  const std::string out = (dir.path / "p.json").string();
  expect_input_error(cli({"show", kHead, "--sms", "66", "--json", out}),
                     "--sms takes the SMs of the --gpu specs; give --gpu");
  expect_input_error(cli({"show", kHead, "--gpu", "h100", "--sms", "0", "--json", out}),
                     "--sms: must be a decimal integer from 1 to 10000 (got \"0\")");
  expect_input_error(cli({"show", kHead, "--gpu", "h100", "--sms", "half", "--json", out}),
                     "(got \"half\")");
  expect_input_error(cli({"show", kHead, "--gpu", "h100", "--sms", "6.5", "--json", out}),
                     "(got \"6.5\")");
  expect_input_error(cli({"show", kHead, "--gpu", "h100", "--sms", "133", "--json", out}),
                     "--sms: h100-sxm5 has 132 SMs: 133 is not a share of them (1 to 132)");
  // The first spec that cannot take the share names itself (an A100 has 108 SMs).
  expect_input_error(cli({"show", kHead, "--gpu", "h100,a100", "--sms", "120"}),
                     "is not a share of them (1 to 108)");
  expect_input_error(cli({"show", kHead, "--gpu", "h100,b200", "--json", out}),
                     "--gpu with --json or --csv writes the report projected onto one spec");
  expect_input_error(cli({"show", kHead, "--gpu", "h100", "--markdown", out}),
                     "--gpu prints the projection; it writes no --markdown");
  expect_input_error(cli({"show", kModel, "--gpu", "h100", "--sms", "66"}),
                     "nothing measured to project");
  expect_input_error(cli({"show", kHead, "--gpu", "h100", "--share-run", kHead}),
                     "--share-run serves a projection onto a share of the SMs; give --gpu and "
                     "--sms");
  // The report itself, measured on all the SMs, is no share run.
  expect_input_error(cli({"show", kHead, "--gpu", "h100", "--sms", "66", "--share-run", kHead}),
                     ": not measured on a share of the SMs (run --sms N writes one)");
  const std::string few = (dir.path / "few.json").string();
  std::filesystem::copy_file(kModel, few);
  expect_input_error(
      cli({"show", kHead, "--gpu", "h100", "--sms", "66", "--share-run", few, "--json", few}),
      "--json " + few + " would overwrite the input " + few);
  CHECK_FALSE(std::filesystem::exists(out));
}
