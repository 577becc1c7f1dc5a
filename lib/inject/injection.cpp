#include "lib/inject/injection.hpp"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <mutex>
#include <utility>

#include "lib/core/base/text.hpp"
#include "lib/gpu/range_profiler.hpp"
#include "lib/inject/host_gated.hpp"
#include "lib/inject/kernel_activity.hpp"
#include "lib/inject/nvtx_ranges.hpp"

namespace roofline::inject {
namespace {

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

// Kernel replay of a CUDA graph launch (auto range) made a PyTorch program's graph replay fail
// with "an illegal instruction was encountered" on the H200 (CUPTI 13.0); graph launches are
// therefore never kernel-replayed: with a set of several passes they are timed only.
constexpr const char* kGraphNotReplayed =
    "a CUDA graph launch is never replayed (kernel replay of graph launches broke programs), "
    "and this counter set needs several passes: kernel time only; the default counter set "
    "counts it";

// The row message of a launch sampled for its warp stalls (--stalls).
constexpr const char* kSampledNotCounted =
    "sampled for warp stalls (--stalls): kernel time only; PC sampling cannot run beside the "
    "range profiler, so this run counts nothing (profile without --stalls counts)";

// --stalls never replays graph nodes: the replays are counted by the range profiler.
ProfileOptions for_injection(ProfileOptions options) {
  if (options.stalls && options.graph_nodes == GraphNodes::kCounted)
    options.graph_nodes = GraphNodes::kTimed;
  return options;
}

// Per thread: the launch measured.
thread_local std::optional<Measuring> t_measuring;
// Per thread: how this launch holds the launch lock, from its entry to its exit callback.
thread_local LaunchLock::Held t_lock = LaunchLock::Held::kNone;
// The kernel a launch into a capturing stream is capturing (demangled), for the node the
// capture creates inside that launch call; empty outside such a call.
thread_local std::string t_capturing_kernel;
// The stream of a host-gated kernel being launched (host_gated.hpp), for the event its exit
// records behind it.
thread_local std::optional<CUstream> t_gating;

}  // namespace

std::string process_name() {
  std::ifstream comm("/proc/self/comm");
  std::string name;
  std::getline(comm, name);
  return name;
}

std::optional<std::regex> compile_regex(const std::string& pattern) {
  if (pattern.empty()) return std::nullopt;
  return std::regex(pattern, std::regex::ECMAScript | std::regex::optimize);
}

Injection::Injection(std::unique_ptr<RecordFile> records, ProfileOptions options,
                     const Driver& driver, std::string run_dir, std::string no_activity,
                     void (*read_batch_at_exit)())
    : options_(for_injection(std::move(options))),
      driver_(driver),
      process_(process_name()),
      regex_(compile_regex(options_.kernel_regex)),
      recorder_(std::move(records)),
      graphs_(recorder_, catalog_, regex_ ? &*regex_ : nullptr),
      rows_(driver, recorder_, options_.counter_set, std::move(no_activity), graphs_,
            options_.graph_nodes),
      batches_(driver, recorder_, rows_, options_.replay, read_batch_at_exit),
      graph_counter_(driver, recorder_, batches_, rows_, catalog_, regex_ ? &*regex_ : nullptr,
                     options_.cache),
      handover_(driver, recorder_, batches_, options_.counter_set, options_.cache, run_dir,
                launch_lock_.mutex()),
      run_dir_(std::move(run_dir)) {}

void Injection::fail(ProfileErrorKind kind, const std::string& message) {
  recorder_.record(error_record(kind, message));
  // Counters are unusable in this process from here on: launches run unprofiled.
  if (kind != ProfileErrorKind::kInternal) active_.store(false);
}

void Injection::on_graph(CUpti_CallbackId id, const CUpti_GraphData& g) {
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

void Injection::on_instantiated(const CUpti_CallbackData* cb) {
  if (active_.load() && rows_.counts_nodes() && launch_result(cb) == CUDA_SUCCESS)
    graph_counter_.instantiated(cb->functionParams);
}

void Injection::on_exec_changed(const CUpti_CallbackData* cb) {
  graph_counter_.changed(cb->functionParams, cb->functionName);
}

void Injection::on_context_destroy(CUcontext context) {
  graph_counter_.release(context);
  const auto lock = handover_.lock();
  handover_.close(context);
}

void Injection::on_memory_call(const CUpti_CallbackData* cb) {
  if (forked_child_.load()) return;
  graph_counter_.release(cb->context);
}

void Injection::on_module_loaded(const char* cubin, std::size_t size) {
  if (!options_.stalls || forked_child_.load()) return;
  const Clock::time_point t = Clock::now();
  cubins_.add(cubin, size);
  recorder_.add_phase("cubins", seconds_since(t));
}

void Injection::on_launch_enter(CUpti_CallbackId id, const CUpti_CallbackData* cb) {
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
  // Shared while deciding and for a launch left unmeasured; exclusive for one measured (below).
  t_lock = launch_lock_.enter();
  std::unique_lock<std::mutex> state(state_mutex_);
  const std::int64_t index = launches_++;
  const std::string demangled = site->graph ? "CUDA graph" : demangle(cb->symbolName);
  if (regex_ && !matches(*site, demangled, exec)) return;
  if (matched_++ < options_.launch_skip) return;
  if (options_.launch_count >= 0 && profiled_ >= options_.launch_count) return;
  // --stalls-per-kernel: a kernel (or executable graph) sampled that often runs unprofiled.
  const std::string time_key = site->graph ? "graph " + std::to_string(exec_id)
                                           : std::string(cb->symbolName ? cb->symbolName : "");
  if (options_.stalls && options_.stalls_per_kernel >= 0 &&
      sampled_per_kernel_[time_key]++ >= options_.stalls_per_kernel)
    return;

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
  if (const std::string_view why = host_gated_reason(demangled); !site->graph && !why.empty()) {
    // Neither counted nor timed: nothing waits for it (host_gated.hpp), nor for what the
    // program launches before it has run.
    recorder_.record(
        launch_record(m.launch, RowStatus::kCountersUnavailable, std::string(why), {}));
    t_gating = site->stream;
    return;
  }
  if (gates_.any_closed()) {
    recorder_.record(launch_record(m.launch, RowStatus::kCountersUnavailable,
                                   std::string(kBehindHostGated), {}));
    return;
  }
  // Measured: alone (launch_lock.hpp). A gate closed, or the launch count reached, while it
  // waited leaves it unmeasured after all.
  state.unlock();
  t_lock = launch_lock_.measure(t_lock);
  const bool gated = gates_.any_closed();
  if (gated || (options_.launch_count >= 0 && profiled_ >= options_.launch_count)) {
    if (gated)
      recorder_.record(launch_record(m.launch, RowStatus::kCountersUnavailable,
                                     std::string(kBehindHostGated), {}));
    t_lock = launch_lock_.unmeasured(t_lock);
    return;
  }
  rows_.expect_activity(m.correlation);

  try {
    const auto lock = handover_.lock();
    Session& session = handover_.session_for(cb->context);
    if (options_.stalls) {
      m.timing_only = true;
      m.why = kSampledNotCounted;
      m.time_key = time_key;
    } else {
      m.timing_only = !handover_.take_counters(session, &m.why);
    }
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
    if (options_.stalls) start_sampling(session, m);
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

void Injection::on_launch_exit(const CUpti_CallbackData* cb) {
  t_capturing_kernel.clear();
  if (t_gating) {
    // The launch lock, shared since its entry, keeps every launch from being measured before
    // the event is recorded. Where none can be recorded, the launches behind it are measured as
    // before (and may wait for it).
    if (launch_result(cb) == CUDA_SUCCESS) {
      const std::lock_guard<std::mutex> state(state_mutex_);
      gates_.close_behind(*t_gating);
    }
    t_gating.reset();
  }
  if (t_measuring) {
    Measuring m = std::move(*t_measuring);
    t_measuring.reset();
    recorder_.add_phase("kernel", seconds_since(m.kernel_start));
    ++profiled_;
    if (m.stalls) finish_sampling(m);
    if (m.timing_only) {
      const double seconds = finish_timing_only(m, cb);
      if (m.stalls && seconds > 0) last_seconds_[m.time_key] = seconds;
    } else if (m.batched)
      finish_batched(m, cb);
    else
      finish(m, cb);
    const bool done = options_.launch_count >= 0 && profiled_ >= options_.launch_count;
    if (done) active_.store(false);
    // Hand the counters over when another process waits for them, or for good when done.
    const auto lock = handover_.lock();
    // (The last launch sampled: handing over for good disables the sampling with the lease, and
    // the program's kernels run concurrently again.)
    handover_.hand_over(done);
  }
  t_lock = launch_lock_.exit(t_lock);
}

void Injection::on_fork_child() {
  forked_child_.store(true);
  active_.store(false);
  handover_.close_inherited();
}

void Injection::on_exit_batch() {
  if (forked_child_.load()) return;
  active_.store(false);
  const auto lock = handover_.lock();
  Session* session = handover_.session();
  if (session == nullptr) return;
  const bool batch_open = session->counters != nullptr && session->counters->batch_open();
  if (driver_.ctx_push_current(session->context) != CUDA_SUCCESS) {
    if (batch_open)
      batches_.fail(*session,
                    "the process exited with its context gone before the counters of its last "
                    "batch were read");
    return;
  }
  graph_counter_.release(nullptr);  // while the contexts are alive
  if (batch_open) batches_.end(*session);
  CUcontext popped = nullptr;
  driver_.ctx_pop_current(&popped);
}

void Injection::on_exit() {
  if (forked_child_.load()) return;
  handover_.stop();
  recorder_.record(end_record(launches_, profiled_, recorder_.phases()));
  const auto lock = handover_.lock();  // the watcher is not mid-hand-over
}

CUresult Injection::launch_result(const CUpti_CallbackData* cb) const {
  return cb->functionReturnValue != nullptr ? *static_cast<const CUresult*>(cb->functionReturnValue)
                                            : CUDA_SUCCESS;
}

double Injection::finish_timing_only(const Measuring& m, const CUpti_CallbackData* cb) {
  const auto lock = handover_.lock();
  Session* session = handover_.session();
  const double none = std::nan("");
  if (session == nullptr || session->timer == nullptr) return none;
  if (const CUresult result = launch_result(cb); result != CUDA_SUCCESS) {
    recorder_.record(
        launch_record(m.launch, RowStatus::kError, driver_.describe(cb->functionName, result), {}));
    return none;
  }
  const Clock::time_point t = Clock::now();
  double seconds = std::nan("");
  try {
    seconds = session->timer->end(m.stream);
  } catch (const std::exception& error) {
    recorder_.record(launch_record(m.launch, RowStatus::kError, error.what(), {}));
    return none;
  }
  recorder_.add_phase("events", seconds_since(t));
  handover_.record_device(*session, 0);
  const std::optional<LaunchActivity> activity =
      rows_.activity_of(m.launch, m.correlation, m.window_start);
  const std::optional<LaunchGpuTime> time = gpu_time_of(activity);
  if (m.launch.graph && rows_.graph_nodes()) {
    rows_.record_timed_graph(m.launch, seconds, activity, m.why);
    return time && time->kernels > 0 ? time->seconds : seconds;
  }
  // The events bracket the launch on its stream; the activity record holds the kernel alone.
  std::map<std::string, double> counters{{quantity::kGpuTime, seconds}};
  std::string message = m.why;
  KernelLaunch launch = m.launch;
  set_gpu_span(launch, time);
  rows_.apply_gpu_time(counters, time, message, Around::kEvents, false, m.launch.graph);
  recorder_.record(launch_record(launch, RowStatus::kCountersUnavailable, message, counters));
  return counters[quantity::kGpuTime];
}

void Injection::start_sampling(Session& session, Measuring& m) {
  m.stalls = true;
  StallRecord& record = m.stall;
  record.launch_index = m.launch.index;
  const auto last = last_seconds_.find(m.time_key);
  record.expected_default = last == last_seconds_.end();
  record.expected_seconds = record.expected_default ? kStallDefaultSeconds : last->second;
  int sms = 0;
  if (driver_.device_get_attribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
                                   session.device) != CUDA_SUCCESS)
    sms = 1;
  record.period_log2 = stall_period_on_grid(
      stall_period_log2(record.expected_seconds, kStallAssumedClockMhz, sms, kStallTargetSamples));
  if (!session.no_sampling.empty()) {
    record.note = "not sampled: " + session.no_sampling;
    return;
  }
  if (std::string why; !handover_.take_sampling(session, &why)) {
    record.note = "not sampled: " + why;
    return;
  }
  const Clock::time_point t = Clock::now();
  try {
    if (!session.sampler)
      session.sampler = std::make_unique<gpu::cupti::PcSampler>(session.context);
    session.sampler->start(record.period_log2);
    m.sampled = true;
  } catch (const gpu::ProfilerError& error) {
    record.note = "not sampled: " + first_line(error.what());
    // What no later launch of the context can change is not tried again.
    if (error.kind() != gpu::ProfilerErrorKind::kOther)
      session.no_sampling = first_line(error.what());
  }
  recorder_.add_phase("sample", seconds_since(t));
}

void Injection::finish_sampling(Measuring& m) {
  StallRecord& record = m.stall;
  if (m.sampled) {
    const auto lock = handover_.lock();
    Session* session = handover_.session();
    const Clock::time_point t = Clock::now();
    try {
      if (session == nullptr || session->sampler == nullptr)
        throw gpu::ProfilerError(gpu::ProfilerErrorKind::kOther,
                                 "the context's sampling session closed during the launch");
      const gpu::cupti::SampledRange range = session->sampler->stop();
      record.totals = gpu::cupti::stall_totals_of(range);
      record.pcs = gpu::cupti::pc_samples_of(range);
      record.sampled = true;
    } catch (const std::exception& error) {
      // Nothing may leave the exit callback before it unlocks the launch lock: the row says it.
      record.pcs.clear();
      record.note = "not sampled: " + first_line(error.what());
    }
    recorder_.add_phase("sample", seconds_since(t));
  }
  if (record.sampled) save_cubins(record);
  recorder_.record(stalls_record(record));
}

void Injection::save_cubins(StallRecord& record) {
  const Clock::time_point t = Clock::now();
  bool missing = false;
  for (const PcSample& pc : record.pcs) {
    if (saved_cubins_.count(pc.cubin_crc) != 0) continue;
    const std::string* cubin = cubins_.cubin(pc.cubin_crc);
    if (cubin == nullptr) {
      missing = true;
      continue;
    }
    // Written under a name of this process's, then renamed: another process of the run may
    // save the same module, and the app never reads half a file.
    const std::string path = run_dir_ + "/" + cubin_file_name(pc.cubin_crc);
    const std::string temp = path + "." + std::to_string(getpid()) + ".part";
    bool written = false;
    {
      std::ofstream out(temp, std::ios::binary | std::ios::trunc);
      out.write(cubin->data(), static_cast<std::streamsize>(cubin->size()));
      out.close();
      written = static_cast<bool>(out);
    }
    if (!written || std::rename(temp.c_str(), path.c_str()) != 0) {
      std::remove(temp.c_str());
      missing = true;
      continue;
    }
    saved_cubins_.insert(pc.cubin_crc);
  }
  if (missing)
    record.note += std::string(record.note.empty() ? "" : "; ") +
                   "the module of some PCs was not kept: no SASS or lines for them";
  recorder_.add_phase("cubins", seconds_since(t));
}

void Injection::finish(const Measuring& m, const CUpti_CallbackData* cb) {
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
                      rows_.activity_of(launch, m.correlation, m.window_start), Around::kAutoRange);
  recorder_.add_phase("record", seconds_since(t));
}

void Injection::finish_batched(const Measuring& m, const CUpti_CallbackData* cb) {
  const auto lock = handover_.lock();
  Session* session = handover_.session();
  if (session == nullptr || session->counters == nullptr) return;
  BatchedLaunch batched{m.launch, m.range, launch_result(cb), "", m.correlation, m.window_start, 0};
  if (batched.result != CUDA_SUCCESS)
    batched.error = driver_.describe(cb->functionName, batched.result);
  batches_.end_range(*session, std::move(batched));
}

void Injection::start_pass(Session& session) {
  batches_.end(session);
  const Clock::time_point t = Clock::now();
  session.counters->start();
  recorder_.add_phase("start", seconds_since(t));
}

bool Injection::matches(const LaunchSite& site, const std::string& demangled,
                        const std::optional<GraphExecNodes>& exec) const {
  if (!site.graph) return std::regex_search(demangled, *regex_);
  if (!exec || exec->kernels.empty() || !rows_.graph_nodes()) return true;
  return std::any_of(exec->kernels.begin(), exec->kernels.end(), [this](const std::string& k) {
    return k.empty() || std::regex_search(k, *regex_);
  });
}

}  // namespace roofline::inject
