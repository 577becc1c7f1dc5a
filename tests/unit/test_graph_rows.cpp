// The rows of a graph launch from its activity records (graph_rows.hpp), written to a record
// file and read back: a row per node, and the parent's time split into its nodes and the time
// when none of them ran.
#include <doctest/doctest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "lib/inject/graph_catalog.hpp"
#include "lib/inject/graph_rows.hpp"
#include "lib/inject/launch_rows.hpp"
#include "lib/inject/record_file.hpp"
#include "lib/inject/recorder.hpp"

namespace roofline::inject {
namespace {

KernelExecution execution(ExecutionKind kind, std::uint64_t node, double start_us, double end_us) {
  KernelExecution e;
  e.kind = kind;
  e.graph_node = node;
  e.start_ns = static_cast<std::uint64_t>(1e6 + start_us * 1e3);
  e.end_ns = static_cast<std::uint64_t>(1e6 + end_us * 1e3);
  e.name = kind == ExecutionKind::kKernel ? "_Z6kernel" + std::to_string(node) + "v" : "";
  return e;
}

// A directory of its own under the temporary one, removed at the end.
struct TempDir {
  explicit TempDir(const std::string& name)
      : path(std::filesystem::temp_directory_path() / (name + "_" + std::to_string(getpid()))) {
    std::filesystem::create_directories(path);
  }
  ~TempDir() { std::filesystem::remove_all(path); }
  std::filesystem::path path;
};

// Graph rows writing to a record file in `dir` (written out when this ends).
struct GraphRowsWriter {
  explicit GraphRowsWriter(const std::filesystem::path& dir)
      : recorder(std::make_unique<RecordFile>(dir.string(), 1)), rows(recorder, catalog, nullptr) {}
  Recorder recorder;
  GraphCatalog catalog;
  GraphRows rows;
};

// The record lines GraphRows wrote for `activity` (`counted`: nodes replayed alone).
std::vector<nlohmann::json> rows_of(const LaunchActivity& activity,
                                    const std::map<std::uint64_t, NodeCounters>& counted = {}) {
  const TempDir dir("graph_rows");
  {
    GraphRowsWriter writer(dir.path);
    KernelLaunch launch;
    launch.graph = true;
    launch.index = 7;
    writer.rows.record(launch, activity, GraphParent{}, "timed", counted);
  }
  std::vector<nlohmann::json> out;
  std::ifstream in(dir.path / "1.jsonl");
  for (std::string line; std::getline(in, line);) out.push_back(nlohmann::json::parse(line));
  return out;
}

}  // namespace

TEST_CASE("graph rows: the parent's time is its nodes' and the gaps when none ran") {
  LaunchActivity activity;
  // A kernel, a memset after it, a gap of 39 µs, then two kernels that overlap.
  activity.executions = {
      execution(ExecutionKind::kKernel, 1, 0, 10), execution(ExecutionKind::kMemset, 2, 10.5, 11),
      execution(ExecutionKind::kKernel, 3, 50, 60), execution(ExecutionKind::kKernel, 4, 55, 70)};
  const std::vector<nlohmann::json> rows = rows_of(activity);
  REQUIRE(rows.size() == 5);
  const nlohmann::json& parent = rows[0];
  CHECK(parent["launch"]["graph"] == true);
  const nlohmann::json& c = parent["counters"];
  CHECK(c["gpu_time_seconds"].get<double>() == doctest::Approx(70e-6));
  // Kernel nodes' execution summed (the overlap counted twice), the memset apart.
  CHECK(c["kernel_execution_seconds"].get<double>() == doctest::Approx(35e-6));
  CHECK(c["kernel_count"].get<double>() == 3);
  // Idle: 0.5 µs before the memset and 39 µs before the third node; none inside the overlap.
  CHECK(c["graph_idle_seconds"].get<double>() == doctest::Approx(39.5e-6));
  const std::string message = parent["message"];
  CHECK(message.find("no node ran for 39.5 µs of it (the largest gap 39.0 µs, before node 2)") !=
        std::string::npos);
  // Node rows: their own execution time, in start order.
  CHECK(rows[1]["counters"]["gpu_time_seconds"].get<double>() == doctest::Approx(10e-6));
  CHECK(rows[2]["launch"]["node_kind"] == "memset");
  CHECK(rows[4]["counters"]["gpu_time_seconds"].get<double>() == doctest::Approx(15e-6));
  // The two that overlap shared 5 µs each; the first kernel none; the memset has no such time.
  CHECK(rows[1]["counters"]["graph_shared_seconds"].get<double>() == 0.0);
  CHECK_FALSE(rows[2]["counters"].contains("graph_shared_seconds"));
  CHECK(rows[3]["counters"]["graph_shared_seconds"].get<double>() == doctest::Approx(5e-6));
  CHECK(rows[4]["counters"]["graph_shared_seconds"].get<double>() == doctest::Approx(5e-6));
  // Their rows say so; the first kernel's does not.
  CHECK(rows[3]["message"].get<std::string>().find(
            "ran beside other nodes of its launch for 5.0 of its 10.0 µs") != std::string::npos);
  CHECK(rows[1]["message"].get<std::string>().find("beside other nodes") == std::string::npos);
}

TEST_CASE("graph rows: a node's shared time counts each instant once, whoever ran beside it") {
  LaunchActivity activity;
  // Three branches: the first (0-10 µs) beside two that overlap each other (2-6, 4-8); a copy
  // beside the first shares no SMs and does not count.
  activity.executions = {
      execution(ExecutionKind::kKernel, 1, 0, 10), execution(ExecutionKind::kKernel, 2, 2, 6),
      execution(ExecutionKind::kKernel, 3, 4, 8), execution(ExecutionKind::kMemcpy, 4, 8.5, 9.5)};
  const std::vector<nlohmann::json> rows = rows_of(activity);
  REQUIRE(rows.size() == 5);
  CHECK(rows[1]["counters"]["graph_shared_seconds"].get<double>() == doctest::Approx(6e-6));
  CHECK(rows[2]["counters"]["graph_shared_seconds"].get<double>() == doctest::Approx(4e-6));
  CHECK(rows[3]["counters"]["graph_shared_seconds"].get<double>() == doctest::Approx(4e-6));
}

TEST_CASE("graph rows: nodes back to back leave no idle time") {
  LaunchActivity activity;
  activity.executions = {execution(ExecutionKind::kKernel, 1, 0, 10),
                         execution(ExecutionKind::kKernel, 2, 10, 20)};
  const std::vector<nlohmann::json> rows = rows_of(activity);
  REQUIRE(rows.size() == 3);
  CHECK(rows[0]["counters"]["graph_idle_seconds"].get<double>() == 0.0);
  CHECK(rows[0]["message"].get<std::string>().find("no node ran") == std::string::npos);
}

TEST_CASE("graph rows: a counted node keeps the graph's time and its replay's time alone") {
  LaunchActivity activity;
  activity.executions = {execution(ExecutionKind::kKernel, 1, 100, 110),
                         execution(ExecutionKind::kKernel, 2, 110.5, 120.5)};
  // Node 1's replay ran before the launch, 12 µs from its submission; node 2's record lies
  // outside its replay's window (another kernel of that name): no replay time.
  KernelExecution replay = execution(ExecutionKind::kKernel, 0, 10, 21);
  replay.name = activity.executions[0].name;
  replay.submitted_ns = replay.start_ns - 1000;
  KernelExecution stray = execution(ExecutionKind::kKernel, 0, 60, 70);
  stray.name = activity.executions[1].name;
  activity.replays = {replay, stray};
  std::map<std::uint64_t, NodeCounters> counted;
  counted[1].counters = {{"dram_read_bytes", 1e6}, {"gpu_time_seconds", 40e-6}};
  counted[1].window_start = replay.start_ns - 2000;
  counted[1].window_end = replay.end_ns + 2000;
  counted[2].counters = {{"dram_read_bytes", 2e6}};
  counted[2].window_start = static_cast<std::uint64_t>(1e6 + 30e3);
  counted[2].window_end = static_cast<std::uint64_t>(1e6 + 50e3);
  const std::vector<nlohmann::json> rows = rows_of(activity, counted);
  REQUIRE(rows.size() == 3);
  const nlohmann::json& first = rows[1]["counters"];
  CHECK(rows[1]["status"] == "ok");
  CHECK(first["gpu_time_seconds"].get<double>() == doctest::Approx(10e-6));  // as the graph ran
  CHECK(first["replay_time_seconds"].get<double>() == doctest::Approx(12e-6));
  CHECK(first["range_time_seconds"].get<double>() == doctest::Approx(40e-6));
  CHECK_FALSE(rows[2]["counters"].contains("replay_time_seconds"));
}

TEST_CASE("graph rows: a graph launch measured as a whole takes its kernels' span") {
  const TempDir dir("graph_span");
  {
    GraphRowsWriter writer(dir.path);
    const Driver driver{};
    const LaunchRows rows(driver, writer.recorder, CounterSet::kRoofline, "", writer.rows,
                          GraphNodes::kOff);
    // Two branches overlapping for 10 µs: 20 + 20 µs of kernels over 30 µs, after a memset.
    LaunchGpuTime time;
    time.seconds = 40e-6;
    time.seconds_from_submission = 45e-6;
    time.kernels = 2;
    time.first_start_ns = 1'000'000;
    time.last_end_ns = 1'030'000;
    // A memset node 5 µs before the first kernel.
    time.nodes_start_ns = 995'000;
    time.nodes_end_ns = 1'030'000;
    std::map<std::string, double> graph{{quantity::kGpuTime, 50e-6}};
    std::string message;
    rows.apply_gpu_time(graph, time, message, Around::kUserRange, false, true);
    CHECK(graph[quantity::kGpuTime] == doctest::Approx(35e-6));
    CHECK(graph[quantity::kKernelExecution] == doctest::Approx(40e-6));
    CHECK(graph[quantity::kRangeTime] == doctest::Approx(50e-6));
    CHECK(message.empty());
    // A kernel launch keeps its execution (from its submission where asked).
    std::map<std::string, double> kernel{{quantity::kGpuTime, 50e-6}};
    rows.apply_gpu_time(kernel, time, message, Around::kUserRange, true, false);
    CHECK(kernel[quantity::kGpuTime] == doctest::Approx(45e-6));
  }
}

}  // namespace roofline::inject
