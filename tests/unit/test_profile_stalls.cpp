// `profile --stalls` without a GPU: the option through the environment, the "stalls" records
// the injection library writes, how they become each row's StallSampling (kernel launches,
// graph launches and their nodes, launches CUPTI could not sample), and the command end to end
// with a stand-in program that writes the records the library would (as test_profile.cpp does).
#include <doctest/doctest.h>

#include <sys/stat.h>

#include <cstdlib>
#include <nlohmann/json.hpp>

#include "lib/core/base/errors.hpp"
#include "lib/core/domain/metric_catalog.hpp"
#include "lib/profile/profile_protocol.hpp"
#include "tests/unit/helpers.hpp"

using namespace roofline;

namespace {

constexpr const char* kAdd = "_Z3addPfS_i";
constexpr const char* kScale = "_Z5scalePfi";

PcSample pc(const std::string& function, std::uint64_t offset,
            std::map<std::string, std::uint64_t> reasons) {
  PcSample out;
  out.function = function;
  out.cubin_crc = 0xfeedbeefcafe1234;
  out.pc_offset = offset;
  out.reasons = std::move(reasons);
  return out;
}

StallRecord sampled_record(std::int64_t index) {
  StallRecord r;
  r.launch_index = index;
  r.sampled = true;
  r.period_log2 = 9;
  r.expected_seconds = 2.5e-5;
  r.totals = {1000, 3, 0, false};
  r.pcs = {pc(kAdd, 0x40, {{"long_scoreboard", 600}, {"selected", 100}}),
           pc(kAdd, 0x80, {{"wait", 200}}), pc(kScale, 0x10, {{"barrier", 100}})};
  return r;
}

KernelLaunch launch(std::int64_t index, const std::string& mangled) {
  KernelLaunch l;
  l.mangled_name = mangled;
  l.demangled_name = mangled == kAdd ? "add(float*, float*, int)" : "scale(float*, int)";
  l.index = index;
  l.process_id = 77;
  l.process = "app";
  return l;
}

Row row_of(const KernelLaunch& l) {
  Row row;
  row.launch = l;
  row.status = RowStatus::kCountersUnavailable;
  return row;
}

DeviceInfo h200() {
  return DeviceInfo{"NVIDIA H200", "GH100", "9.0", 132, 150754820096, 62914560, "CUDA 13.0", ""};
}

// An executable shell script in `dir`.
std::string script(const TempDir& dir, const std::string& name, const std::string& body) {
  const auto path = dir.path / name;
  write_text(path, "#!/bin/sh\n" + body + "\n");
  ::chmod(path.c_str(), 0755);
  return path.string();
}

}  // namespace

TEST_CASE("profile stalls: the option travels through the environment") {
  ProfileOptions options;
  options.stalls = true;
  options.stalls_per_kernel = 4;
  for (const auto& [name, value] : to_environment(options))
    ::setenv(name.c_str(), value.c_str(), 1);
  CHECK(options_from_environment().stalls);
  CHECK(options_from_environment().stalls_per_kernel == 4);
  ::setenv(profile_env::kStallsPerKernel, "-2", 1);
  CHECK_THROWS_WITH_AS(options_from_environment(),
                       "CUFLASH_ROOFLINE_PROFILE_STALLS_PER_KERNEL=-2: must be an integer >= -1",
                       InputError);
  ::setenv(profile_env::kStallsPerKernel, "-1", 1);
  ::setenv(profile_env::kStalls, "0", 1);
  CHECK_FALSE(options_from_environment().stalls);
  ::setenv(profile_env::kStalls, "yes", 1);
  CHECK_THROWS_WITH_AS(options_from_environment(),
                       "CUFLASH_ROOFLINE_PROFILE_STALLS=yes: must be 0 or 1", InputError);
  for (const auto& [name, value] : to_environment(ProfileOptions{})) ::unsetenv(name.c_str());
  CHECK_FALSE(options_from_environment().stalls);  // off unless asked for
  CHECK(options_from_environment().stalls_per_kernel == -1);
}

TEST_CASE("profile stalls: a stalls record reads back as written") {
  StallRecord failed;
  failed.launch_index = 12;
  failed.period_log2 = 5;
  failed.expected_seconds = 1e-3;
  failed.expected_default = true;
  failed.note = "not sampled: CUPTI_ERROR_NOT_SUPPORTED";
  const ProcessRecords p = read_process_records(
      process_record(77, 1, "app") + stalls_record(sampled_record(4)) + stalls_record(failed),
      "77.jsonl");
  REQUIRE(p.stalls.size() == 2);
  CHECK(p.stalls[0] == sampled_record(4));  // the 64-bit CRC kept whole
  CHECK(p.stalls[1] == failed);
  CHECK(cubin_file_name(0xfeedbeefcafe1234) == "cubin-feedbeefcafe1234.cubin");

  // Malformed records are refused with their path.
  std::string bad = stalls_record(sampled_record(4));
  bad.replace(bad.find("\"0xfeedbeefcafe1234\""), 20, "\"feedbeef\"");
  CHECK_THROWS_WITH_AS(read_process_records(bad + "\n", "77.jsonl"),
                       doctest::Contains("pcs[0].crc: must be a hexadecimal CRC"), InputError);
  StallRecord contradictory = sampled_record(4);
  contradictory.sampled = false;
  CHECK_THROWS_WITH_AS(read_process_records(stalls_record(contradictory) + "\n", "77.jsonl"),
                       doctest::Contains("a launch not sampled has no PCs"), InputError);
  std::string negative = stalls_record(sampled_record(4));
  negative.replace(negative.find("\"wait\":200"), 10, "\"wait\":-2");
  CHECK_THROWS_AS(read_process_records(negative + "\n", "77.jsonl"), InputError);
}

TEST_CASE("profile stalls: a kernel launch's row gets its samples summarised as run's are") {
  std::vector<Row> rows = {row_of(launch(4, kAdd)), row_of(launch(5, kAdd))};
  attach_stalls(rows, {sampled_record(4)}, {"nvdisasm failed on a sampled module"});
  REQUIRE(rows[0].stalls.has_value());
  CHECK_FALSE(rows[1].stalls.has_value());  // no record: not sampled, no StallSampling
  const StallSampling& s = *rows[0].stalls;
  CHECK(s.samples == 1000);
  CHECK(s.dropped == 3);
  CHECK(s.period_log2 == 9);
  CHECK(dominant_stall(s) == "long_scoreboard");
  CHECK(stall_share(s, "long_scoreboard") == doctest::Approx(0.6));
  double sum = 0;
  for (const auto& [reason, samples] : s.reasons) sum += stall_share(s, reason);
  CHECK(sum == doctest::Approx(1.0));
  REQUIRE(s.hottest.size() == 3);
  CHECK(s.hottest[0].pc_offset == 0x40);
  CHECK(s.hottest[0].reason == "long_scoreboard");
  CHECK(s.hottest[0].samples == 700);
  // The same summary as run's stall pass (stall_sampling_of), with the app's note.
  CHECK(s == stall_sampling_of(sampled_record(4).pcs, 9, {1000, 3, 0, false},
                               {"nvdisasm failed on a sampled module"}));
  CHECK(s.note.find("nvdisasm failed") != std::string::npos);
  CHECK(s.note.find("no line information") != std::string::npos);  // none filled here
}

TEST_CASE("profile stalls: a graph launch's samples go to its parent and, by function, its nodes") {
  KernelLaunch graph = launch(9, "");
  graph.graph = true;
  graph.demangled_name = "CUDA graph";
  KernelLaunch add_node = launch(9, kAdd);
  add_node.node_kind = "kernel";
  add_node.graph_node_id = 1;
  KernelLaunch scale_node = launch(9, kScale);
  scale_node.node_kind = "kernel";
  scale_node.graph_node_id = 2;
  scale_node.node_position = 1;
  KernelLaunch scale_again = scale_node;
  scale_again.graph_node_id = 3;
  scale_again.node_position = 2;
  KernelLaunch copy = launch(9, "");
  copy.node_kind = "memcpy";
  copy.node_position = 3;
  KernelLaunch idle = launch(9, "_Z4idlev");
  idle.node_kind = "kernel";
  idle.node_position = 4;
  std::vector<Row> rows = {row_of(graph),       row_of(add_node), row_of(scale_node),
                           row_of(scale_again), row_of(copy),     row_of(idle)};
  attach_stalls(rows, {sampled_record(9)});
  REQUIRE(rows[0].stalls.has_value());
  CHECK(rows[0].stalls->samples == 1000);  // the parent: the whole launch
  REQUIRE(rows[1].stalls.has_value());
  CHECK(rows[1].stalls->samples == 900);  // add's PCs alone
  CHECK(dominant_stall(*rows[1].stalls) == "long_scoreboard");
  REQUIRE(rows[2].stalls.has_value());
  CHECK(rows[2].stalls->samples == 100);
  CHECK(dominant_stall(*rows[2].stalls) == "barrier");
  // Two nodes of one function share its samples, and say so.
  CHECK(rows[2].stalls->note.find("all 2 nodes of this kernel") != std::string::npos);
  CHECK(*rows[3].stalls == *rows[2].stalls);
  CHECK_FALSE(rows[4].stalls.has_value());  // a memcpy has no warps
  REQUIRE(rows[5].stalls.has_value());      // a kernel no sample fell in
  CHECK(rows[5].stalls->samples == 0);
  CHECK(rows[5].stalls->note.find("no sample of the graph launch fell in this node's kernel") == 0);
}

TEST_CASE("profile stalls: a launch CUPTI could not sample says why, with no samples") {
  StallRecord failed;
  failed.launch_index = 4;
  failed.period_log2 = 10;
  failed.note = "not sampled: CUPTI_ERROR_NOT_SUPPORTED (the device has no PC sampling)";
  std::vector<Row> rows = {row_of(launch(4, kAdd))};
  attach_stalls(rows, {failed}, {"ignored for a launch not sampled"});
  REQUIRE(rows[0].stalls.has_value());
  CHECK(rows[0].stalls->samples == 0);
  CHECK(rows[0].stalls->period_log2 == 10);
  CHECK(rows[0].stalls->note == failed.note);
  CHECK(dominant_stall(*rows[0].stalls).empty());
  CHECK(stall_brief(*rows[0].stalls).empty());

  // The period's default is said where it was used.
  StallRecord first = sampled_record(5);
  first.expected_default = true;
  first.expected_seconds = kStallDefaultSeconds;
  std::vector<Row> more = {row_of(launch(5, kAdd))};
  attach_stalls(more, {first});
  CHECK(more[0].stalls->note.find("period for an assumed 1000 µs launch") != std::string::npos);
}

TEST_CASE("cli: profile --stalls with a stand-in program") {
  TempDir dir;
  const auto profile = profile_with_stand_in;
  const std::string json = (dir.path / "out.json").string();

  SUBCASE("misuse: one line, exit 2, nothing written") {
    for (const std::vector<std::string>& misuse :
         {std::vector<std::string>{"--counter-set", "full"},
          {"--counter-set", "roofline"},
          {"--replay", "launch"},
          {"--graph-nodes", "counted"}}) {
      std::vector<std::string> args = {"--stalls", "--json", json};
      args.insert(args.end(), misuse.begin(), misuse.end());
      args.insert(args.end(), {"--", "/bin/true"});
      const CliResult r = profile(args);
      CHECK(r.code == 2);
      CHECK(r.err.find("--stalls") != std::string::npos);
      CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
      CHECK_FALSE(std::filesystem::exists(json));
    }
    const CliResult alone = profile({"--stalls-per-kernel", "2", "--", "/bin/true"});
    CHECK(alone.code == 2);
    CHECK(alone.err.find("--stalls") != std::string::npos);
  }
  SUBCASE("a sampled launch: its row has the stalls, the table the column") {
    KernelLaunch l = launch(4, kAdd);
    l.grid = {256, 1, 1};
    l.block = {128, 1, 1};
    write_text(dir.path / "records",
               process_record(77, 1, "app") +
                   device_record(h200(), "roofline",
                                 catalogue_metrics("GH100", CounterSet::kRoofline), 0) +
                   launch_record(l, RowStatus::kCountersUnavailable, "sampled for warp stalls",
                                 {{quantity::kGpuTime, 2.5e-5}}) +
                   stalls_record(sampled_record(4)) + end_record(1, 1));
    // The stand-in writes its records only when the app asked for stalls (and for timed graph
    // nodes, --stalls's default).
    const std::string program = script(
        dir, "sampled.sh",
        "[ \"$CUFLASH_ROOFLINE_PROFILE_STALLS\" = 1 ] || exit 9\n"
        "[ \"$CUFLASH_ROOFLINE_PROFILE_GRAPH_NODES\" = timed ] || exit 8\n"
        "cat " +
            (dir.path / "records").string() + " > \"$CUFLASH_ROOFLINE_PROFILE_DIR/$$.jsonl\"");
    const CliResult r = profile({"--stalls", "--json", json, "--", program});
    CHECK(r.code == 0);
    CHECK(r.err.find("error") == std::string::npos);
    const auto j = nlohmann::json::parse(read_text(json));
    REQUIRE(j["rows"].size() == 1);
    const auto& stalls = j["rows"][0]["stalls"];
    CHECK(stalls["samples"] == 1000);
    CHECK(stalls["reasons"]["long_scoreboard"] == 600);
    CHECK(stalls["hottest"][0]["pc_offset"] == 0x40);
    CHECK(j["context"]["counters"].get<std::string>().find("--stalls") != std::string::npos);
    // The table's stall column, from the same row.
    const CliResult table = profile({"--stalls", "--", program});
    CHECK(table.code == 0);
    CHECK(table.out.find("long_scoreboard 60%") != std::string::npos);
  }
}
