// The injection library of `cuflash-roofline profile`. The CUDA driver loads it into the
// program under test (CUDA_INJECTION64_PATH) and calls InitializeInjection during cuInit.
//
// Injection is its callback front (entry.cpp subscribes it to CUPTI's callbacks): kernel and
// graph launches of the driver API (which the runtime goes through too), NVTX range push/pop,
// graph resources and context destruction. A launch chosen by the filters is measured on its
// own, under a process-wide lock held from the launch's entry callback to its exit callback,
// after the instruction-cache and L2 flushes on the launch's stream (--cache cold,
// cache_flush.hpp), in one of two ways:
//   - batch (--replay batch, the default, with one-pass counter sets): a user range in a
//     user-replay pass that stays open across launches (batch_recorder.hpp).
//   - per launch (--replay launch, and multi-pass sets): the range profiler in auto range +
//     kernel replay mode is started before the launch, which runs serialised (replayed by
//     CUPTI when the set needs several passes), and the exit callback stops, decodes and
//     evaluates it and appends the launch's record.
// Launches not chosen run as usual, but also take the lock while any launch is left to
// profile, so that no other thread's kernel falls into a measured range. The counters are
// taken and handed over between the run's processes by counter_handover.hpp; a launch's time
// comes from its kernels' activity records (launch_rows.hpp).
//
// With --stalls the chosen launches are sampled instead (CUPTI PC sampling, kernel-serialized,
// a start/stop range around each launch: start at the entry callback, after the flushes, and
// stop at the exit callback) and never counted: PC sampling gives no PC records once the range
// profiler has run in the process (NOTES.md). Their rows are timed as timing-only launches are
// (activity records), and a "stalls" record carries each launch's PCs. The period follows the
// rule of `run --stalls` (stall_period_log2) for the previous launch time of the same kernel (or
// executable graph), else for kStallDefaultSeconds. The cubins of sampled PCs are saved once each
// into the run's directory (cubin_file_name), from the module-load callback's copies, so that
// the app names instructions and lines after the program exited: no nvdisasm and no line
// lookup in the program. A graph launch is sampled whole; the app gives each kernel node row the
// samples of its function (attach_stalls). Sampling is disabled when the last launch to profile
// is done, so that the program's kernels run concurrently again.
//
// A CUDA graph launch gets a row per node (graph_rows.hpp) unless --graph-nodes is off: the
// launch is one range of a batch (or timed with events), its nodes timed by their activity
// records. With --graph-nodes counted, its nodes are first replayed alone, each kernel a range
// of the batch, between a save and a restore of the device memory (graph_counter.hpp). The launch
// is never kernel-replayed: that made a PyTorch program's graph replay fail ("an illegal
// instruction was encountered") on the H200. The resource callbacks of graph nodes carry each
// node's NVTX ranges from its capture to its replays (graph_catalog.hpp).
//
// Every failure is a record (profile_protocol.hpp), never an exception across the driver: the
// program then goes on unprofiled. The end record carries the seconds spent in each phase
// (recorder.hpp), which `profile -v` prints. The state lives until the process ends: CUDA
// tears down its contexts before static destructors would run, so nothing here is freed at
// exit; a session still open then ends with the process, which releases the counters and the
// lease.
#pragma once

#include <cuda.h>
#include <cupti.h>

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <regex>
#include <set>
#include <string>

#include "lib/gpu/cupti/cubin_catalog.hpp"
#include "lib/inject/batch_recorder.hpp"
#include "lib/inject/counter_handover.hpp"
#include "lib/inject/driver.hpp"
#include "lib/inject/graph_catalog.hpp"
#include "lib/inject/graph_counter.hpp"
#include "lib/inject/graph_rows.hpp"
#include "lib/inject/host_gated.hpp"
#include "lib/inject/launch_lock.hpp"
#include "lib/inject/launch_rows.hpp"
#include "lib/inject/launch_site.hpp"
#include "lib/inject/record_file.hpp"
#include "lib/inject/recorder.hpp"
#include "lib/inject/session.hpp"
#include "lib/profile/profile_protocol.hpp"

namespace roofline::inject {

// One profiled launch, from its entry callback to its exit callback.
struct Measuring {
  KernelLaunch launch;
  CUstream stream = nullptr;
  bool batched = false;  // a range in the session's open batch, named `range`
  std::string range;
  bool timing_only = false;  // no counters for this launch: `why` says why
  std::string why;
  Clock::time_point kernel_start;
  std::uint32_t correlation = 0;   // of its driver call: its kernels' activity records
  std::uint64_t window_start = 0;  // CUPTI timestamp just before the launch
  // --stalls: the launch's sampling (`sampled`: a range was started), and what its row's time
  // is remembered by for the next launch's period (`time_key`).
  bool stalls = false;
  bool sampled = false;
  StallRecord stall;
  std::string time_key;
};

// The profiled process's name (/proc/self/comm).
std::string process_name();
// The --kernel-regex, compiled once (nullopt: none); throws std::regex_error.
std::optional<std::regex> compile_regex(const std::string& pattern);

class Injection {
 public:
  // `read_batch_at_exit`: the exit handler that reads the batch open at exit (entry.cpp).
  Injection(std::unique_ptr<RecordFile> records, ProfileOptions options, const Driver& driver,
            std::string run_dir, std::string no_activity, void (*read_batch_at_exit)());

  void fail(ProfileErrorKind kind, const std::string& message);

  // CUPTI's resource callbacks of graphs: where each node came from (graph_catalog.hpp).
  void on_graph(CUpti_CallbackId id, const CUpti_GraphData& g);

  // Graph instantiations and changes to executable graphs (--graph-nodes counted).
  void on_instantiated(const CUpti_CallbackData* cb);
  void on_exec_changed(const CUpti_CallbackData* cb);

  void on_context_destroy(CUcontext context);

  // At the entry of the program's allocations and cuMemGetInfo (GraphCounter::memory_callbacks):
  // the kept copy of the context's memory is freed first.
  void on_memory_call(const CUpti_CallbackData* cb);

  // The module-load callback (--stalls): the module's cubin, kept for the sampled PCs.
  void on_module_loaded(const char* cubin, std::size_t size);

  void on_launch_enter(CUpti_CallbackId id, const CUpti_CallbackData* cb);

  void on_launch_exit(const CUpti_CallbackData* cb);

  // In the child of a fork() without exec: CUDA cannot be used there, and the child must
  // neither write this process's record file nor keep its lock on the counters alive (the
  // lease's descriptors are shared with the parent). Only the forking thread exists here, so
  // no lock is taken: another thread may have held one at the fork.
  void on_fork_child();

  // At exit, before the CUDA runtime's own handlers (see BatchRecorder::begin_range): the open
  // batch is read, and no launch is profiled after it.
  void on_exit_batch();

  void on_exit();

 private:
  CUresult launch_result(const CUpti_CallbackData* cb) const;

  // Writes the row of a launch timed without counters; returns its time (NaN when none).
  double finish_timing_only(const Measuring& m, const CUpti_CallbackData* cb);

  // --stalls: starts the launch's sampling range in `session` (or says in m.stall why not).
  void start_sampling(Session& session, Measuring& m);
  // --stalls: stops it, saves the cubins its PCs name and writes its stalls record.
  void finish_sampling(Measuring& m);
  void save_cubins(StallRecord& record);

  // The exit of a launch measured by kernel replay: stops its pass and writes its rows.
  void finish(const Measuring& m, const CUpti_CallbackData* cb);

  // The exit of a launch measured in a batch: its range closes, its row waits for the batch.
  void finish_batched(const Measuring& m, const CUpti_CallbackData* cb);

  // Starts a pass for this launch alone (auto range, kernel replay); an open batch ends first.
  // Throws gpu::ProfilerError.
  void start_pass(Session& session);

  // True when a launch passes --kernel-regex: a kernel by its name; a graph launch when one of
  // its kernel nodes does, or one of them (or its node list) is not known from its capture (its
  // node rows are filtered by name after it ran, graph_rows.hpp).
  bool matches(const LaunchSite& site, const std::string& demangled,
               const std::optional<GraphExecNodes>& exec) const;

  ProfileOptions options_;
  const Driver& driver_;
  std::string process_;
  std::optional<std::regex> regex_;
  std::atomic<bool> active_{true};
  std::atomic<bool> forked_child_{false};
  // Lock order: the launch lock, then state_mutex_, then the counter hand-over's, then the
  // recorder's phases mutex. The launch lock (launch_lock.hpp) is shared by launches left
  // unmeasured, several threads' at once; state_mutex_ guards what they change: the counts
  // below (profiled_ changes only under the exclusive lock), sampled_per_kernel_ and gates_.
  LaunchLock launch_lock_;
  std::mutex state_mutex_;
  std::int64_t launches_ = 0;
  std::int64_t matched_ = 0;
  std::int64_t profiled_ = 0;
  Recorder recorder_;
  GraphCatalog catalog_;
  GraphRows graphs_;
  LaunchRows rows_;
  BatchRecorder batches_;
  GraphCounter graph_counter_;
  CounterHandover handover_;
  std::string run_dir_;
  // --stalls: the modules' cubins (from the module-load callback), those saved into run_dir_,
  // and the last time of each kernel (mangled name) or executable graph, for the next period
  // (changed only under the exclusive launch lock, as are the saved ones).
  gpu::cupti::CubinCatalog cubins_{gpu::cupti::CubinCatalog::NoSubscription{}};
  std::set<std::uint64_t> saved_cubins_;
  std::map<std::string, double> last_seconds_;
  std::map<std::string, std::int64_t> sampled_per_kernel_;  // --stalls-per-kernel's counts
  HostGates gates_{driver_};
};

}  // namespace roofline::inject
