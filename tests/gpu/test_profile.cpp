// `cuflash-roofline profile` on a real GPU: profile_target.cu's kernels, whose work is known,
// measured through the injection library. Skipped (exit code 77) without a CUDA device.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <map>
#include <memory>
#include <set>

#include <cuda_runtime_api.h>
#include <nlohmann/json.hpp>

#include "lib/gpu/range_profiler.hpp"
#include "tests/unit/helpers.hpp"

using namespace roofline;
using nlohmann::json;

namespace {

constexpr double kAxpyN = 1 << 25;
constexpr double kGemmN = 512;

// `profile` in-process: its exit, stderr and (when it wrote one) the report. Asserts nothing, so
// that a caller with file descriptor 1 redirected checks after restoring it (doctest prints a
// failed assertion on standard output the moment it fails).
struct ProfileResult {
  CliResult cli;
  json report;
};

ProfileResult run_profile(const std::vector<std::string>& options,
                          const std::vector<std::string>& program) {
  TempDir dir;
  const std::string out = (dir.path / "profile.json").string();
  std::vector<std::string> args = {"profile", "--injection", ROOFLINE_INJECTION_LIBRARY, "--json",
                                   out};
  args.insert(args.end(), options.begin(), options.end());
  args.push_back("--");
  args.insert(args.end(), program.begin(), program.end());
  ProfileResult result{cli(args), json()};
  if (result.cli.code == 0) result.report = json::parse(read_text(out), nullptr, false);
  return result;
}

void check_profiled(const ProfileResult& result) {
  INFO(result.cli.err);
  REQUIRE(result.cli.code == 0);  // profile_target exits 1 when a result is wrong
  REQUIRE(!result.report.is_discarded());
}

json profile(const std::vector<std::string>& options, const std::vector<std::string>& program) {
  ProfileResult result = run_profile(options, program);
  check_profiled(result);
  return std::move(result.report);
}

std::vector<json> rows_of(const json& report, const std::string& kernel) {
  std::vector<json> out;
  for (const json& row : report["rows"])
    if (row["kernel"].get<std::string>().find(kernel) != std::string::npos) out.push_back(row);
  return out;
}

double counter(const json& row, const char* name) {
  const json& value = row["counters"][name];
  return value.is_number() ? value.get<double>() : -1;
}

// The line of `text` that starts with `prefix` ("" when none).
std::string line_starting(const std::string& text, const std::string& prefix) {
  for (std::size_t at = 0; at < text.size();) {
    const std::size_t end = std::min(text.find('\n', at), text.size());
    if (text.compare(at, prefix.size(), prefix) == 0) return text.substr(at, end - at);
    at = end + 1;
  }
  return "";
}

// What the program prints on its own.
std::string stdout_alone(const std::string& command) {
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(command.c_str(), "r"), pclose);
  REQUIRE(pipe != nullptr);
  std::string out;
  std::array<char, 4096> buffer{};
  while (std::size_t n = std::fread(buffer.data(), 1, buffer.size(), pipe.get()))
    out.append(buffer.data(), n);
  return out;
}

// `profile` in-process with file descriptor 1 (which the program inherits) sent to a file:
// what the program printed under the tool, and the report.
std::pair<std::string, json> profile_stdout(const std::vector<std::string>& options,
                                            const std::vector<std::string>& program) {
  TempDir dir;
  const std::string captured = (dir.path / "stdout.txt").string();
  std::fflush(stdout);
  const int saved = dup(1);
  const int fd = open(captured.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  REQUIRE(saved >= 0);
  REQUIRE(fd >= 0);
  dup2(fd, 1);
  close(fd);
  ProfileResult result{};
  try {
    result = run_profile(options, program);
  } catch (...) {
    std::fflush(stdout);
    dup2(saved, 1);
    close(saved);
    throw;
  }
  std::fflush(stdout);
  dup2(saved, 1);
  close(saved);
  const std::string printed = read_text(captured);
  INFO("the program printed: " << printed);
  check_profiled(result);
  return {printed, std::move(result.report)};
}

}  // namespace

TEST_CASE("profile: every launch of a program, threads, streams, NVTX, a graph, a child") {
  // Both ways of collecting a one-pass set: one pass over many launches (the default), a pass
  // per launch (a graph launch is one range in the first).
  std::string replay;
  SUBCASE("batch") {
    replay = "batch";
  }
  SUBCASE("per launch") {
    replay = "launch";
  }
  CAPTURE(replay);
  const json report = profile({"--replay", replay}, {ROOFLINE_PROFILE_TARGET, "--spawn-child"});
  CHECK(report["context"]["command"] == "profile");
  CHECK(report["context"]["counters"].get<std::string>().find(
            replay == "batch" ? "user-replay pass" : "kernel replay") != std::string::npos);
  const std::vector<json> gemm = rows_of(report, "wmma_gemm");
  REQUIRE(gemm.size() == 1);
  const int parent = gemm[0]["launch"]["process_id"].get<int>();
  std::vector<json> axpy;
  int graphs = 0, nodes = 0, children = 0;
  for (const json& row : report["rows"]) {
    CAPTURE(row.dump());
    if (row["launch"].contains("node_kind")) {
      // The graph's one node, an axpy, in a row of its own, timed by its activity record; in a
      // batch counted by a replay of its own (--graph-nodes counted, the default): the same
      // bytes as the plain axpy.
      ++nodes;
      CHECK(row["launch"]["node_kind"] == "kernel");
      CHECK(row["kernel"].get<std::string>().find("axpy") != std::string::npos);
      if (replay == "batch") {
        CHECK(row["status"] == "ok");
        CHECK(row["message"].get<std::string>().find("replay of its own") != std::string::npos);
        CHECK(counter(row, "l2_bytes") == doctest::Approx(3 * 4 * kAxpyN).epsilon(0.01));
        CHECK(counter(row, "dram_read_bytes") == doctest::Approx(2 * 4 * kAxpyN).epsilon(0.02));
      } else {
        CHECK(row["status"] == "counters_unavailable");
      }
      CHECK(row["launch"]["grid"][0] == (1 << 25) / 256);
      CHECK(row["launch"]["registers_per_thread"].get<int>() > 0);
      CHECK(counter(row, "gpu_time_seconds") > 0);
      continue;
    }
    if (!row["launch"]["graph"].get<bool>()) {
      if (row["kernel"].get<std::string>().find("axpy") != std::string::npos) axpy.push_back(row);
      continue;
    }
    // The graph launch, the parent of its node's row. A batch counts it as one range; a pass
    // per launch would kernel-replay it, which is never done: it has the kernel's time only.
    ++graphs;
    CHECK(row["kernel"] == "CUDA graph");
    CHECK(row["launch"]["graph_nodes"] == 1);
    CHECK(counter(row, "kernel_count") == 1);
    CHECK(counter(row, "gpu_time_seconds") > 0);
    if (replay == "batch") {
      CHECK(row["status"] == "ok");
      CHECK(row["message"].get<std::string>().find("one range") != std::string::npos);
      CHECK(counter(row, "l2_bytes") == doctest::Approx(3 * 4 * kAxpyN).epsilon(0.01));
    } else {
      CHECK(row["status"] == "counters_unavailable");
      CHECK(row["message"].get<std::string>().find("never kernel-replayed") != std::string::npos);
    }
  }
  CHECK(nodes == graphs);
  REQUIRE(axpy.size() == 3);  // two threads, the child
  std::set<std::string> ranges;
  for (const json& row : axpy) {
    CAPTURE(row.dump());
    CHECK(row["status"] == "ok");
    CHECK(row["launch"]["grid"][0] == (1 << 25) / 256);
    CHECK(row["launch"]["block"][0] == 256);
    CHECK(row["launch"]["registers_per_thread"].get<int>() > 0);
    ranges.insert(row["launch"]["nvtx_range"].get<std::string>());
    if (row["launch"]["process_id"].get<int>() != parent) ++children;
    // Cold L2: x and y read from DRAM once, y written; the SMs ask L2 for all three.
    CHECK(counter(row, "l2_bytes") == doctest::Approx(3 * 4 * kAxpyN).epsilon(0.01));
    CHECK(counter(row, "dram_read_bytes") == doctest::Approx(2 * 4 * kAxpyN).epsilon(0.02));
    CHECK(counter(row, "tensor_mma_sync_flops") == 0);
    // The kernel's own time (activity record), inside the range measured around it. Kernel
    // replay leaves no usable record (its passes' records have no duration): the auto range
    // around the kernel alone times it then.
    if (replay == "batch") CHECK(counter(row, "kernel_count") == 1);
    CHECK(counter(row, "gpu_time_seconds") > 0);
    CHECK(counter(row, "gpu_time_seconds") <= counter(row, "range_time_seconds") * 1.05 + 2e-6);
  }
  // The child's axpy is the first launch of its process (its module loaded lazily inside
  // the range), the threads' the first of theirs: the same kernel, the same time.
  std::vector<double> times;
  for (const json& row : axpy) times.push_back(counter(row, "gpu_time_seconds"));
  const auto [fastest, slowest] = std::minmax_element(times.begin(), times.end());
  CHECK(*slowest < 1.5 * *fastest);
  CHECK(graphs >= 1);
  CHECK(children == 1);
  CHECK(ranges == std::set<std::string>{"thread 0", "thread 1", "child axpy"});
  CHECK(gemm[0]["launch"]["nvtx_range"] == "gemm");
  CHECK(counter(gemm[0], "tensor_mma_sync_flops") ==
        doctest::Approx(2 * kGemmN * kGemmN * kGemmN).epsilon(1e-6));
  CHECK(gemm[0]["analysis"]["regime"].get<std::string>().find("bound") != std::string::npos);
}

TEST_CASE("profile: batches of ranges, one after another, each read whole") {
  // 700 launches: batches of 128, 256 and 256 ranges are read when full, the fourth (60) at
  // exit. Every range of every batch has its counters (each launch the same work); a batch
  // larger than a pass holds loses its last ranges (512 lost 256 on the H200).
  const json report = profile({"--replay", "batch"}, {ROOFLINE_PROFILE_TARGET, "--repeat", "700"});
  REQUIRE(report["rows"].size() == 700);
  int right = 0;
  std::string first_wrong;
  for (const json& row : report["rows"]) {
    const bool good =
        row["status"] == "ok" &&
        counter(row, "l2_bytes") == doctest::Approx(3 * 4 * kAxpyN).epsilon(0.01) &&
        counter(row, "dram_read_bytes") == doctest::Approx(2 * 4 * kAxpyN).epsilon(0.02);
    right += good;
    if (!good && first_wrong.empty()) first_wrong = row.dump();
  }
  INFO(first_wrong);
  CHECK(right == 700);
}

TEST_CASE("profile: a batch ends when the launches to profile are done") {
  // The first axpy launch only: its batch is read at the launch count, not at exit.
  const json report =
      profile({"--replay", "batch", "--kernel-regex", "axpy", "--launch-count", "1"},
              {ROOFLINE_PROFILE_TARGET});
  REQUIRE(report["rows"].size() == 1);
  const json& row = report["rows"][0];
  CHECK(row["status"] == "ok");
  CHECK(counter(row, "l2_bytes") == doctest::Approx(3 * 4 * kAxpyN).epsilon(0.01));
  CHECK(counter(row, "dram_read_bytes") == doctest::Approx(2 * 4 * kAxpyN).epsilon(0.02));
}

TEST_CASE("profile: filters, the full counter set and a warm cache") {
  // The second axpy launch only, with CUDA-core FLOPs counted (kernel replay, 3 passes).
  const json report = profile({"--kernel-regex", "axpy", "--launch-skip", "1", "--launch-count",
                               "1", "--counter-set", "full", "--cache", "warm"},
                              {ROOFLINE_PROFILE_TARGET});
  REQUIRE(report["rows"].size() == 1);
  const json& row = report["rows"][0];
  CHECK(row["kernel"].get<std::string>().find("axpy") != std::string::npos);
  CHECK(report["context"]["counter_passes"].get<int>() > 1);
  CHECK(counter(row, "fp32_flops") == doctest::Approx(2 * kAxpyN).epsilon(1e-6));
  CHECK(counter(row, "l2_bytes") == doctest::Approx(3 * 4 * kAxpyN).epsilon(0.01));
}

TEST_CASE("profile: a program whose GPU counters are held elsewhere gets timed rows, exit 0") {
  // This process holds the GPU's counters with a pass started, as a profiler outside the run
  // would while it collects. (An enabled session that has not started a pass did not stop
  // another process from collecting on the H200.)
  gpu::RangeProfiler holder(0, {"gpu__time_duration.sum"}, 1);
  holder.begin_pass();
  const json report = profile({"--kernel-regex", "axpy"}, {ROOFLINE_PROFILE_TARGET});
  // The two threads' launches and the graph launch, whose one node is an axpy: timed, its node
  // timed by its activity record.
  std::vector<json> axpy, graph_nodes;
  for (const json& row : rows_of(report, "axpy"))
    (row["launch"].contains("node_kind") ? graph_nodes : axpy).push_back(row);
  REQUIRE(axpy.size() == 2);
  REQUIRE(graph_nodes.size() == 1);
  CHECK(graph_nodes[0]["status"] == "counters_unavailable");
  CHECK(counter(graph_nodes[0], "gpu_time_seconds") > 0);
  for (const json& row : axpy) {
    CAPTURE(row.dump());
    CHECK(row["status"] == "counters_unavailable");
    CHECK(row["message"].get<std::string>().find("held outside this run") != std::string::npos);
    CHECK(counter(row, "gpu_time_seconds") > 0);   // from CUDA events
    CHECK(counter(row, "dram_read_bytes") == -1);  // no counters
  }
}

TEST_CASE("profile: a program that replays a CUDA graph prints the same output in every mode") {
  // Kernel replay of a graph launch broke a PyTorch program's replay; whatever the set, the
  // replay mode and --graph-nodes, the program must compute exactly what it computes alone.
  const std::string prefix = "profile_target graph-replay: checksum";
  const std::string alone =
      line_starting(stdout_alone(std::string(ROOFLINE_PROFILE_TARGET) + " --graph-replay"), prefix);
  REQUIRE(!alone.empty());
  for (const char* set : {"roofline", "full"})
    for (const char* replay : {"batch", "launch"})
      for (const char* nodes : {"counted", "timed", "off"}) {
        CAPTURE(set);
        CAPTURE(replay);
        CAPTURE(nodes);
        const auto [out, report] =
            profile_stdout({"--counter-set", set, "--replay", replay, "--graph-nodes", nodes},
                           {ROOFLINE_PROFILE_TARGET, "--graph-replay"});
        CHECK(line_starting(out, prefix) == alone);
        // The copy of the memory kept for the node replays (1 GiB and more here) is freed when
        // the program asks how much is free.
        const std::string free_line =
            line_starting(out, "profile_target graph-replay: free memory:");
        REQUIRE_FALSE(free_line.empty());
        CHECK(std::stod(free_line.substr(free_line.rfind(':') + 1)) > -256);
        const bool one_pass = std::string(set) == "roofline";
        const bool node_rows = std::string(nodes) != "off";
        int graph_rows = 0, node_count = 0;
        for (const json& row : report["rows"]) {
          CAPTURE(row.dump());
          if (row["launch"].contains("node_kind")) {
            ++node_count;
            CHECK(counter(row, "gpu_time_seconds") > 0);
            // Counted by a replay of its own (device memory restored: the checksum above is
            // the proof), else timed by its activity record.
            const bool counted =
                std::string(nodes) == "counted" && one_pass && std::string(replay) == "batch";
            CHECK(row["status"] == (counted ? "ok" : "counters_unavailable"));
            if (counted) CHECK(counter(row, "l2_bytes") > 0);
            if (counted && row["kernel"].get<std::string>().find("wmma_gemm") != std::string::npos)
              CHECK(counter(row, "tensor_mma_sync_flops") ==
                    doctest::Approx(2.0 * kGemmN * kGemmN * kGemmN).epsilon(1e-9));
            continue;
          }
          if (!row["launch"]["graph"].get<bool>()) continue;
          ++graph_rows;
          CHECK(counter(row, "kernel_count") == 4);
          CHECK(counter(row, "gpu_time_seconds") > 0);
          // A serial graph's time is its nodes' span, in every mode: no less than its kernels.
          CHECK(counter(row, "gpu_time_seconds") >=
                counter(row, "kernel_execution_seconds") * (1 - 1e-9));
          CHECK(row["launch"].value("graph_nodes", 0) == (node_rows ? 4 : 0));
          // The whole graph is one range of a batch, with a one-pass set.
          const bool whole = one_pass && std::string(replay) == "batch";
          CHECK(row["status"] == (whole ? "ok" : "counters_unavailable"));
        }
        CHECK(graph_rows == 5);
        CHECK(node_count == (node_rows ? 20 : 0));
      }
}

TEST_CASE("profile: a graph with parallel branches on two streams, node by node") {
  const std::string prefix = "profile_target graph-branches: checksum";
  const std::string alone = line_starting(
      stdout_alone(std::string(ROOFLINE_PROFILE_TARGET) + " --graph-branches"), prefix);
  REQUIRE(!alone.empty());
  for (const char* replay : {"batch", "launch"}) {
    CAPTURE(replay);
    const auto [out, report] =
        profile_stdout({"--replay", replay}, {ROOFLINE_PROFILE_TARGET, "--graph-branches"});
    CHECK(line_starting(out, prefix) == alone);
    std::map<std::int64_t, json> parents;
    std::map<std::int64_t, std::vector<json>> children;
    for (const json& row : report["rows"]) {
      const std::int64_t index = row["launch"]["index"].get<std::int64_t>();
      if (row["launch"]["graph"].get<bool>())
        parents[index] = row;
      else if (row["launch"].contains("node_kind"))
        children[index].push_back(row);
    }
    REQUIRE(parents.size() == 3);
    for (const auto& [index, parent] : parents) {
      CAPTURE(parent.dump());
      const std::vector<json>& rows = children[index];
      // Five kernel nodes, the memset and the memcpy.
      REQUIRE(rows.size() == 7);
      CHECK(parent["launch"]["graph_nodes"] == 7);
      CHECK(counter(parent, "kernel_count") == 5);
      std::map<std::string, int> kinds, names;
      double kernel_seconds = 0;
      for (const json& row : rows) {
        CAPTURE(row.dump());
        ++kinds[row["launch"]["node_kind"].get<std::string>()];
        std::string name = row["kernel"].get<std::string>();
        if (name.rfind("(anonymous namespace)::", 0) == 0) name.erase(0, 23);
        ++names[name];
        const double t = counter(row, "gpu_time_seconds");
        CHECK(t > 0);
        CHECK(t <= counter(parent, "gpu_time_seconds") * 1.001);
        if (row["launch"]["node_kind"] == "kernel") {
          kernel_seconds += t;
          CHECK(row["launch"]["grid"][0] == (1 << 24) / 256);
          // In a batch each kernel node is counted by a replay of its own, after a cold flush:
          // an axpy reads x and y and writes y, a scale reads and writes its vector.
          if (std::string(replay) == "batch") {
            CHECK(row["status"] == "ok");
            const double arrays = name == "axpy" ? 3 : 2;
            CHECK(counter(row, "l2_bytes") ==
                  doctest::Approx(arrays * 4 * (1 << 24)).epsilon(0.01));
            CHECK(counter(row, "dram_read_bytes") ==
                  doctest::Approx((arrays - 1) * 4 * (1 << 24)).epsilon(0.02));
          } else {
            CHECK(row["status"] == "counters_unavailable");  // timed by its activity record
          }
        } else {
          CHECK(row["status"] == "counters_unavailable");  // timed by its activity record
          CHECK(row["launch"]["node_bytes"] == 4 * (1 << 24));
        }
        const std::string range = row["launch"]["nvtx_range"].get<std::string>();
        if (name == "scale") CHECK((range == "branch a" || range == "branch b"));
      }
      CHECK(kinds == std::map<std::string, int>{{"kernel", 5}, {"memcpy", 1}, {"memset", 1}});
      CHECK(names["axpy"] == 3);
      CHECK(names["scale"] == 2);
      CHECK(names["memcpy DtoD"] == 1);
      // The launch lasts from its first node's start to its last one's end: no longer than its
      // nodes end to end with the memset and memcpy, and the branches may overlap.
      CHECK(counter(parent, "kernel_execution_seconds") == doctest::Approx(kernel_seconds));
      CHECK(counter(parent, "gpu_time_seconds") <= kernel_seconds * 1.5);
      CHECK(counter(parent, "gpu_time_seconds") >= kernel_seconds / 2);
      if (std::string(replay) == "batch") {
        // The whole graph as one range: every array the kernels touch, at least once.
        CHECK(parent["status"] == "ok");
        CHECK(counter(parent, "l2_bytes") >= 4 * 4.0 * (1 << 24));
      }
    }
  }
}

TEST_CASE("profile --stalls: every launch sampled, the program's output unchanged") {
  // The main program (threads, streams, NVTX, a graph, a child) and a graph replayed with
  // changing inputs: each launch's warps sampled instead of counted; the program computes and
  // prints what it does alone, and exits 0 (profile() requires it).
  const std::string prefix = "profile_target graph-replay: checksum";
  const std::string alone =
      line_starting(stdout_alone(std::string(ROOFLINE_PROFILE_TARGET) + " --graph-replay"), prefix);
  REQUIRE_FALSE(alone.empty());
  const auto [printed, replayed] =
      profile_stdout({"--stalls"}, {ROOFLINE_PROFILE_TARGET, "--graph-replay"});
  CHECK(line_starting(printed, prefix) == alone);
  for (const json& row : replayed["rows"])
    if (row["launch"].value("node_kind", "kernel") == "kernel") {
      CAPTURE(row.dump());
      REQUIRE(row.contains("stalls"));
    }

  const auto [output, report] =
      profile_stdout({"--stalls"}, {ROOFLINE_PROFILE_TARGET, "--spawn-child"});
  CHECK(output.find("profile_target: ok") != std::string::npos);
  CHECK(report["context"]["counters"].get<std::string>().find("--stalls") != std::string::npos);
  std::set<int> processes;
  for (const json& row : report["rows"]) {
    CAPTURE(row.dump());
    if (row["launch"].value("node_kind", "kernel") != "kernel") continue;
    processes.insert(row["launch"]["process_id"].get<int>());
    REQUIRE(row.contains("stalls"));
    const json& stalls = row["stalls"];
    CHECK(row["status"] == "counters_unavailable");  // timed, not counted
    CHECK(row["message"].get<std::string>().find("--stalls") != std::string::npos);
    REQUIRE(stalls["samples"].get<double>() > 0);
    double shares = 0;
    for (const auto& [reason, samples] : stalls["reasons"].items())
      shares += samples.get<double>() / stalls["samples"].get<double>();
    CHECK(shares == doctest::Approx(1.0).epsilon(1e-9));  // the reasons: 100%
    REQUIRE_FALSE(stalls["hottest"].empty());
    CHECK_FALSE(stalls["hottest"][0]["sass"].get<std::string>().empty());
    // profile_target is built with line information: its lines are named, some in its own
    // source (the WMMA GEMM's hottest are in CUDA's mma.hpp, inlined into it).
    REQUIRE_FALSE(stalls["lines"].empty());
    bool own = false;
    for (const json& line : stalls["lines"])
      own = own || line["file"].get<std::string>().find("profile_target.cu") != std::string::npos;
    CHECK(own);
  }
  CHECK(processes.size() == 2);  // the child's launch sampled too
  const std::vector<json> gemm = rows_of(report, "wmma_gemm");
  REQUIRE(gemm.size() == 1);
  CHECK(gemm[0]["stalls"]["samples"].get<double>() >= 1000);
}

int main(int argc, char** argv) {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::printf("SKIP: no CUDA device\n");
    return 77;
  }
  doctest::Context context(argc, argv);
  return context.run();
}
