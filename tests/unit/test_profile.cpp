// `profile` without a GPU: the record protocol, the options passed through the environment,
// and every fault path of the command. Stand-in programs are shell scripts that write the
// records the injection library would write (they load no CUDA, so the library is never
// loaded: --injection points at a stand-in that only looks like one, ROOFLINE_FAKE_INJECTION).
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

KernelLaunch sample_launch(std::int64_t index, const std::string& nvtx = "") {
  KernelLaunch l;
  l.mangled_name = "_Z3addPfS_i";
  l.demangled_name = "add(float*, float*, int)";
  l.nvtx_range = nvtx;
  l.grid = {256, 1, 1};
  l.block = {128, 1, 1};
  l.registers_per_thread = 16;
  l.index = index;
  l.process_id = 77;
  l.process = "app";
  return l;
}

DeviceInfo h200() {
  return DeviceInfo{"NVIDIA H200", "GH100", "9.0", 132, 150754820096, 62914560, "CUDA 13.0", ""};
}

std::string records_of_one_launch() {
  return process_record(77, 1, "app") +
         device_record(h200(), "roofline", catalogue_metrics("GH100", CounterSet::kRoofline), 1) +
         launch_record(sample_launch(4, "epoch / B2 H4 N512 d64 causal fwd"), RowStatus::kOk, "",
                       {{quantity::kGpuTime, 1e-5},
                        {quantity::kDramRead, 2e6},
                        {quantity::kDramWrite, 1e6},
                        {quantity::kL2, 3e6},
                        {quantity::kTensorMmaSync, 0}});
}

// An executable shell script in `dir`.
std::string script(const TempDir& dir, const std::string& name, const std::string& body) {
  const auto path = dir.path / name;
  write_text(path, "#!/bin/sh\n" + body + "\n");
  ::chmod(path.c_str(), 0755);
  return path.string();
}

}  // namespace

TEST_CASE("profile records: a launch record becomes a row with its launch and counters") {
  const ProcessRecords p = read_process_records(records_of_one_launch(), "77.jsonl");
  CHECK(p.process_id == 77);
  CHECK(p.parent_id == 1);
  REQUIRE(p.device.has_value());
  CHECK(p.device->name == "NVIDIA H200");
  CHECK(p.counter_passes == 1);
  REQUIRE(p.rows.size() == 1);
  const Row& row = p.rows[0];
  CHECK(row.kernel == "add");
  REQUIRE(row.launch.has_value());
  CHECK(row.launch->index == 4);
  CHECK(row.counters.at(quantity::kDramRead) == 2e6);
  REQUIRE(row.timing.has_value());
  CHECK(row.timing->median_seconds() == doctest::Approx(1e-5));
  // The NVTX range named a workload: the row has it.
  CHECK(row.launch->workload_known);
  CHECK(row.workload.seq_len == 512);
  CHECK(row.workload.causal);
  CHECK_FALSE(p.ended);
}

TEST_CASE("profile records: a graph launch and its nodes, named as they are, timestamps kept") {
  KernelLaunch graph;
  graph.demangled_name = "CUDA graph";
  graph.graph = true;
  graph.graph_nodes = 2;
  graph.index = 9;
  graph.graph_id = 3;
  graph.gpu_start_ns = 1'790'000'000'000'000'123;  // CUPTI timestamps: exact in the JSON
  graph.gpu_end_ns = 1'790'000'000'000'090'123;
  KernelLaunch kernel = graph;
  kernel.graph = false;
  kernel.graph_nodes = 0;
  kernel.node_kind = "kernel";
  kernel.graph_node_id = 41;
  kernel.mangled_name = "_Z3addPfS_";
  kernel.demangled_name = "add(float*, float*)";
  KernelLaunch copy = kernel;
  copy.node_kind = "memcpy";
  copy.graph_node_id = 42;
  copy.node_position = 1;
  copy.node_bytes = 1 << 20;
  copy.mangled_name.clear();
  copy.demangled_name = "memcpy DtoD";
  const std::string text =
      process_record(5, 1, "prog") +
      launch_record(graph, RowStatus::kCountersUnavailable, "graph", {{quantity::kGpuTime, 9e-5}}) +
      launch_record(kernel, RowStatus::kOk, "", {{quantity::kGpuTime, 5e-5}}) +
      launch_record(copy, RowStatus::kCountersUnavailable, "", {{quantity::kGpuTime, 2e-5}});
  const ProcessRecords p = read_process_records(text, "5.jsonl");
  REQUIRE(p.rows.size() == 3);
  CHECK(p.rows[0].kernel == "CUDA graph");  // not "graph", the last word of a signature
  CHECK(p.rows[1].kernel == "add");
  CHECK(p.rows[2].kernel == "memcpy DtoD");
  CHECK(*p.rows[0].launch == graph);
  CHECK(*p.rows[1].launch == kernel);
  CHECK(*p.rows[2].launch == copy);
  CHECK(p.rows[2].launch->is_graph_node());
  // Nodes share their launch's index; their place tells them apart (reports refuse duplicates).
  CHECK(p.rows[1].launch->shape_label() == "grid 1x1x1 block 1x1x1 #9.0");
  CHECK(p.rows[2].launch->shape_label() == "grid 1x1x1 block 1x1x1 #9.1");
  CHECK_FALSE(p.rows[0].launch->is_graph_node());
  // A node kind the reader does not know is refused with its path.
  std::string bad = launch_record(kernel, RowStatus::kOk, "", {});
  bad.replace(bad.find("\"kernel\""), 8, "\"kernal\"");
  CHECK_THROWS_AS(read_process_records(process_record(5, 1, "prog") + bad + "\n", "5.jsonl"),
                  InputError);
}

TEST_CASE("profile records: a cut-short last line is dropped, a bad line is an error") {
  const std::string text = records_of_one_launch() + end_record(9, 1);
  const ProcessRecords whole = read_process_records(text, "f");
  CHECK(whole.ended);
  CHECK(whole.launches == 9);
  CHECK(whole.phases.empty());
  const ProcessRecords timed = read_process_records(
      records_of_one_launch() + end_record(9, 1, {{"open", 0.25}, {"kernel", 0.5}}), "f");
  CHECK(timed.phases == std::map<std::string, double>{{"open", 0.25}, {"kernel", 0.5}});
  CHECK(describe_phases(timed.phases) == "total 0.750 s: open 0.250 s, kernel 0.500 s");
  CHECK(describe_phases({{"wait", 10}, {"events", 0.001}, {"sessions", 2}}) ==
        "total 10.001 s: wait 10.000 s, events 0.001 s; 2 counter session(s) opened");
  CHECK(describe_phases({{"pop", 0.5}, {"sync", 0.25}, {"push", 0.125}, {"batches", 2}}) ==
        "total 0.875 s: sync 0.250 s, push 0.125 s, pop 0.500 s; 2 batch(es) read");
  const ProcessRecords cut = read_process_records(text.substr(0, text.size() - 10), "f");
  CHECK_FALSE(cut.ended);
  CHECK(cut.rows.size() == 1);
  CHECK_THROWS_WITH_AS(read_process_records("{\"type\":\"process\"\nnot json\n{}\n", "f"),
                       doctest::Contains("f:1: not valid JSON ("), InputError);
  CHECK_THROWS_WITH_AS(read_process_records("{\"type\":\"launch\"}\n", "f"), "f:1: launch: missing",
                       InputError);
  CHECK_THROWS_WITH_AS(read_process_records("{\"type\":\"weird\"}\n", "f"),
                       "f:1: type: unknown record type \"weird\"", InputError);
}

TEST_CASE("profile records: read through the JSON reading layer, with its limits") {
  // Each record line of records_of_one_launch() with `from` replaced by `to`, then a message.
  struct Case {
    std::string from, to, message;
  } cases[] = {
      {"\"pid\":77", "\"pid\":1099511627776",
       "f:1: pid: must be an integer from 0 to 2147483647 (got 1099511627776)"},
      {"\"sm_count\":132", "\"sm_count\":2147483648",
       "f:2: sm_count: must be an integer from 1 to 10000 (got 2147483648)"},
      {"\"passes\":1", "\"passes\":-1", "f:2: passes: must be an integer from 0 to 10000 (got -1)"},
      {"\"memory_bytes\":", "\"memory_bytes\":1e400,\"x\":",
       "f:2: memory_bytes: number \"1e400\" is out of the range of a double"},
      {"\"grid\":[", "\"grid\":[4294967297,1,1],\"old_grid\":[",
       "f:3: launch.grid[0]: must be an integer from 1"},
      {"\"status\":\"ok\"", "\"status\":\"o\\u001bk\"", "f:3: status: unknown status \"o\\x1bk\""},
      {"\"counters\":{", "\"counters\":{\"x\":-5,",
       "f:3: counters.x: must not be negative (got -5)"},
      {"\"type\":\"process\"",
       "\"type\":\"process\",\"deep\":" + std::string(80, '[') + std::string(80, ']'), "f:1: deep"},
  };
  CHECK(read_process_records(end_record(1, 1, {{"open", 0.5}}), "f").phases.at("open") == 0.5);
  CHECK_THROWS_WITH_AS(read_process_records(end_record(1, 1, {{"open", -1}}), "f"),
                       "f:1: phases.open: must not be negative (got -1)", InputError);
  const std::string text = records_of_one_launch();
  for (const Case& c : cases) {
    std::string changed = text;
    const std::size_t at = changed.find(c.from);
    REQUIRE(at != std::string::npos);
    changed.replace(at, c.from.size(), c.to);
    CAPTURE(c.to);
    CHECK_THROWS_WITH_AS(read_process_records(changed, "f"), doctest::Contains(c.message.c_str()),
                         InputError);
  }
}

TEST_CASE("profile records: workloads in NVTX range names") {
  CHECK_FALSE(workload_in_range_name("").has_value());
  CHECK_FALSE(workload_in_range_name("forward pass").has_value());
  const auto w = workload_in_range_name("B4 H16 N8192 d128 full bwd / B1 H8 N1024 d64 causal fwd");
  REQUIRE(w.has_value());
  CHECK(w->batch == 1);  // the innermost range
  CHECK(w->seq_len == 1024);
  CHECK(w->pass == Pass::kForward);
  CHECK_FALSE(workload_in_range_name("B1 H8 N99999999999999 d64 full fwd").has_value());
}

TEST_CASE("profile options travel through the environment") {
  ProfileOptions options;
  options.counter_set = CounterSet::kFull;
  options.cache = CacheControl::kWarm;
  options.kernel_regex = "flash.*fwd";
  options.launch_skip = 3;
  options.launch_count = 5;
  options.replay = ReplayMode::kPerLaunch;
  options.graph_nodes = GraphNodes::kOff;
  for (const auto& [name, value] : to_environment(options))
    ::setenv(name.c_str(), value.c_str(), 1);
  const ProfileOptions back = options_from_environment();
  CHECK(back.counter_set == CounterSet::kFull);
  CHECK(back.cache == CacheControl::kWarm);
  CHECK(back.kernel_regex == "flash.*fwd");
  CHECK(back.launch_skip == 3);
  CHECK(back.launch_count == 5);
  CHECK(back.replay == ReplayMode::kPerLaunch);
  CHECK(back.graph_nodes == GraphNodes::kOff);
  CHECK(ProfileOptions{}.replay == ReplayMode::kBatch);  // the defaults
  CHECK(ProfileOptions{}.graph_nodes == GraphNodes::kCounted);
  ::setenv(profile_env::kGraphNodes, "count", 1);
  CHECK_THROWS_WITH_AS(options_from_environment(),
                       "CUFLASH_ROOFLINE_PROFILE_GRAPH_NODES=count: must be counted, timed or off",
                       InputError);
  ::setenv(profile_env::kGraphNodes, "counted", 1);
  CHECK(options_from_environment().graph_nodes == GraphNodes::kCounted);
  ::setenv(profile_env::kGraphNodes, "timed", 1);
  CHECK(options_from_environment().graph_nodes == GraphNodes::kTimed);
  ::setenv(profile_env::kReplay, "auto", 1);
  CHECK_THROWS_WITH_AS(options_from_environment(),
                       "CUFLASH_ROOFLINE_PROFILE_REPLAY=auto: must be batch or launch", InputError);
  ::setenv(profile_env::kReplay, "batch", 1);
  CHECK(options_from_environment().replay == ReplayMode::kBatch);
  ::setenv(profile_env::kLaunchSkip, "-2", 1);
  CHECK_THROWS_WITH_AS(options_from_environment(),
                       "CUFLASH_ROOFLINE_PROFILE_SKIP=-2: must be an integer >= 0", InputError);
  ::setenv(profile_env::kCache, "lukewarm", 1);
  CHECK_THROWS_AS(options_from_environment(), InputError);
  for (const auto& [name, value] : to_environment(ProfileOptions{})) ::unsetenv(name.c_str());
}

TEST_CASE("cli: profile fault paths that need no GPU") {
  TempDir dir;
  const auto profile = profile_with_stand_in;

  SUBCASE("no program") {
    const CliResult r = cli({"profile"});
    CHECK(r.code == 2);
  }
  SUBCASE("an unknown replay mode") {
    const CliResult r = profile({"--replay", "kernel", "--", "/bin/true"});
    CHECK(r.code == 2);
    CHECK(r.err.find("--replay") != std::string::npos);
    CHECK(r.out.empty());
  }
  SUBCASE("program not found") {
    const CliResult r = profile({"--", (dir.path / "missing").string()});
    CHECK(r.code == 2);
    CHECK(r.err == "error: " + (dir.path / "missing").string() + ": not found\n");
    CHECK(profile({"--", "no-such-program-on-path-xyz"}).code == 2);
  }
  SUBCASE("program not executable") {
    write_text(dir.path / "plain.txt", "hello");
    const CliResult r = profile({"--", (dir.path / "plain.txt").string()});
    CHECK(r.code == 2);
    CHECK(r.err.find("not executable") != std::string::npos);
  }
  SUBCASE("injection library missing") {
    const CliResult r =
        cli({"profile", "--injection", (dir.path / "nope.so").string(), "--", "/bin/true"});
    CHECK(r.code == 2);
    CHECK(r.err.find("--injection") != std::string::npos);
  }
  SUBCASE("a program that never uses CUDA") {
    const CliResult r = profile({"--", "/bin/true"});
    CHECK(r.code == 2);
    CHECK(r.err ==
          "error: /bin/true never initialised CUDA: no process loaded the injection "
          "library\n");
  }
  SUBCASE("a program that fails") {
    const CliResult r = profile({"--", script(dir, "fail.sh", "exit 3")});
    CHECK(r.code == 2);
    CHECK(r.err.find("exited with status 3") != std::string::npos);
  }
  SUBCASE("a program that launches no kernel") {
    write_text(dir.path / "records", process_record(1, 1, "app") + end_record(0, 0));
    const CliResult r =
        profile({"--", script(dir, "idle.sh",
                              "cat " + (dir.path / "records").string() +
                                  " > \"$CUFLASH_ROOFLINE_PROFILE_DIR/$$.jsonl\"")});
    CHECK(r.code == 2);
    CHECK(r.err.find("launched no CUDA kernel") != std::string::npos);
  }
  SUBCASE("counters not permitted") {
    write_text(dir.path / "records",
               process_record(1, 1, "app") +
                   error_record(ProfileErrorKind::kNotPermitted,
                                "CUPTI_ERROR_INSUFFICIENT_PRIVILEGES: see "
                                "https://developer.nvidia.com/ERR_NVGPUCTRPERM"));
    const CliResult r =
        profile({"--", script(dir, "denied.sh",
                              "cat " + (dir.path / "records").string() +
                                  " > \"$CUFLASH_ROOFLINE_PROFILE_DIR/$$.jsonl\"")});
    CHECK(r.code == 3);
    CHECK(r.err.find("ERR_NVGPUCTRPERM") != std::string::npos);
  }
  SUBCASE("a crash: its status reported, rows measured before written") {
    write_text(dir.path / "records", records_of_one_launch());
    const std::string json = (dir.path / "out.json").string();
    const CliResult r =
        profile({"--json", json, "--",
                 script(dir, "crash.sh",
                        "cat " + (dir.path / "records").string() +
                            " > \"$CUFLASH_ROOFLINE_PROFILE_DIR/$$.jsonl\"; kill -SEGV $$")});
    CHECK(r.code == 2);
    CHECK(r.err.find("was killed by signal 11 (SIGSEGV); the 1 launches profiled before are "
                     "written") != std::string::npos);
    const auto j = nlohmann::json::parse(read_text(json));
    REQUIRE(j["rows"].size() == 1);
    CHECK(j["context"]["command"] == "profile");
    CHECK(j["rows"][0]["launch"]["grid"][0] == 256);
    CHECK(j["rows"][0]["spec"] == "h200-sxm");
  }
  SUBCASE("child processes: one report, rows tagged with their process") {
    write_text(dir.path / "records", records_of_one_launch());
    const std::string records = (dir.path / "records").string();
    const std::string out = "\"$CUFLASH_ROOFLINE_PROFILE_DIR\"";
    const std::string body = "cat " + records + " > " + out + "/$$.jsonl\n" +
                             "sh -c 'sed s/77/78/g " + records + " > " + out + "/$$.jsonl'\nexit 0";
    const CliResult r = profile({"--json", "-", "--", script(dir, "parent.sh", body)});
    REQUIRE(r.code == 0);
    const auto j = nlohmann::json::parse(r.out);
    REQUIRE(j["rows"].size() == 2);
    CHECK(j["rows"][0]["launch"]["process_id"] == 77);
    CHECK(j["rows"][1]["launch"]["process_id"] == 78);
  }
  SUBCASE("a child without counters: its rows have the kernel time and say why") {
    // What the library writes when another process kept the GPU's counters too long.
    KernelLaunch timed = sample_launch(0);
    timed.process_id = 78;
    write_text(dir.path / "records", records_of_one_launch());
    write_text(dir.path / "child",
               process_record(78, 77, "app") +
                   device_record(h200(), "roofline",
                                 catalogue_metrics("GH100", CounterSet::kRoofline), 0) +
                   launch_record(timed, RowStatus::kCountersUnavailable,
                                 "another process of this run (pid 77) kept the GPU's counters "
                                 "for more than 10 s: kernel time only (CUDA events)",
                                 {{quantity::kGpuTime, 2e-5}}) +
                   end_record(1, 1, {{"wait", 10.0}, {"events", 0.001}}));
    const std::string out = "\"$CUFLASH_ROOFLINE_PROFILE_DIR\"";
    const std::string body = "cat " + (dir.path / "records").string() + " > " + out +
                             "/77.jsonl\ncat " + (dir.path / "child").string() + " > " + out +
                             "/78.jsonl\nexit 0";
    const CliResult r = profile({"--json", "-", "--", script(dir, "pair.sh", body)});
    REQUIRE(r.code == 0);
    const auto j = nlohmann::json::parse(r.out);
    REQUIRE(j["rows"].size() == 2);
    CHECK(j["rows"][0]["status"] == "ok");
    CHECK(j["rows"][1]["status"] == "counters_unavailable");
    CHECK(j["rows"][1]["message"].get<std::string>().find("kernel time only") != std::string::npos);
    CHECK(j["rows"][1]["counters"]["gpu_time_seconds"] == 2e-5);
  }
}

TEST_CASE("cli: profile --gpu projects the program onto other GPUs, group by group") {
  TempDir dir;
  const auto profile = profile_with_stand_in;
  write_text(dir.path / "records", records_of_one_launch());
  const std::string program = script(
      dir, "app.sh",
      "cat " + (dir.path / "records").string() + " > \"$CUFLASH_ROOFLINE_PROFILE_DIR/$$.jsonl\"");
  const std::string json = (dir.path / "out.json").string();

  // Another GPU: the projection in the table's place; the report judged against it.
  const CliResult one = profile({"--gpu", "h100", "--json", json, "--", program});
  REQUIRE(one.code == 0);
  CHECK(one.out.find("H100") != std::string::npos);
  CHECK(one.out.find("×") != std::string::npos);
  CHECK(nlohmann::json::parse(read_text(json))["rows"][0]["spec"] == "h100-sxm5");
  // Several: one column each; the report as measured, on the device's own spec.
  const CliResult two = profile({"--gpu", "h100,b200", "--json", json, "--", program});
  REQUIRE(two.code == 0);
  CHECK(two.out.find("H100") != std::string::npos);
  CHECK(two.out.find("B200") != std::string::npos);
  CHECK(nlohmann::json::parse(read_text(json))["rows"][0]["spec"] == "h200-sxm");
  // The device's own spec: the plain table, no projection.
  const CliResult own = profile({"--gpu", "h200", "--", program});
  REQUIRE(own.code == 0);
  CHECK(own.out == profile({"--", program}).out);
  // Bad names before the program runs: one line, exit 2.
  for (const char* bad : {"h100,", "nosuchgpu"}) {
    const CliResult r = profile({"--gpu", bad, "--", "/bin/false"});
    CHECK(r.code == 2);
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  }
}
