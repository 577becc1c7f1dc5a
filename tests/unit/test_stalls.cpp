// Warp stalls (lib/core/domain/stalls.hpp and their readers and writers): the summary of a
// launch's samples, ncu's names, the report JSON, the SASS listing, the table column, the
// section, and the advice they feed.
#include <doctest/doctest.h>

#include <algorithm>

#include <nlohmann/json.hpp>

#include "lib/core/base/errors.hpp"
#include "lib/core/domain/metric_catalog.hpp"
#include "lib/core/domain/sass_listing.hpp"
#include "lib/core/domain/stalls.hpp"
#include "lib/core/model/model.hpp"
#include "lib/core/report/report_read.hpp"
#include "lib/core/verdict/advice.hpp"
#include "lib/core/writers/report_writers.hpp"
#include "lib/core/writers/stall_section.hpp"
#include "tests/unit/helpers.hpp"

using namespace roofline;

namespace {

// Three PCs of one kernel: two on line 10, one on line 20; 100 samples in all.
std::vector<PcSample> three_pcs() {
  return {
      {"_Z1kv",
       0x40,
       {{"barrier", 30}, {"selected", 5}},
       "BAR.SYNC.DEFER_BLOCKING 0x0",
       "/src/k.cu",
       10},
      {"_Z1kv",
       0x50,
       {{"long_scoreboard", 25}, {"selected", 5}},
       "LDG.E.128 R4, desc[UR4][R2.64]",
       "/src/k.cu",
       10},
      {"_Z1kv",
       0x90,
       {{"math_pipe_throttle", 20}, {"selected", 15}},
       "HMMA.16816.F32 R8, R4, R6, R8",
       "/src/k.cu",
       20},
  };
}

const GpuSpec& h200() {
  return shipped_spec("h200");
}

// flash-v3 at 40% of its wgmma roof, counted: no specific lever, so the latency one.
Row slow_wgmma_row() {
  Row row;
  row.kernel = "flash-v3";
  row.spec_key = "h200-sxm";
  row.workload.batch = 4;
  row.workload.heads = 16;
  row.workload.seq_len = 8192;
  row.workload.head_dim = 128;
  row.prediction = predict(find_kernel_model("flash-v3"), row.workload, h200());
  row.counters[quantity::kTensorWgmma] = row.prediction.model_flops;
  row.counters[quantity::kDramRead] = row.prediction.model_dram_bytes;
  row.counters[quantity::kDramWrite] = 0;
  const double peak = h200().ceiling(ComputePath::kTensorFp16)->peak_tflops * 1e12;
  row.timing = Timing{{row.prediction.model_flops / (0.4 * peak)}, 0, 0};
  return row;
}

}  // namespace

TEST_CASE("stalls: ncu's names from CUPTI's, the not-issued twins left out") {
  CHECK(ncu_stall_name("smsp__pcsamp_warps_issue_stalled_long_scoreboard") == "long_scoreboard");
  CHECK(ncu_stall_name("smsp__pcsamp_warps_issue_stalled_selected") == "selected");
  CHECK(ncu_stall_name("smsp__pcsamp_warps_issue_stalled_barrier_not_issued").empty());
  CHECK(ncu_stall_name("smsp__pcsamp_sample_count").empty());
  CHECK(ncu_stall_name("smsp__pcsamp_samples_data_dropped").empty());
  CHECK(ncu_stall_name("smsp__pcsamp_warps_issue_stalled_warpgroup_arrive") == "warpgroup_arrive");
  REQUIRE(stall_reason_info("warpgroup_arrive") != nullptr);
  REQUIRE(stall_reason_info("no_instructions") != nullptr);
  REQUIRE(stall_reason_info("mio_throttle") != nullptr);
  CHECK(std::string(stall_reason_info("barrier")->lever).find("barrier") != std::string::npos);
  CHECK(stall_reason_info("a_reason_of_a_newer_gpu") == nullptr);
}

TEST_CASE("stalls: a launch's samples by reason, instruction and line") {
  const StallSampling s = summarize_stalls(three_pcs(), 7, 3);
  CHECK(s.samples == 100);
  CHECK(s.dropped == 3);
  CHECK(s.period_log2 == 7);
  CHECK(s.reasons.at("selected") == 25);
  CHECK(stall_share(s, "barrier") == doctest::Approx(0.30));
  CHECK(stall_share(s, "absent") == 0);
  // "selected" is issuing, not a stall: the dominant stall is barrier though selected has 25.
  CHECK(dominant_stall(s) == "barrier");
  CHECK(stall_brief(s) == "barrier 30%");
  CHECK(stall_half_width(s) == doctest::Approx(0.098));
  REQUIRE(s.hottest.size() == 3);
  CHECK(s.hottest[0].pc_offset == 0x40);  // 35 samples
  CHECK(s.hottest[0].reason == "barrier");
  CHECK(s.hottest[1].pc_offset == 0x90);  // 35 as well: the lower offset first
  CHECK(s.hottest[2].pc_offset == 0x50);
  REQUIRE(s.lines.size() == 2);
  CHECK(s.lines[0] == StallLine{"/src/k.cu", 10, 65, "barrier"});
  CHECK(s.lines[1] == StallLine{"/src/k.cu", 20, 35, "math_pipe_throttle"});
  CHECK(s.note.empty());
  // Without line information or SASS, the row says so.
  std::vector<PcSample> bare = three_pcs();
  bare[1].file.clear();
  bare[2].sass.clear();
  const StallSampling partial = summarize_stalls(bare, 7, 0);
  CHECK(partial.note.find("no line information") != std::string::npos);
  CHECK(partial.note.find("not disassembled") != std::string::npos);
  CHECK(partial.lines.size() == 2);  // line 10 from the first PC only
  CHECK(partial.lines[0].samples == 35);
  // No samples: no dominant reason, no brief.
  const StallSampling none = summarize_stalls({}, 5, 0);
  CHECK(dominant_stall(none).empty());
  CHECK(stall_brief(none).empty());
}

TEST_CASE("stalls: at most kStallListed instructions and lines are kept") {
  std::vector<PcSample> many;
  for (int i = 0; i < 25; ++i)
    many.push_back({"_Z1kv",
                    static_cast<std::uint64_t>(16 * i),
                    {{"wait", static_cast<std::uint64_t>(i + 1)}},
                    "FFMA R1, R2, R3, R4",
                    "/k.cu",
                    i + 1});
  const StallSampling s = summarize_stalls(many, 5, 0);
  CHECK(s.hottest.size() == kStallListed);
  CHECK(s.lines.size() == kStallListed);
  CHECK(s.hottest.front().samples == 25);
  CHECK(s.lines.front().line == 25);
  CHECK(s.samples == 25 * 26 / 2);  // every sample counts, listed or not
}

TEST_CASE("stalls: the report JSON keeps them, and refuses reasons that do not add up") {
  Report report =
      read_report_file(std::filesystem::path(ROOFLINE_TEST_DATA_DIR) / "reports" / "head.json");
  REQUIRE_FALSE(report.rows.empty());
  report.rows[0].stalls = summarize_stalls(three_pcs(), 7, 3);
  const std::string text = render_json(report);
  const Report back = report_from_text(text, "stalls.json");
  REQUIRE(back.rows[0].stalls);
  CHECK(*back.rows[0].stalls == *report.rows[0].stalls);
  CHECK_FALSE(back.rows[1].stalls);
  nlohmann::json j = nlohmann::json::parse(text);
  j["rows"][0]["stalls"]["samples"] = 99;
  CHECK_THROWS_WITH_AS(report_from_text(j.dump(), "bad.json"),
                       doctest::Contains("must sum to \"samples\" (99), not 100"), InputError);
  j["rows"][0]["stalls"]["samples"] = 100;
  j["rows"][0]["stalls"]["extra"] = 1;
  CHECK_THROWS_AS(report_from_text(j.dump(), "bad.json"), InputError);
}

TEST_CASE("stalls: the SASS listing by function and offset") {
  const std::string listing =
      "\t.section\t.text._Z1kPf,\"ax\",@progbits\n"
      "_Z1kPf:\n"
      ".text._Z1kPf:\n"
      "        /*0000*/                   LDC R1, c[0x0][0x28] ;\n"
      "        /*0010*/              @!P0 BRA `(.L_x_1) ;\n"
      ".L_x_1:\n"
      "        /*0a40*/                   HGMMA.64x128x16.F32 gdesc[UR4], RZ, !UPT ;\n"
      ".text._Z2k2v:\n"
      "        /*0000*/                   EXIT ;\n"
      "        /*zz*/ NOT AN INSTRUCTION ;\n";
  const SassListing sass = parse_sass_listing(listing);
  REQUIRE(sass.size() == 2);
  CHECK(sass.at("_Z1kPf").at(0) == "LDC R1, c[0x0][0x28]");
  CHECK(sass.at("_Z1kPf").at(0x10) == "@!P0 BRA `(.L_x_1)");
  CHECK(sass.at("_Z1kPf").at(0xa40) == "HGMMA.64x128x16.F32 gdesc[UR4], RZ, !UPT");
  CHECK(sass.at("_Z2k2v").size() == 1);
  CHECK(parse_sass_listing("").empty());
}

TEST_CASE("stalls: an mbarrier wait, and the branch on its predicate, name the wait") {
  // As nvdisasm lists Hopper's mbarrier.try_wait loops (flash-v3, flash-decode's TMA stream).
  const std::string listing =
      ".text._Z1kv:\n"
      "        /*0300*/                   UIADD3 UR10, UR6, 0x30800, UR9 ;\n"
      "        /*0310*/                   SYNCS.PHASECHK.TRANS64.TRYWAIT P0, [UR10], R0 ;\n"
      "        /*0320*/              @!P0 BRA 0xa820 ;\n"
      "        /*0a40*/                   SYNCS.PHASECHK.TRANS64.TRYWAIT P2, [UR20], R12 ;\n"
      "        /*0a50*/                   SHF.R.U32.HI R11, RZ, 0x4, R11 ;\n"
      "        /*0a60*/              @!P2 BRA `(.L_x_7) ;\n"
      "        /*0a70*/              @!P1 BRA `(.L_x_8) ;\n"
      "        /*0a80*/                   LDG.E.128 R4, desc[UR4][R2.64] ;\n"
      "        /*0a90*/              @P2 BRA `(.L_x_9) ;\n"
      "        /*0b00*/                   SYNCS.ARRIVE.TRANS64 RZ, [UR10], RZ ;\n"
      "        /*0b10*/                   NOP ;\n"
      "        /*0b20*/                   NOP ;\n"
      "        /*0b30*/                   NOP ;\n"
      "        /*0b40*/                   NOP ;\n"
      "        /*0b50*/                   SYNCS.PHASECHK.TRANS64.TRYWAIT P3, [UR10], R0 ;\n"
      "        /*0b60*/                   NOP ;\n"
      "        /*0b70*/                   NOP ;\n"
      "        /*0b80*/                   NOP ;\n"
      "        /*0b90*/                   NOP ;\n"
      "        /*0ba0*/              @!P3 BRA `(.L_x_10) ;\n";
  const SassListing sass = parse_sass_listing(listing);
  const auto& k = sass.at("_Z1kv");
  const std::string wait0 = "SYNCS.PHASECHK.TRANS64.TRYWAIT P0, [UR10], R0";
  const std::string wait2 = "SYNCS.PHASECHK.TRANS64.TRYWAIT P2, [UR20], R12";
  CHECK(mbarrier_wait_of(k, 0x310) == wait0);  // the wait itself
  CHECK(mbarrier_wait_of(k, 0x320) == wait0);  // the branch right after it
  CHECK(mbarrier_wait_of(k, 0xa60) == wait2);  // an instruction between
  CHECK(mbarrier_wait_of(k, 0xa70).empty());   // P1 is no wait's
  CHECK(mbarrier_wait_of(k, 0xa90).empty());   // P2's wait is more than 4 instructions back
  CHECK(mbarrier_wait_of(k, 0xa80).empty());   // a load
  CHECK(mbarrier_wait_of(k, 0xb00).empty());   // an arrive is not a wait
  CHECK(mbarrier_wait_of(k, 0xba0).empty());   // its wait is 5 instructions back
  CHECK(mbarrier_wait_of(k, 0x999).empty());   // no such offset
  // Odd text never reads past the instruction.
  for (const char* odd : {"@", "@!", "@!P0", "@P0 ", "@!P0 BR", "SYNCS.PHASECHK.TRANS64.TRYWAIT",
                          "SYNCS.PHASECHK.TRANS64.TRYWAIT P0"}) {
    const std::map<std::uint64_t, std::string> one = {{0, "SYNCS.PHASECHK.TRANS64.TRYWAIT P0"},
                                                      {0x10, odd}};
    CHECK_NOTHROW(mbarrier_wait_of(one, 0x10));
  }
  const std::map<std::uint64_t, std::string> bare = {{0, "SYNCS.PHASECHK.TRANS64.TRYWAIT P0"},
                                                     {0x10, "@!P0 BRA 0x0"}};
  CHECK(mbarrier_wait_of(bare, 0x10).empty());  // a wait without operands sets no predicate
}

TEST_CASE("stalls: long_scoreboard on mbarrier waits has its own lever") {
  std::vector<PcSample> pcs = three_pcs();
  pcs[1].reasons["long_scoreboard"] = 60;  // the LDG: its own loads
  const std::string loads = stall_reason_info("long_scoreboard")->lever;
  CHECK(stall_lever(summarize_stalls(pcs, 7, 0), "long_scoreboard") == loads);
  // Most of the listed long_scoreboard samples on a branch of an mbarrier wait.
  PcSample branch = pcs[1];
  branch.pc_offset = 0x320;
  branch.sass = "@!P0 BRA 0xa820";
  branch.waits_on = "SYNCS.PHASECHK.TRANS64.TRYWAIT P0, [UR10], R0";
  branch.reasons = {{"long_scoreboard", 70}};
  pcs.push_back(branch);
  const StallSampling s = summarize_stalls(pcs, 7, 0);
  const std::string lever = stall_lever(s, "long_scoreboard");
  CHECK(lever.find("wait on mbarriers") != std::string::npos);
  CHECK(lever != loads);
  CHECK(stall_lever(s, "barrier") == stall_reason_info("barrier")->lever);
  CHECK(stall_lever(s, "no_such_reason").empty());
  // The section names the wait beside its branch; JSON keeps it.
  Report report =
      read_report_file(std::filesystem::path(ROOFLINE_TEST_DATA_DIR) / "reports" / "head.json");
  report.rows[0].stalls = s;
  const std::string section = render_stalls(JudgedReport(report));
  CHECK(section.find("@!P0 BRA 0xa820  [k.cu:10]  (the branch of the mbarrier wait "
                     "SYNCS.PHASECHK.TRANS64.TRYWAIT P0, [UR10], R0)") != std::string::npos);
  CHECK(section.find("Lever: its warps wait on mbarriers") != std::string::npos);
  const Report back = report_from_text(render_json(report), "waits.json");
  REQUIRE(back.rows[0].stalls);
  CHECK(*back.rows[0].stalls == s);
  // Even split: the loads' lever stays.
  pcs.back().reasons = {{"long_scoreboard", 60}};
  CHECK(stall_lever(summarize_stalls(pcs, 7, 0), "long_scoreboard") == loads);
}

TEST_CASE("stalls: the table's stall column and the section under it") {
  Report report =
      read_report_file(std::filesystem::path(ROOFLINE_TEST_DATA_DIR) / "reports" / "head.json");
  report.rows[0].stalls = summarize_stalls(three_pcs(), 7, 0);
  const std::string table = render_table(report, {});
  CHECK(table.find("stall") != std::string::npos);
  CHECK(table.find("barrier 30%") != std::string::npos);
  const std::string section = render_stalls(JudgedReport(report));
  CHECK(section.find("barrier 30%, long_scoreboard 25%, selected 25%, math_pipe_throttle 20%") !=
        std::string::npos);
  CHECK(section.find("k.cu:10  65%  barrier") != std::string::npos);
  CHECK(section.find("0x40  35%  barrier  BAR.SYNC.DEFER_BLOCKING 0x0  [k.cu:10]") !=
        std::string::npos);
  CHECK(section.find("Lever: fewer barriers") != std::string::npos);
  // A report without sampled rows has neither.
  report.rows[0].stalls.reset();
  CHECK(render_stalls(JudgedReport(report)).empty());
  CHECK(render_table(report, {}).find("stall") == std::string::npos);
}

TEST_CASE("stalls: the latency lever names the dominant reason and its lever") {
  Row row = slow_wgmma_row();
  const std::optional<Advice> before = advise(row, analyze(row, h200()), h200());
  REQUIRE(before);
  REQUIRE(before->lever == Lever::kLatency);
  CHECK(before->action.find("--stalls") != std::string::npos);
  row.stalls = summarize_stalls(three_pcs(), 7, 0);
  const std::optional<Advice> after = advise(row, analyze(row, h200()), h200());
  REQUIRE(after);
  CHECK(after->lever == Lever::kLatency);
  CHECK(after->evidence.find("warps stalled most on barrier (30% of 100 samples)") !=
        std::string::npos);
  CHECK(after->action == stall_reason_info("barrier")->lever);
  // The gain is the same honest bound: the samples say why, not by how much.
  CHECK(after->estimated_speedup == doctest::Approx(before->estimated_speedup));
  // A math pipe's throttle names the row's pipe.
  std::vector<PcSample> pipe = three_pcs();
  pipe[2].reasons["math_pipe_throttle"] = 500;
  row.stalls = summarize_stalls(pipe, 7, 0);
  const std::optional<Advice> throttled = advise(row, analyze(row, h200()), h200());
  REQUIRE(throttled);
  CHECK(throttled->action.find("tensor FP16 (wgmma)") != std::string::npos);
  // Too few samples to read shares from: the advice stays as without them.
  StallSampling few = summarize_stalls(three_pcs(), 7, 0);
  few.samples = kStallSamplesForAdvice - 1;
  row.stalls = few;
  const std::optional<Advice> thin = advise(row, analyze(row, h200()), h200());
  REQUIRE(thin);
  CHECK(thin->action == before->action);
}

TEST_CASE("stalls: another lever keeps its place and gains the samples' evidence") {
  Row row = slow_wgmma_row();
  row.kernel = "flash-v2";
  row.prediction = predict(find_kernel_model("flash-v2"), row.workload, h200());
  row.counters.clear();
  row.counters[quantity::kTensorMmaSync] = row.prediction.model_flops;
  const std::optional<Advice> before = advise(row, analyze(row, h200()), h200());
  REQUIRE(before);
  REQUIRE(before->lever == Lever::kWgmma);
  row.stalls = summarize_stalls(three_pcs(), 7, 0);
  const std::optional<Advice> after = advise(row, analyze(row, h200()), h200());
  REQUIRE(after);
  CHECK(after->lever == Lever::kWgmma);
  CHECK(after->evidence.rfind(before->evidence, 0) == 0);
  CHECK(after->evidence.find("warps stalled most on barrier") != std::string::npos);
}

TEST_CASE("stalls: the sampling period gives a launch about the target's samples") {
  // flash-v2 d64 fwd, 0.85 ms on 132 SMs: 2^10 at the 1.98 GHz of a short first round (the H200
  // gave it 189k samples), 2^9 at 1.7 GHz.
  CHECK(stall_period_log2(0.85e-3, 1980, 132, 200000) == 10);
  CHECK(stall_period_log2(0.85e-3, 1700, 132, 200000) == 9);
  CHECK(stall_period_log2(0.85e-3, 1500, 132, 200000) == 9);
  CHECK(stall_period_log2(6.2e-3, 1700, 132, 200000) == 12);
  // Short launches get CUPTI's shortest period, long ones never pass its longest.
  CHECK(stall_period_log2(20e-6, 1700, 132, 200000) == 5);
  CHECK(stall_period_log2(3600, 2000, 200, 1) == 31);
  CHECK(stall_period_log2(0, 1700, 132, 200000) == 5);
  CHECK(stall_period_log2(1e-3, 1700, 132, 0) == 5);
  // profile's grid: 5, 8, 11, ... rounded down (more samples, never fewer), within 5..31.
  CHECK(stall_period_on_grid(5) == 5);
  CHECK(stall_period_on_grid(7) == 5);
  CHECK(stall_period_on_grid(8) == 8);
  CHECK(stall_period_on_grid(13) == 11);
  CHECK(stall_period_on_grid(31) == 29);
  CHECK(stall_period_on_grid(2) == 5);
  CHECK(stall_period_on_grid(40) == 29);
}
