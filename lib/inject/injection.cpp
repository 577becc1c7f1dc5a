// The injection library of `cuflash-roofline profile`. The CUDA driver loads it into the
// program under test (CUDA_INJECTION64_PATH) and calls InitializeInjection during cuInit.
//
// This file is its callback front. It subscribes to CUPTI callbacks: kernel and graph launches
// of the driver API (which the runtime goes through too), NVTX range push/pop, and context
// destruction. A launch chosen by the filters is measured on its own, under a process-wide lock
// held from the launch's entry callback to its exit callback, after the instruction-cache and
// L2 flushes on the launch's stream (--cache cold, cache_flush.hpp), in one of two ways:
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
#include <cuda.h>
#include <cupti.h>
#include <dlfcn.h>
#include <pthread.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <regex>
#include <string>
#include <vector>

#include "lib/gpu/range_profiler.hpp"
#include "lib/inject/batch_recorder.hpp"
#include "lib/inject/counter_handover.hpp"
#include "lib/inject/driver.hpp"
#include "lib/inject/graph_catalog.hpp"
#include "lib/inject/graph_counter.hpp"
#include "lib/inject/graph_rows.hpp"
#include "lib/inject/kernel_activity.hpp"
#include "lib/inject/launch_rows.hpp"
#include "lib/inject/launch_site.hpp"
#include "lib/inject/nvtx_ranges.hpp"
#include "lib/inject/record_file.hpp"
#include "lib/inject/recorder.hpp"
#include "lib/inject/session.hpp"
#include "lib/profile/profile_protocol.hpp"

namespace roofline::inject {
namespace {

std::string process_name() {
  std::ifstream comm("/proc/self/comm");
  std::string name;
  std::getline(comm, name);
  return name;
}

ProfileErrorKind kind_of(gpu::ProfilerErrorKind kind) {
  switch (kind) {
    case gpu::ProfilerErrorKind::kNoDevice:
      return ProfileErrorKind::kNoDevice;
    case gpu::ProfilerErrorKind::kInsufficientPrivileges:
      return ProfileErrorKind::kNotPermitted;
    case gpu::ProfilerErrorKind::kMultipleSubscribers:
      return ProfileErrorKind::kOtherProfiler;
    case gpu::ProfilerErrorKind::kUnsupportedDevice:
      return ProfileErrorKind::kUnsupported;
    default:
      return ProfileErrorKind::kInternal;
  }
}

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
};

// Kernel replay of a CUDA graph launch (auto range) made a PyTorch program's graph replay fail
// with "an illegal instruction was encountered" on the H200 (CUPTI 13.0); graph launches are
// therefore never kernel-replayed: with a set of several passes they are timed only.
constexpr const char* kGraphNotReplayed =
    "a CUDA graph launch is never replayed (kernel replay of graph launches broke programs), "
    "and this counter set needs several passes: kernel time only; the default counter set "
    "counts it";

// The --kernel-regex, compiled once (nullopt: none).
std::optional<std::regex> compile_regex(const std::string& pattern) {
  if (pattern.empty()) return std::nullopt;
  return std::regex(pattern, std::regex::ECMAScript | std::regex::optimize);
}

void on_exit_read_batch();  // the batch reader's exit handler (after the class)

// Per thread: our own driver calls re-enter the callback; the launch measured.
thread_local bool t_inside = false;
thread_local std::optional<Measuring> t_measuring;
thread_local bool t_holds_lock = false;
// The kernel a launch into a capturing stream is capturing (demangled), for the node the
// capture creates inside that launch call; empty outside such a call.
thread_local std::string t_capturing_kernel;

class Injection {
 public:
  Injection(std::unique_ptr<RecordFile> records, ProfileOptions options, const Driver& driver,
            std::string run_dir, std::string no_activity)
      : options_(std::move(options)),
        driver_(driver),
        process_(process_name()),
        regex_(compile_regex(options_.kernel_regex)),
        recorder_(std::move(records)),
        graphs_(recorder_, catalog_, regex_ ? &*regex_ : nullptr),
        rows_(driver, recorder_, options_.counter_set, std::move(no_activity), graphs_,
              options_.graph_nodes),
        batches_(driver, recorder_, rows_, options_.replay, on_exit_read_batch),
        graph_counter_(driver, recorder_, batches_, rows_, catalog_, regex_ ? &*regex_ : nullptr,
                       options_.cache),
        handover_(driver, recorder_, batches_, options_.counter_set, options_.cache,
                  std::move(run_dir), launch_mutex_) {}

  void fail(ProfileErrorKind kind, const std::string& message) {
    recorder_.record(error_record(kind, message));
    // Counters are unusable in this process from here on: launches run unprofiled.
    if (kind != ProfileErrorKind::kInternal) active_.store(false);
  }

  // CUPTI's resource callbacks of graphs: where each node came from (graph_catalog.hpp).
  void on_graph(CUpti_CallbackId id, const CUpti_GraphData& g) {
    std::uint64_t node = 0;
    switch (id) {
      case CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED:
        if (g.node != nullptr && cuptiGetGraphNodeId(g.node, &node) == CUPTI_SUCCESS)
          catalog_.created(node, {NvtxRanges::current_or_only_other(), t_capturing_kernel});
        break;
      case CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED: {
        std::uint64_t original = 0;
        if (g.node != nullptr && g.originalNode != nullptr &&
            cuptiGetGraphNodeId(g.node, &node) == CUPTI_SUCCESS &&
            cuptiGetGraphNodeId(g.originalNode, &original) == CUPTI_SUCCESS)
          catalog_.cloned(node, original, g.nodeType == CU_GRAPH_NODE_TYPE_KERNEL);
        break;
      }
      case CUPTI_CBID_RESOURCE_GRAPHEXEC_CREATE_STARTING:
        catalog_.exec_starting();
        break;
      case CUPTI_CBID_RESOURCE_GRAPHEXEC_CREATED: {
        std::uint32_t exec = 0;
        if (g.graphExec != nullptr && cuptiGetGraphExecId(g.graphExec, &exec) == CUPTI_SUCCESS)
          catalog_.exec_created(exec);
        break;
      }
      default:
        break;
    }
  }

  // Graph instantiations and changes to executable graphs (--graph-nodes counted).
  void on_instantiated(const CUpti_CallbackData* cb) {
    if (active_.load() && rows_.counts_nodes() && launch_result(cb) == CUDA_SUCCESS)
      graph_counter_.instantiated(cb->functionParams);
  }
  void on_exec_changed(const CUpti_CallbackData* cb) {
    graph_counter_.changed(cb->functionParams, cb->functionName);
  }

  void on_context_destroy(CUcontext context) {
    const auto lock = handover_.lock();
    handover_.close(context);
  }

  void on_launch_enter(CUpti_CallbackId id, const CUpti_CallbackData* cb) {
    if (!active_.load()) return;
    const std::optional<LaunchSite> site = launch_site(id, cb->functionParams);
    if (!site) return;
    // A launch into a capturing stream builds a graph; it runs later, as a graph launch. The
    // node it creates learns its kernel here (on_graph, inside this call).
    CUstreamCaptureStatus capture = CU_STREAM_CAPTURE_STATUS_NONE;
    if (site->stream != nullptr &&
        driver_.stream_is_capturing(site->stream, &capture) == CUDA_SUCCESS &&
        capture != CU_STREAM_CAPTURE_STATUS_NONE) {
      if (!site->graph) t_capturing_kernel = demangle(cb->symbolName);
      return;
    }
    // A graph launch: its executable graph's nodes, as its instantiation reported them.
    std::optional<GraphExecNodes> exec;
    std::uint32_t exec_id = 0;
    if (site->graph && site->graph_exec != nullptr &&
        cuptiGetGraphExecId(site->graph_exec, &exec_id) == CUPTI_SUCCESS)
      exec = catalog_.exec_nodes(exec_id);
    launch_mutex_.lock();
    t_holds_lock = true;
    const std::int64_t index = launches_++;
    const std::string demangled = site->graph ? "CUDA graph" : demangle(cb->symbolName);
    if (regex_ && !matches(*site, demangled, exec)) return;
    if (matched_++ < options_.launch_skip) return;
    if (options_.launch_count >= 0 && profiled_ >= options_.launch_count) return;

    Measuring m;
    KernelLaunch& launch = m.launch;
    launch.mangled_name = site->graph ? "" : (cb->symbolName != nullptr ? cb->symbolName : "");
    launch.demangled_name = demangled;
    launch.nvtx_range = NvtxRanges::current();
    launch.grid = site->grid;
    launch.block = site->block;
    launch.dynamic_shared_bytes = site->dynamic_shared;
    launch.index = index;
    launch.process_id = static_cast<int>(getpid());
    launch.process = process_;
    launch.graph = site->graph;
    if (site->function != nullptr) {
      launch.registers_per_thread =
          function_attribute(driver_, site->function, CU_FUNC_ATTRIBUTE_NUM_REGS);
      launch.static_shared_bytes =
          function_attribute(driver_, site->function, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES);
    }
    unsigned long long stream_id = 0;
    if (site->stream != nullptr && driver_.stream_get_id(site->stream, &stream_id) == CUDA_SUCCESS)
      launch.stream_id = static_cast<std::int64_t>(stream_id);
    m.stream = site->stream;
    m.correlation = cb->correlationId;
    rows_.expect_activity(m.correlation);

    try {
      const auto lock = handover_.lock();
      Session& session = handover_.session_for(cb->context);
      m.timing_only = !handover_.take_counters(session, &m.why);
      if (!m.timing_only && site->graph && !batches_.takes(session)) {
        m.timing_only = true;
        m.why = session.counters != nullptr && session.counters->num_passes() == 1
                    ? "a CUDA graph launch is never kernel-replayed (--replay launch): kernel "
                      "time only; --replay batch counts it as one range"
                    : kGraphNotReplayed;
      }
      // A graph's kernel nodes, counted in replays of their own before it runs.
      if (site->graph && !m.timing_only && rows_.counts_nodes()) {
        if (batches_.takes(session))
          graph_counter_.count(session, m.launch, site->stream, exec_id);
        else
          rows_.nodes_not_replayed(m.launch.index,
                                   "nodes are counted alone in a batch (--replay batch, one-pass "
                                   "counter sets)");
      }
      // The module's load (lazy by default) before the flush and the range: not the kernel's.
      if (site->function != nullptr) load_function(driver_, site->function);
      if (options_.cache == CacheControl::kCold && session.flush) {
        const Clock::time_point t = Clock::now();
        session.flush->run(site->stream);
        recorder_.add_phase("flush", seconds_since(t));
      }
      if (!m.timing_only) {
        try {
          if (batches_.takes(session)) {
            m.range = batches_.begin_range(session);
            m.batched = true;
          } else {
            start_pass(session);
          }
        } catch (const gpu::ProfilerError& error) {
          if (error.kind() == gpu::ProfilerErrorKind::kMultipleSubscribers) {
            // A profiler outside the run started collecting after this process opened its
            // counters: this launch gets its time only, a later one tries again.
            m.timing_only = true;
            m.why = std::string(
                        "the GPU's counters are busy with a profiler outside this run: "
                        "kernel time only (CUDA events): ") +
                    error.what();
          } else if (error.kind() == gpu::ProfilerErrorKind::kOther) {
            // This launch alone cannot be measured: its row says why, the run goes on.
            ++profiled_;
            recorder_.record(launch_record(m.launch, RowStatus::kError, error.what(), {}));
            return;
          } else {
            throw;
          }
        }
      }
      if (m.timing_only) {
        if (!session.timer) session.timer = std::make_unique<EventTimer>(driver_);
        session.timer->begin(site->stream);
      }
      m.window_start = KernelActivity::now_ns();
      m.kernel_start = Clock::now();
      t_measuring = std::move(m);
    } catch (const gpu::ProfilerError& error) {
      fail(kind_of(error.kind()), error.what());
    } catch (const std::exception& error) {
      fail(ProfileErrorKind::kInternal, error.what());
    }
  }

  void on_launch_exit(const CUpti_CallbackData* cb) {
    t_capturing_kernel.clear();
    if (t_measuring) {
      Measuring m = std::move(*t_measuring);
      t_measuring.reset();
      recorder_.add_phase("kernel", seconds_since(m.kernel_start));
      ++profiled_;
      if (m.timing_only)
        finish_timing_only(m, cb);
      else if (m.batched)
        finish_batched(m, cb);
      else
        finish(m, cb);
      const bool done = options_.launch_count >= 0 && profiled_ >= options_.launch_count;
      if (done) active_.store(false);
      // Hand the counters over when another process waits for them, or for good when done.
      const auto lock = handover_.lock();
      handover_.hand_over(done);
    }
    if (t_holds_lock) {
      t_holds_lock = false;
      launch_mutex_.unlock();
    }
  }

  // In the child of a fork() without exec: CUDA cannot be used there, and the child must
  // neither write this process's record file nor keep its lock on the counters alive (the
  // lease's descriptors are shared with the parent). Only the forking thread exists here, so
  // no lock is taken: another thread may have held one at the fork.
  void on_fork_child() {
    forked_child_.store(true);
    active_.store(false);
    handover_.close_inherited();
  }

  // At exit, before the CUDA runtime's own handlers (see BatchRecorder::begin_range): the open
  // batch is read, and no launch is profiled after it.
  void on_exit_batch() {
    if (forked_child_.load()) return;
    active_.store(false);
    const auto lock = handover_.lock();
    Session* session = handover_.session();
    if (session == nullptr || session->counters == nullptr || !session->counters->batch_open())
      return;
    if (driver_.ctx_push_current(session->context) == CUDA_SUCCESS) {
      batches_.end(*session);
      CUcontext popped = nullptr;
      driver_.ctx_pop_current(&popped);
    } else {
      batches_.fail(*session,
                    "the process exited with its context gone before the counters of its last "
                    "batch were read");
    }
  }

  void on_exit() {
    if (forked_child_.load()) return;
    handover_.stop();
    recorder_.record(end_record(launches_, profiled_, recorder_.phases()));
    const auto lock = handover_.lock();  // the watcher is not mid-hand-over
  }

 private:
  CUresult launch_result(const CUpti_CallbackData* cb) const {
    return cb->functionReturnValue != nullptr
               ? *static_cast<const CUresult*>(cb->functionReturnValue)
               : CUDA_SUCCESS;
  }

  void finish_timing_only(const Measuring& m, const CUpti_CallbackData* cb) {
    const auto lock = handover_.lock();
    Session* session = handover_.session();
    if (session == nullptr || session->timer == nullptr) return;
    if (const CUresult result = launch_result(cb); result != CUDA_SUCCESS) {
      recorder_.record(launch_record(m.launch, RowStatus::kError,
                                     driver_.describe(cb->functionName, result), {}));
      return;
    }
    const Clock::time_point t = Clock::now();
    double seconds = std::nan("");
    try {
      seconds = session->timer->end(m.stream);
    } catch (const std::exception& error) {
      recorder_.record(launch_record(m.launch, RowStatus::kError, error.what(), {}));
      return;
    }
    recorder_.add_phase("events", seconds_since(t));
    handover_.record_device(*session, 0);
    const std::optional<LaunchActivity> activity =
        rows_.activity_of(m.launch, m.correlation, m.window_start);
    if (m.launch.graph && rows_.graph_nodes()) {
      rows_.record_timed_graph(m.launch, seconds, activity, m.why);
      return;
    }
    // The events bracket the launch on its stream; the activity record holds the kernel alone.
    std::map<std::string, double> counters{{quantity::kGpuTime, seconds}};
    std::string message = m.why;
    KernelLaunch launch = m.launch;
    const std::optional<LaunchGpuTime> time = gpu_time_of(activity);
    if (time && time->kernels > 0) {
      launch.gpu_start_ns = static_cast<std::int64_t>(time->first_start_ns);
      launch.gpu_end_ns = static_cast<std::int64_t>(time->last_end_ns);
    }
    rows_.apply_gpu_time(counters, time, message, Around::kEvents, false);
    recorder_.record(launch_record(launch, RowStatus::kCountersUnavailable, message, counters));
  }

  // The exit of a launch measured by kernel replay: stops its pass and writes its rows.
  void finish(const Measuring& m, const CUpti_CallbackData* cb) {
    const KernelLaunch& launch = m.launch;
    const auto lock = handover_.lock();
    Session* session = handover_.session();
    if (session == nullptr || session->counters == nullptr) return;
    std::vector<gpu::RangeValues> ranges;
    try {
      ranges = rows_.read_counters(*session->counters);
    } catch (const gpu::ProfilerError& error) {
      recorder_.record(launch_record(launch, RowStatus::kError, error.what(), {}));
      return;
    }
    const Clock::time_point t = Clock::now();
    if (const CUresult result = launch_result(cb); result != CUDA_SUCCESS) {
      recorder_.record(
          launch_record(launch, RowStatus::kError, driver_.describe(cb->functionName, result), {}));
      return;
    }
    rows_.record_ranges(*session, launch, ranges,
                        rows_.activity_of(launch, m.correlation, m.window_start),
                        Around::kAutoRange);
    recorder_.add_phase("record", seconds_since(t));
  }

  // The exit of a launch measured in a batch: its range closes, its row waits for the batch.
  void finish_batched(const Measuring& m, const CUpti_CallbackData* cb) {
    const auto lock = handover_.lock();
    Session* session = handover_.session();
    if (session == nullptr || session->counters == nullptr) return;
    BatchedLaunch batched{m.launch,       m.range, launch_result(cb), "", m.correlation,
                          m.window_start, 0};
    if (batched.result != CUDA_SUCCESS)
      batched.error = driver_.describe(cb->functionName, batched.result);
    batches_.end_range(*session, std::move(batched));
  }

  // Starts a pass for this launch alone (auto range, kernel replay); an open batch ends first.
  // Throws gpu::ProfilerError.
  void start_pass(Session& session) {
    batches_.end(session);
    const Clock::time_point t = Clock::now();
    session.counters->start();
    recorder_.add_phase("start", seconds_since(t));
  }

  // True when a launch passes --kernel-regex: a kernel by its name; a graph launch when one of
  // its kernel nodes does, or one of them (or its node list) is not known from its capture (its
  // node rows are filtered by name after it ran, graph_rows.hpp).
  bool matches(const LaunchSite& site, const std::string& demangled,
               const std::optional<GraphExecNodes>& exec) const {
    if (!site.graph) return std::regex_search(demangled, *regex_);
    if (!exec || exec->kernels.empty() || !rows_.graph_nodes()) return true;
    return std::any_of(exec->kernels.begin(), exec->kernels.end(), [this](const std::string& k) {
      return k.empty() || std::regex_search(k, *regex_);
    });
  }

  ProfileOptions options_;
  const Driver& driver_;
  std::string process_;
  std::optional<std::regex> regex_;
  std::atomic<bool> active_{true};
  std::atomic<bool> forked_child_{false};
  // Lock order: launch_mutex_, then the counter hand-over's, then the recorder's phases mutex.
  std::mutex launch_mutex_;    // held from a launch's entry to its exit callback
  std::int64_t launches_ = 0;  // guarded by launch_mutex_
  std::int64_t matched_ = 0;
  std::int64_t profiled_ = 0;
  Recorder recorder_;
  GraphCatalog catalog_;
  GraphRows graphs_;
  LaunchRows rows_;
  BatchRecorder batches_;
  GraphCounter graph_counter_;
  CounterHandover handover_;
};

Injection* g_injection = nullptr;  // never deleted: see the file comment

void CUPTIAPI on_callback(void*, CUpti_CallbackDomain domain, CUpti_CallbackId id,
                          const void* data) {
  if (t_inside || g_injection == nullptr) return;
  t_inside = true;
  try {
    switch (domain) {
      case CUPTI_CB_DOMAIN_NVTX:
        NvtxRanges::on_callback(id, static_cast<const CUpti_NvtxData*>(data));
        break;
      case CUPTI_CB_DOMAIN_RESOURCE: {
        const auto* resource = static_cast<const CUpti_ResourceData*>(data);
        if (id == CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING) {
          g_injection->on_context_destroy(resource->context);
        } else if (resource->resourceDescriptor != nullptr) {
          // Graph callbacks carry their CUpti_GraphData there (as CUPTI's graph samples read it).
          g_injection->on_graph(id,
                                *static_cast<const CUpti_GraphData*>(resource->resourceDescriptor));
        }
        break;
      }
      case CUPTI_CB_DOMAIN_DRIVER_API: {
        const auto* cb = static_cast<const CUpti_CallbackData*>(data);
        if (GraphCounter::instantiates(id)) {
          if (cb->callbackSite == CUPTI_API_EXIT) g_injection->on_instantiated(cb);
        } else if (GraphCounter::changes_exec(id)) {
          if (cb->callbackSite == CUPTI_API_ENTER) g_injection->on_exec_changed(cb);
        } else if (cb->callbackSite == CUPTI_API_ENTER)
          g_injection->on_launch_enter(id, cb);
        else
          g_injection->on_launch_exit(cb);
        break;
      }
      default:
        break;
    }
  } catch (const std::exception& error) {
    g_injection->fail(ProfileErrorKind::kInternal, error.what());
  } catch (...) {
    g_injection->fail(ProfileErrorKind::kInternal, "unknown exception in a CUPTI callback");
  }
  t_inside = false;
}

void on_process_exit() {
  if (g_injection != nullptr) g_injection->on_exit();
}

void on_exit_read_batch() {
  try {
    if (g_injection != nullptr) g_injection->on_exit_batch();
  } catch (...) {
    // Nothing may escape into the program's exit; the batch's rows are then missing, and the
    // command counts the launches against the rows.
  }
}

void on_fork_child() {
  if (g_injection != nullptr) g_injection->on_fork_child();
}

std::string cupti_error(const char* call, CUptiResult result) {
  const char* text = nullptr;
  if (cuptiGetResultString(result, &text) != CUPTI_SUCCESS || text == nullptr) text = "";
  return std::string(call) + " failed: " + text + " (" + std::to_string(int(result)) + ")";
}

// NVTX sends its callbacks to CUPTI only when NVTX_INJECTION64_PATH names libcupti. Set
// before the program's first NVTX call, it takes effect; ranges pushed earlier are not seen.
void route_nvtx_to_cupti() {
  if (std::getenv("NVTX_INJECTION64_PATH") != nullptr) return;
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&cuptiSubscribe), &info) != 0 && info.dli_fname != nullptr)
    setenv("NVTX_INJECTION64_PATH", info.dli_fname, 0);
}

bool start() {
  const char* dir = std::getenv(profile_env::kOutputDir);
  if (dir == nullptr || *dir == '\0') {
    std::fprintf(stderr,
                 "cuflash-roofline injection: %s is not set; this library is loaded by "
                 "`cuflash-roofline profile`, which sets it\n",
                 profile_env::kOutputDir);
    return false;
  }
  std::unique_ptr<RecordFile> records;
  try {
    records = std::make_unique<RecordFile>(dir, static_cast<int>(getpid()));
  } catch (const std::exception& error) {
    std::fprintf(stderr, "cuflash-roofline injection: %s\n", error.what());
    return false;
  }
  records->append(
      process_record(static_cast<int>(getpid()), static_cast<int>(getppid()), process_name()));
  ProfileOptions options;
  try {
    options = options_from_environment();
    compile_regex(options.kernel_regex);  // a malformed pattern fails here, not in a callback
  } catch (const std::exception& error) {
    records->append(error_record(ProfileErrorKind::kInternal, error.what()));
    return false;
  }
  std::string why;
  const Driver* driver = loaded_driver(&why);
  if (driver == nullptr) {
    records->append(error_record(ProfileErrorKind::kNoDevice, why));
    return false;
  }
  route_nvtx_to_cupti();
  CUpti_SubscriberHandle subscriber = nullptr;
  if (CUptiResult r = cuptiSubscribe(&subscriber, on_callback, nullptr); r != CUPTI_SUCCESS) {
    const bool other = r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
    records->append(error_record(
        other ? ProfileErrorKind::kOtherProfiler : ProfileErrorKind::kInternal,
        cupti_error("cuptiSubscribe", r) +
            (other ? ": another profiler (ncu, nsys, a CUPTI tool) is attached" : "")));
    return false;
  }
  std::string no_activity;
  if (!KernelActivity::enable(&no_activity) && no_activity.empty())
    no_activity = "kernel activity records unavailable";
  g_injection = new Injection(std::move(records), options, *driver, dir, no_activity);
  for (CUpti_CallbackId id : launch_callbacks())
    if (CUptiResult r = cuptiEnableCallback(1, subscriber, CUPTI_CB_DOMAIN_DRIVER_API, id);
        r != CUPTI_SUCCESS) {
      g_injection->fail(ProfileErrorKind::kInternal, cupti_error("cuptiEnableCallback", r));
      return false;
    }
  // Graph instantiation and changes to executable graphs: for --graph-nodes counted alone.
  if (options.graph_nodes == GraphNodes::kCounted) {
    for (CUpti_CallbackId id : GraphCounter::callbacks())
      cuptiEnableCallback(1, subscriber, CUPTI_CB_DOMAIN_DRIVER_API, id);
  }
  for (CUpti_CallbackId id :
       {CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING, CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED,
        CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED, CUPTI_CBID_RESOURCE_GRAPHEXEC_CREATE_STARTING,
        CUPTI_CBID_RESOURCE_GRAPHEXEC_CREATED})
    cuptiEnableCallback(1, subscriber, CUPTI_CB_DOMAIN_RESOURCE, id);
  cuptiEnableDomain(1, subscriber, CUPTI_CB_DOMAIN_NVTX);  // without NVTX: no range names
  std::atexit(on_process_exit);
  pthread_atfork(nullptr, nullptr, on_fork_child);
  return true;
}

}  // namespace
}  // namespace roofline::inject

// Called by the CUDA driver (CUDA_INJECTION64_PATH) during cuInit. Returns 1 when profiling
// is set up, 0 when not (the reason is in the record file, or on stderr without one).
extern "C" __attribute__((visibility("default"))) int InitializeInjection() {
  try {
    return roofline::inject::start() ? 1 : 0;
  } catch (...) {
    return 0;
  }
}
