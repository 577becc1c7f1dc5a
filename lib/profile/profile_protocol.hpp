// What `profile` and its injection library (lib/inject) say to each other. The app passes its
// options through environment variables; each profiled process writes one record file of JSON
// lines (process, device, launch, error and end records), appended as it goes, so that a crash
// leaves every launch measured before it. The app reads them back into Report rows.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "lib/core/domain/metric_catalog.hpp"
#include "lib/core/report/report.hpp"

namespace roofline {

// Environment variables (set by the app, read by the injection library).
namespace profile_env {
inline constexpr const char* kOutputDir = "CUFLASH_ROOFLINE_PROFILE_DIR";
inline constexpr const char* kCounterSet = "CUFLASH_ROOFLINE_PROFILE_SET";      // roofline|full
inline constexpr const char* kCache = "CUFLASH_ROOFLINE_PROFILE_CACHE";         // cold|warm
inline constexpr const char* kKernelRegex = "CUFLASH_ROOFLINE_PROFILE_KERNEL";  // ECMAScript
inline constexpr const char* kLaunchSkip = "CUFLASH_ROOFLINE_PROFILE_SKIP";     // integer
inline constexpr const char* kLaunchCount = "CUFLASH_ROOFLINE_PROFILE_COUNT";   // integer, -1 all
inline constexpr const char* kReplay = "CUFLASH_ROOFLINE_PROFILE_REPLAY";       // batch|launch
inline constexpr const char* kGraphNodes = "CUFLASH_ROOFLINE_PROFILE_GRAPH_NODES";  // see below
inline constexpr const char* kStalls = "CUFLASH_ROOFLINE_PROFILE_STALLS";  // 1: sample, 0: count
// integer, -1: no limit
inline constexpr const char* kStallsPerKernel = "CUFLASH_ROOFLINE_PROFILE_STALLS_PER_KERNEL";
}  // namespace profile_env

enum class CacheControl { kCold, kWarm };

// How the counters of one-pass sets are collected. kBatch (the default): one user-replay pass
// spans many launches, a range around each (a graph launch is one range, measured as a whole),
// read when the counter-data image fills, at a hand-over to another process and at exit: on
// the H200 it added 1.1 s to a 217-launch PyTorch program where a pass per launch added 10.7 s,
// with the same agreement with ncu (docs/results/2026-12-01-h200-profile-programs.md). kPerLaunch:
// a pass per launch (auto range, kernel replay; a graph launch is never replayed: it is timed),
// the path multi-pass sets always take.
enum class ReplayMode { kBatch, kPerLaunch };

// What a CUDA graph launch becomes (--graph-nodes).
//   kCounted (the default): a row per node (kernel, memcpy, memset) with its time from the
//     activity records (as the graph ran it), and each kernel node's counters from a replay of
//     the node alone before the launch, the device memory saved and restored around the
//     replays (node_replay.hpp in lib/inject). Needs --replay batch and a one-pass set; a graph
//     that cannot be replayed has its nodes timed, and their rows say why.
//   kTimed: the same rows without the replays: the nodes timed only.
//   kOff: the graph launch is one row, as the others' parent, and its nodes have none.
// In every mode the graph launch's row is the nodes' parent, counted as one range in a batch
// (the whole graph's bytes), else timed.
enum class GraphNodes { kCounted, kTimed, kOff };
std::string_view to_string(GraphNodes mode);
std::optional<GraphNodes> parse_graph_nodes(std::string_view text);

struct ProfileOptions {
  CounterSet counter_set = CounterSet::kRoofline;
  CacheControl cache = CacheControl::kCold;
  std::string kernel_regex;        // empty: every kernel
  std::int64_t launch_skip = 0;    // matching launches skipped first
  std::int64_t launch_count = -1;  // matching launches profiled after those; -1: all
  ReplayMode replay = ReplayMode::kBatch;
  GraphNodes graph_nodes = GraphNodes::kCounted;
  // --stalls: the chosen launches are sampled (CUPTI PC sampling) instead of counted. PC
  // sampling gives no PC records once the range profiler has run in the process, so a process
  // profiled with --stalls never opens the range profiler: its rows are timed by their activity
  // records, as timing-only launches are, and carry their StallSampling; graph launches are
  // sampled whole, their kernel nodes timed (graph_nodes is never kCounted with it).
  bool stalls = false;
  // --stalls-per-kernel: at most this many launches of one kernel (mangled name) or executable
  // graph are sampled (the later ones run unprofiled, without a row); -1: no limit.
  std::int64_t stalls_per_kernel = -1;
};

// name=value pairs for the child's environment.
std::map<std::string, std::string> to_environment(const ProfileOptions& options);
// Reads the options back from the process environment; throws InputError naming the variable.
ProfileOptions options_from_environment();

// Why a process could not be profiled (an "error" record).
enum class ProfileErrorKind {
  kNoDevice,       // no driver / no GPU: exit 3
  kNotPermitted,   // ERR_NVGPUCTRPERM: exit 3
  kOtherProfiler,  // ncu, nsys or another CUPTI client holds the counters: exit 3
  kUnsupported,    // the GPU or configuration has no counter access: rows have timing only
  kInternal,       // anything else: exit 4
};
std::string_view to_string(ProfileErrorKind kind);
std::optional<ProfileErrorKind> parse_profile_error_kind(std::string_view text);

// One launch's warp samples (a "stalls" record, --stalls), written by the injected process at the
// launch's exit; the app fills its PCs' SASS and lines from the cubins the process saved and
// attaches it to the launch's rows (attach_stalls).
struct StallRecord {
  std::int64_t launch_index = 0;  // KernelLaunch::index of the rows it belongs to
  bool sampled = false;           // false: `note` says why CUPTI could not sample the launch
  int period_log2 = 0;
  // The launch time the period was chosen for: the previous launch of the same kernel (or
  // graph), else kStallDefaultSeconds (`expected_default`).
  double expected_seconds = 0;
  bool expected_default = false;
  StallRangeTotals totals;
  std::vector<PcSample> pcs;  // reasons under ncu's names; no SASS or line yet
  std::string note;           // why not sampled, or what is partial

  friend bool operator==(const StallRecord&, const StallRecord&) = default;
};

// The file a saved cubin has in the run's record directory: "cubin-<crc in hex>.cubin".
std::string cubin_file_name(std::uint64_t crc);

// What one process's record file says.
struct ProcessRecords {
  int process_id = 0;
  int parent_id = 0;
  std::string process;  // command name
  std::optional<DeviceInfo> device;
  std::string counter_set;
  std::vector<std::string> metrics;
  int counter_passes = 0;
  std::vector<Row> rows;            // one per profiled launch (no spec key yet)
  std::vector<StallRecord> stalls;  // --stalls: one per sampled launch, in launch order
  struct Error {
    ProfileErrorKind kind;
    std::string message;
  };
  std::vector<Error> errors;
  bool ended = false;         // the "end" record: the process exited through exit()
  std::int64_t launches = 0;  // kernel launches seen (from the end record)
  std::int64_t profiled = 0;  // of them profiled
  // Seconds the injection library spent in each phase (from the end record), e.g. "open",
  // "flush", "kernel", "decode": where profiling's cost goes.
  std::map<std::string, double> phases;
};

// Parses one record file. Malformed lines throw InputError naming file and line; a last line
// cut short (the process died while writing it) is ignored.
ProcessRecords read_process_records(const std::string& text, const std::string& origin);

// One JSON line of each record type (for the injection library; "\n"-terminated).
std::string process_record(int pid, int ppid, const std::string& process);
std::string device_record(const DeviceInfo& device, const std::string& counter_set,
                          const std::vector<std::string>& metrics, int passes);
std::string launch_record(const KernelLaunch& launch, RowStatus status, const std::string& message,
                          const std::map<std::string, double>& counters);
std::string error_record(ProfileErrorKind kind, const std::string& message);
std::string end_record(std::int64_t launches, std::int64_t profiled,
                       const std::map<std::string, double>& phases = {});
std::string stalls_record(const StallRecord& record);

// Gives each row of `rows` (one process's) that a record of `stalls` names (by launch index)
// its StallSampling (stall_sampling_of), each with `notes` added (what the app could not
// resolve):
// - a kernel launch's row: the launch's samples;
// - a graph launch's row (the parent): every sample of the launch; each kernel node row: the
//   samples of its kernel function (the kernel nodes of one function in one launch cannot be
//   told apart: each such row has them all, and says so); memcpy and memset nodes: none;
// - a launch CUPTI could not sample: a StallSampling without samples whose note says why.
void attach_stalls(std::vector<Row>& rows, const std::vector<StallRecord>& stalls,
                   const std::vector<std::string>& notes = {});

// "total 0.520 s: wait 0.000 s, open 0.410 s, flush 0.030 s, ...; 1 counter session(s)
// opened": where the injection library spent its time in one process (ProcessRecords::phases),
// phases in the order of a launch.
std::string describe_phases(const std::map<std::string, double>& phases);

// The attention workload an NVTX range names ("... B1 H8 N4096 d64 causal fwd ..."), searched
// from the innermost range out.
std::optional<Workload> workload_in_range_name(const std::string& nvtx_range);

}  // namespace roofline
