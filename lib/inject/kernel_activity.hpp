// The kernel's own time, as the GPU ran it: CUPTI's activity records of kernel execution
// (CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, the source Nsight Systems reads), each with the
// kernel's start and end on the GPU. Module loading, launch latency and the range profiler's
// own work lie outside them, which the range around a launch (gpu__time_duration of a user
// range) does not leave out.
//
// A measured launch names what to look for: the correlation id of its driver call (the id its
// kernels' records carry; a graph launch's kernel nodes carry the id of cuGraphLaunch) and a
// window of CUPTI timestamps in which only its kernels ran (profiled launches are serialised
// and their context synchronised around them). Records are kept for the correlation ids
// expected; kernel-node records of graphs and records of no expected id wait in a bounded
// list for the window match, which serves when a correlation id finds nothing (CUPTI 13.0 gives
// graph launches wrong ids after a first profiling session, by its release notes).
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace roofline::inject {

// What an activity record ran: a kernel, or a memcpy or memset node of a graph.
enum class ExecutionKind { kKernel, kMemcpy, kMemset };

// One execution from an activity record (CUPTI timestamps, nanoseconds).
struct KernelExecution {
  ExecutionKind kind = ExecutionKind::kKernel;
  std::uint64_t start_ns = 0;
  std::uint64_t end_ns = 0;
  std::uint64_t submitted_ns = 0;  // the launch's command buffer handed to the GPU; 0: unknown
  std::uint32_t correlation = 0;
  std::uint64_t graph_node = 0;  // 0 outside graphs
  std::uint32_t graph_id = 0;    // 0 outside graphs
  std::string name;              // mangled, as the driver reports it; "" for memcpy and memset
  // A kernel's launch shape and resources (graph nodes are known by their records alone).
  std::array<int, 3> grid{1, 1, 1};
  std::array<int, 3> block{1, 1, 1};
  int registers_per_thread = 0;
  std::int64_t static_shared_bytes = 0;
  std::int64_t dynamic_shared_bytes = 0;
  std::int64_t bytes = 0;  // a memcpy's or memset's size
  std::string copy_kind;   // a memcpy's direction ("DtoD", "HtoD", ...)
};

// The records of one launch, as KernelActivity::take found them.
struct LaunchActivity {
  std::vector<KernelExecution> executions;
  bool by_window = false;  // matched by the time window, not the correlation id
  // A graph launch's kernel nodes replayed alone before it (--graph-nodes counted,
  // node_replay.hpp): launched inside its callback, they carry its correlation id, and no node id.
  std::vector<KernelExecution> replays;
};

// The GPU time of one launch: the sum of its kernels' durations, each kernel (each node of a
// graph) counted once (kernel replay runs a kernel once per pass: the shortest run counts).
struct LaunchGpuTime {
  double seconds = 0;
  // From the submission of each kernel's launch to the GPU to its end (NaN when unknown): the
  // GPU's launch processing included, as in ncu's gpu__time_duration.
  double seconds_from_submission = 0;
  int kernels = 0;         // kernels (graph nodes) found
  int executions = 0;      // records found (> kernels under kernel replay)
  bool by_window = false;  // matched by the time window, not the correlation id
  // The first kernel's start and the last one's end (CUPTI timestamps, ns).
  std::uint64_t first_start_ns = 0;
  std::uint64_t last_end_ns = 0;
  // The same over every node, memcpy and memset nodes included: a graph launch's span (0 when
  // no record has a duration).
  std::uint64_t nodes_start_ns = 0;
  std::uint64_t nodes_end_ns = 0;
};

// Process-wide: CUPTI delivers activity buffers to one pair of callbacks.
class KernelActivity {
 public:
  // Registers the buffer callbacks and enables kernel records, and memcpy and memset records
  // (kept for graph nodes only). False, with `why`, when CUPTI refuses (the launch rows then
  // keep the range's time and say so).
  static bool enable(std::string* why);
  static KernelActivity& instance();

  // The current CUPTI timestamp (the records' clock).
  static std::uint64_t now_ns();

  // A launch whose records are wanted, by the correlation id of its driver call.
  void expect(std::uint32_t correlation);
  // Delivers every record CUPTI holds (forced: buffers not yet full too). Call after the
  // launches in question have finished on the GPU.
  void flush();
  // The time of a launch after flush(): its records by correlation id, else the records of no
  // expected id that lie inside [window_start, window_end]. Only the launch's own kernels
  // count: for a kernel launch those named `kernel` (its mangled name), for a graph launch
  // (`kernel` empty) its kernel nodes. Records of the same correlation id hold more than those
  // (the L2 flush launched inside the launch's callback, a kernel of CUPTI's own, seen on the
  // H200). A graph launch's memcpy and memset nodes come with its kernel nodes. Consumes them.
  // nullopt when neither finds a kernel.
  std::optional<LaunchActivity> take(std::uint32_t correlation, const std::string& kernel,
                                     std::uint64_t window_start_ns, std::uint64_t window_end_ns);

  // Called from CUPTI's buffer-completed callback.
  void add(const KernelExecution& execution);
  std::uint64_t dropped() const;  // records CUPTI reported dropped
  void add_dropped(std::uint64_t count);

 private:
  mutable std::mutex mutex_;
  std::set<std::uint32_t> expected_;
  std::map<std::uint32_t, std::vector<KernelExecution>> by_correlation_;
  std::deque<KernelExecution> unexpected_;  // bounded: the oldest go first
  std::uint64_t dropped_ = 0;
};

// True when `e` is a kernel of the launch `kernel` names (see KernelActivity::take).
bool belongs_to(const KernelExecution& e, const std::string& kernel);
// The time of `activity` (all of one launch): per kernel node the shortest run, summed (memcpy
// and memset nodes count not).
LaunchGpuTime gpu_time_of(const LaunchActivity& activity);
// Each node of a graph launch once (its shortest run, when kernel replay ran it more than
// once), in the order the nodes started on the GPU.
std::vector<KernelExecution> nodes_in_order(const LaunchActivity& activity);

}  // namespace roofline::inject
