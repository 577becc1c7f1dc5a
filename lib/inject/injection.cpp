// The injection library of `cuflash-roofline profile`. The CUDA driver loads it into the
// program under test (CUDA_INJECTION64_PATH) and calls InitializeInjection during cuInit.
//
// It subscribes to CUPTI callbacks: kernel and graph launches of the driver API (which the
// runtime goes through too), NVTX range push/pop, and context destruction. A launch chosen by
// the filters is measured on its own, under a process-wide lock held from the launch's entry
// callback to its exit callback, after an L2 flush on the launch's stream (--cache cold), in
// one of two ways:
//   - batch (--replay batch, the default, with one-pass counter sets): one user-replay pass,
//     started at the first measured launch, stays open across launches; each measured launch
//     is a user range, opened after the context's earlier work (the flush included) has
//     finished and closed after the kernel has. A graph launch is one such range, measured as
//     a whole (a batch never switches to kernel replay, which would need another config). The
//     pass is ended, decoded and evaluated, and its launches' records appended, when its image
//     is full (kBatchRanges), before a launch measured the other way, at a hand-over of the
//     counters, at context destruction and at exit: so a pass start (tens of ms) is paid per
//     batch, not per launch.
//   - per launch (--replay launch, and multi-pass sets): the range profiler in auto range +
//     kernel replay mode is started before the launch, which runs serialised (replayed by
//     CUPTI when the set needs several passes), and the exit callback stops, decodes and
//     evaluates it and appends the launch's record.
// Launches not chosen run as usual, but also take the lock while any launch is left to
// profile, so that no other thread's kernel falls into a measured range.
//
// A launch's time is not its range's: a user range holds the launch latency and, for a first
// launch, the module's lazy loading (up to 1,900x a kernel's time on the H200). CUPTI's kernel
// activity records (kernel_activity.hpp) give each kernel's submission, start and end on the
// GPU; a batched launch is timed from submission to end (as ncu's gpu__time_duration), a graph
// launch by its kernel nodes' execution, and a kernel-replayed one by its auto range (kernel
// replay's records have no duration). A CUDA graph launch is never kernel-replayed: that made
// a PyTorch program's graph replay fail ("an illegal instruction was encountered") on the
// H200; outside a batch it is timed only.
//
// Several processes of one run may use the same GPU, and only one of them can hold its
// counters at a time. A process opens its counter session when it first needs it, under the
// device's CounterLease (a lock in the run's directory), and keeps it while no other process
// waits: the cost of opening one is paid once per process. When another process waits, the
// holder closes its session and hands the lease over after its current launch, or at once
// when idle (a watcher thread looks every few milliseconds), then takes it back for its next
// profiled launch. A launch that cannot have the counters (another process of the run kept
// them longer than kLeaseWait, or a profiler outside the run holds them) is timed with events
// and its row says so; the run goes on.
//
// Every failure is a record (profile_protocol.hpp), never an exception across the driver: the
// program then goes on unprofiled. The end record carries the seconds spent in each phase
// (wait, open, flush, start, sync, push, kernel, pop, events, stop, decode, evaluate,
// activity, record, close; "sessions" and "batches" count, as do "activity by correlation",
// "activity by window" and "activity missing"), which `profile -v` prints. The state lives
// until the process ends: CUDA tears down its contexts before static destructors would run, so
// nothing here is freed at exit; a session still open then ends with the process, which
// releases the counters and the lease.
#include <cuda.h>
#include <cupti.h>
#include <dlfcn.h>
#include <pthread.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "generated_nvtx_meta.h"
#include "lib/core/counter_lease.hpp"
#include "lib/core/errors.hpp"
#include "lib/core/profile_protocol.hpp"
#include "lib/core/text.hpp"
#include "lib/gpu/range_profiler.hpp"
#include "lib/inject/driver.hpp"
#include "lib/inject/event_timer.hpp"
#include "lib/inject/kernel_activity.hpp"
#include "lib/inject/l2_flush.hpp"
#include "lib/inject/launch_site.hpp"
#include "lib/inject/record_file.hpp"

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

using Clock = std::chrono::steady_clock;

// How long a launch waits for another process of the run to hand the counters over before it
// is timed without them. A holder hands over after its current launch, so the wait is about
// one launch; a kernel that waits for a kernel of the waiting process (a collective between
// two processes on one GPU) would otherwise never end.
constexpr std::chrono::milliseconds kLeaseWait{10000};
// How often an idle holder looks for processes waiting for its counters.
constexpr std::chrono::milliseconds kWatchPeriod{5};
// A process that takes the lease just as the last holder exits may find the counters still
// busy for a moment: it tries this often, 100 ms apart, before it concludes that a profiler
// outside the run holds them.
constexpr int kBusyAttempts = 20;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// A launch measured in a batch: its row waits for the end of the batch's pass.
struct BatchedLaunch {
  KernelLaunch launch;
  std::string range;               // the name of its range
  CUresult result = CUDA_SUCCESS;  // what the launch call returned
  std::string error;               // its description when not CUDA_SUCCESS
  std::uint32_t correlation = 0;   // of its driver call: its kernels' activity records
  std::uint64_t window_start = 0;  // CUPTI timestamps between which only its kernels ran
  std::uint64_t window_end = 0;
};

// Ranges one batch holds before its pass is ended and read. The image costs about 150 KB a
// range with the default set and is initialised once per batch; each batch pays one pass
// start (about 45 ms on the H200, measured in user replay this session's first call).
constexpr std::size_t kBatchRanges = 128;

// The measurement session of one context: the flush buffer and event pair (the context's),
// and the counters, open only while this process holds the device's lease.
struct Session {
  CUcontext context = nullptr;
  CUdevice device = 0;
  std::string chip;
  std::vector<std::string> metrics;
  bool catalogued = false;
  std::unique_ptr<L2Flush> flush;
  std::unique_ptr<EventTimer> timer;  // made for the first launch timed without counters
  std::unique_ptr<CounterLease> lease;
  std::unique_ptr<gpu::KernelRangeProfiler> counters;  // open only while the lease is held
  std::string no_counters;  // set when a profiler outside the run holds the counters
  // Launches measured in the open batch, in the order of their ranges. Ranges are named by a
  // count that only grows, so that a range left by a dropped launch is never taken for another.
  std::vector<BatchedLaunch> batched;
  std::uint64_t ranges_pushed = 0;
};

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
// therefore never kernel-replayed, and only batches (one-pass user ranges) count them.
// What a launch's time was measured with around it, before the activity records replace it.
enum class Around {
  kUserRange,  // a range of a batch: launch latency and the range's own cost included
  kAutoRange,  // an auto range of kernel replay: the kernel alone
  kEvents,     // CUDA events on its stream
};

constexpr const char* kGraphNotReplayed =
    "a CUDA graph launch is never kernel-replayed (kernel replay of graph launches broke "
    "programs): kernel time only; --replay batch with the default counter set counts it";

void on_exit_read_batch();  // the batch reader's exit handler (after the class)

// Per thread: our own driver calls re-enter the callback; the NVTX stack; the launch measured.
thread_local bool t_inside = false;
thread_local std::vector<std::string> t_nvtx;
thread_local std::optional<Measuring> t_measuring;
thread_local bool t_holds_lock = false;

class Injection {
 public:
  Injection(std::unique_ptr<RecordFile> records, ProfileOptions options, const Driver& driver,
            std::string run_dir, std::string no_activity)
      : records_(std::move(records)),
        options_(std::move(options)),
        driver_(driver),
        run_dir_(std::move(run_dir)),
        process_(process_name()),
        no_activity_(std::move(no_activity)) {
    if (!options_.kernel_regex.empty())
      regex_.emplace(options_.kernel_regex, std::regex::ECMAScript | std::regex::optimize);
  }

  void record(const std::string& line) { records_->append(line); }

  void fail(ProfileErrorKind kind, const std::string& message) {
    record(error_record(kind, message));
    // Counters are unusable in this process from here on: launches run unprofiled.
    if (kind != ProfileErrorKind::kInternal) active_.store(false);
  }

  void on_nvtx(CUpti_CallbackId id, const CUpti_NvtxData* data) {
    auto ascii = [](const nvtxEventAttributes_t* a) -> std::string {
      if (a != nullptr && a->messageType == NVTX_MESSAGE_TYPE_ASCII && a->message.ascii != nullptr)
        return a->message.ascii;
      return "";
    };
    switch (id) {
      case CUPTI_CBID_NVTX_nvtxRangePushA: {
        const auto* p = static_cast<const nvtxRangePushA_params*>(data->functionParams);
        t_nvtx.emplace_back(p->message != nullptr ? p->message : "");
        break;
      }
      case CUPTI_CBID_NVTX_nvtxRangePushEx:
        t_nvtx.push_back(
            ascii(static_cast<const nvtxRangePushEx_params*>(data->functionParams)->eventAttrib));
        break;
      case CUPTI_CBID_NVTX_nvtxDomainRangePushEx:
        t_nvtx.push_back(
            ascii(static_cast<const nvtxDomainRangePushEx_params*>(data->functionParams)
                      ->core.eventAttrib));
        break;
      case CUPTI_CBID_NVTX_nvtxRangePop:
      case CUPTI_CBID_NVTX_nvtxDomainRangePop:
        if (!t_nvtx.empty()) t_nvtx.pop_back();
        break;
      default:
        break;
    }
  }

  void on_context_destroy(CUcontext context) {
    std::lock_guard<std::mutex> lock(sessions_mutex_);
    if (session_ == nullptr || session_->context != context) return;
    close_session();
  }

  void on_launch_enter(CUpti_CallbackId id, const CUpti_CallbackData* cb) {
    if (!active_.load()) return;
    const std::optional<LaunchSite> site = launch_site(id, cb->functionParams);
    if (!site) return;
    // A launch into a capturing stream builds a graph; it runs later, as a graph launch.
    CUstreamCaptureStatus capture = CU_STREAM_CAPTURE_STATUS_NONE;
    if (site->stream != nullptr &&
        driver_.stream_is_capturing(site->stream, &capture) == CUDA_SUCCESS &&
        capture != CU_STREAM_CAPTURE_STATUS_NONE)
      return;
    launch_mutex_.lock();
    t_holds_lock = true;
    const std::int64_t index = launches_++;
    const std::string demangled = site->graph ? "CUDA graph" : demangle(cb->symbolName);
    if (regex_ && !std::regex_search(demangled, *regex_)) return;
    if (matched_++ < options_.launch_skip) return;
    if (options_.launch_count >= 0 && profiled_ >= options_.launch_count) return;

    Measuring m;
    KernelLaunch& launch = m.launch;
    launch.mangled_name = site->graph ? "" : (cb->symbolName != nullptr ? cb->symbolName : "");
    launch.demangled_name = demangled;
    for (std::size_t i = 0; i < t_nvtx.size(); ++i)
      launch.nvtx_range += (i == 0 ? "" : " / ") + t_nvtx[i];
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
    if (no_activity_.empty()) KernelActivity::instance().expect(m.correlation);

    try {
      std::lock_guard<std::mutex> lock(sessions_mutex_);
      Session& session = session_for(cb->context);
      m.timing_only = !take_counters(session, &m.why);
      if (!m.timing_only && site->graph && !batches(session)) {
        m.timing_only = true;
        m.why = kGraphNotReplayed;
      }
      if (options_.cache == CacheControl::kCold && session.flush) {
        const Clock::time_point t = Clock::now();
        session.flush->run(site->stream);
        add_phase("flush", seconds_since(t));
      }
      if (!m.timing_only) {
        try {
          if (batches(session))
            open_batch_range(session, m);
          else
            start_pass(session, site->graph);
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
            record(launch_record(m.launch, RowStatus::kError, error.what(), {}));
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
    if (t_measuring) {
      Measuring m = std::move(*t_measuring);
      t_measuring.reset();
      add_phase("kernel", seconds_since(m.kernel_start));
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
      std::lock_guard<std::mutex> lock(sessions_mutex_);
      if (session_ != nullptr && session_->lease != nullptr && session_->lease->held() &&
          (done || session_->lease->others_waiting()))
        release_counters(*session_);
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
    stopping_.store(true);
    if (session_ != nullptr && session_->lease != nullptr) session_->lease->close_inherited();
  }

  // At exit, before the CUDA runtime's own handlers (see open_batch_range): the open batch
  // is read, and no launch is profiled after it.
  void on_exit_batch() {
    if (forked_child_.load()) return;
    active_.store(false);
    std::lock_guard<std::mutex> lock(sessions_mutex_);
    if (session_ == nullptr || session_->counters == nullptr || !session_->counters->batch_open())
      return;
    if (driver_.ctx_push_current(session_->context) == CUDA_SUCCESS) {
      end_batch(*session_);
      CUcontext popped = nullptr;
      driver_.ctx_pop_current(&popped);
    } else {
      fail_batch(*session_,
                 "the process exited with its context gone before the counters of its last "
                 "batch were read");
    }
  }

  void on_exit() {
    if (forked_child_.load()) return;
    stopping_.store(true);
    std::map<std::string, double> phases;
    {
      std::lock_guard<std::mutex> lock(phases_mutex_);
      phases = phases_;
    }
    record(end_record(launches_, profiled_, phases));
    std::lock_guard<std::mutex> lock(sessions_mutex_);  // the watcher is not mid-hand-over
  }

 private:
  void add_phase(const char* phase, double seconds) {
    std::lock_guard<std::mutex> lock(phases_mutex_);
    phases_[phase] += seconds;
  }

  // The session of `context`, opened on first use (one context is measured at a time: a
  // launch on another context closes the previous one). Counters are not opened here.
  // Called with sessions_mutex_ held.
  Session& session_for(CUcontext context) {
    if (session_ != nullptr && session_->context == context) return *session_;
    close_session();
    auto session = std::make_unique<Session>();
    session->context = context;
    if (CUresult r = driver_.ctx_get_device(&session->device); r != CUDA_SUCCESS)
      throw std::runtime_error(driver_.describe("cuCtxGetDevice", r));
    session->chip = gpu::chip_name_of_loaded_device(static_cast<int>(session->device));
    session->catalogued = has_catalogue(session->chip);
    // A chip without a catalogue still gets the kernel time, the one metric every chip names.
    session->metrics = session->catalogued ? catalogue_metrics(session->chip, options_.counter_set)
                                           : std::vector<std::string>{"gpu__time_duration.sum"};
    // The lease names the device as every process sees it, whatever CUDA_VISIBLE_DEVICES says.
    char bus_id[64] = {};
    if (CUresult r = driver_.device_get_pci_bus_id(bus_id, sizeof bus_id, session->device);
        r != CUDA_SUCCESS)
      throw std::runtime_error(driver_.describe("cuDeviceGetPCIBusId", r));
    session->lease = std::make_unique<CounterLease>(run_dir_, CounterLease::key_of(bus_id));
    if (options_.cache == CacheControl::kCold)
      session->flush = std::make_unique<L2Flush>(driver_, session->device);
    session_ = std::move(session);
    return *session_;
  }

  // Opens the counters of `session` under its lease, waiting for another process of the run
  // to hand them over. False, with `why`, when this launch must do without them. Throws
  // gpu::ProfilerError when counters cannot work at all (not permitted, unsupported).
  bool take_counters(Session& session, std::string* why) {
    if (!session.no_counters.empty()) {
      *why = session.no_counters;
      return false;
    }
    if (session.counters != nullptr) return true;
    const Clock::time_point waited = Clock::now();
    const bool held = session.lease->acquire(kLeaseWait);
    add_phase("wait", seconds_since(waited));
    if (!held) {
      const int holder = session.lease->holder();
      *why = "another process of this run" +
             (holder > 0 ? " (pid " + std::to_string(holder) + ")" : std::string()) +
             " kept the GPU's counters for more than " + std::to_string(kLeaseWait.count() / 1000) +
             " s: kernel time only (CUDA events)";
      return false;
    }
    const Clock::time_point opened = Clock::now();
    for (int attempt = 1;; ++attempt) {
      try {
        session.counters = std::make_unique<gpu::KernelRangeProfiler>(
            static_cast<void*>(session.context), static_cast<int>(session.device), session.metrics);
        break;
      } catch (const gpu::ProfilerError& error) {
        if (error.kind() != gpu::ProfilerErrorKind::kMultipleSubscribers) {
          session.lease->release();
          throw;
        }
        if (attempt == kBusyAttempts) {
          session.lease->release();
          session.no_counters = std::string(
                                    "the GPU's counters are held outside this run: "
                                    "kernel time only (CUDA events): ") +
                                error.what();
          *why = session.no_counters;
          add_phase("open", seconds_since(opened));
          return false;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
      }
    }
    add_phase("open", seconds_since(opened));
    add_phase("sessions", 1);
    record_device(session, session.counters->num_passes());
    if (!watcher_started_) {
      watcher_started_ = true;
      std::thread([this] { watch(); }).detach();
    }
    return true;
  }

  // Closes the counters and gives the lease up. With the session's context current (or
  // being destroyed), and sessions_mutex_ held.
  void release_counters(Session& session) {
    end_batch(session);
    const Clock::time_point t = Clock::now();
    session.counters.reset();
    session.lease->release();
    add_phase("close", seconds_since(t));
  }

  // The watcher thread: hands the counters over while this process is between launches and
  // another process waits for them (a holder that goes idle would otherwise keep them).
  void watch() {
    while (!stopping_.load()) {
      std::this_thread::sleep_for(kWatchPeriod);
      try {
        std::unique_lock<std::mutex> launch(launch_mutex_, std::try_to_lock);
        if (!launch.owns_lock()) continue;  // a launch is in flight: its exit hands over
        std::lock_guard<std::mutex> lock(sessions_mutex_);
        if (stopping_.load() || session_ == nullptr || session_->counters == nullptr ||
            !session_->lease->others_waiting())
          continue;
        if (driver_.ctx_push_current(session_->context) != CUDA_SUCCESS) continue;
        release_counters(*session_);
        CUcontext popped = nullptr;
        driver_.ctx_pop_current(&popped);
      } catch (...) {
        // An flock failure: the next launch boundary hands over instead. Nothing may escape
        // into the program.
      }
    }
  }

  void close_session() {
    if (session_ == nullptr) return;
    // The counters, flush buffer and events belong to the context: free them with it current.
    if (driver_.ctx_push_current(session_->context) == CUDA_SUCCESS) {
      if (session_->counters) release_counters(*session_);
      session_->flush.reset();
      session_->timer.reset();
      CUcontext popped = nullptr;
      driver_.ctx_pop_current(&popped);
    } else {  // the context is gone: so are its buffer, events and counters
      fail_batch(*session_, "the context was gone before the counters of its batch were read");
      session_->counters.reset();
      session_->flush.release();
      session_->timer.release();
    }
    session_.reset();  // closing the lease's files releases it
  }

  void record_device(const Session& session, int passes) {
    if (device_recorded_) return;
    record(device_record(device_info(driver_, session.device, session.chip),
                         std::string(to_string(options_.counter_set)), session.metrics, passes));
    device_recorded_ = true;
  }

  CUresult launch_result(const CUpti_CallbackData* cb) const {
    return cb->functionReturnValue != nullptr
               ? *static_cast<const CUresult*>(cb->functionReturnValue)
               : CUDA_SUCCESS;
  }

  void finish_timing_only(const Measuring& m, const CUpti_CallbackData* cb) {
    std::lock_guard<std::mutex> lock(sessions_mutex_);
    if (session_ == nullptr || session_->timer == nullptr) return;
    if (const CUresult result = launch_result(cb); result != CUDA_SUCCESS) {
      record(launch_record(m.launch, RowStatus::kError, driver_.describe(cb->functionName, result),
                           {}));
      return;
    }
    const Clock::time_point t = Clock::now();
    double seconds = std::nan("");
    try {
      seconds = session_->timer->end(m.stream);
    } catch (const std::exception& error) {
      record(launch_record(m.launch, RowStatus::kError, error.what(), {}));
      return;
    }
    add_phase("events", seconds_since(t));
    record_device(*session_, 0);
    // The events bracket the launch on its stream; the activity record holds the kernel alone.
    std::map<std::string, double> counters{{quantity::kGpuTime, seconds}};
    std::string message = m.why;
    apply_gpu_time(counters, gpu_time(m.launch, m.correlation, m.window_start), message,
                   Around::kEvents, false);
    record(launch_record(m.launch, RowStatus::kCountersUnavailable, message, counters));
  }

  // Stops the session's pass, decodes and evaluates its ranges (each phase timed); throws
  // gpu::ProfilerError.
  std::vector<gpu::RangeValues> read_counters(Session& session) {
    Clock::time_point t = Clock::now();
    session.counters->stop();
    add_phase("stop", seconds_since(t));
    t = Clock::now();
    session.counters->decode();
    add_phase("decode", seconds_since(t));
    t = Clock::now();
    std::vector<gpu::RangeValues> ranges = session.counters->evaluate();
    add_phase("evaluate", seconds_since(t));
    return ranges;
  }

  void finish(Measuring& m, const CUpti_CallbackData* cb) {
    KernelLaunch& launch = m.launch;
    std::lock_guard<std::mutex> lock(sessions_mutex_);
    if (session_ == nullptr || session_->counters == nullptr) return;
    Session& session = *session_;
    std::vector<gpu::RangeValues> ranges;
    try {
      ranges = read_counters(session);
    } catch (const gpu::ProfilerError& error) {
      record(launch_record(launch, RowStatus::kError, error.what(), {}));
      return;
    }
    const Clock::time_point t = Clock::now();
    if (const CUresult result = launch_result(cb); result != CUDA_SUCCESS) {
      record(
          launch_record(launch, RowStatus::kError, driver_.describe(cb->functionName, result), {}));
      return;
    }
    record_ranges(session, launch, ranges, gpu_time(launch, m.correlation, m.window_start),
                  Around::kAutoRange);
    add_phase("record", seconds_since(t));
  }

  // The exit of a launch measured in a batch: closes its range; its row is written when the
  // batch is read, here when the batch is full.
  void finish_batched(const Measuring& m, const CUpti_CallbackData* cb) {
    std::lock_guard<std::mutex> lock(sessions_mutex_);
    if (session_ == nullptr || session_->counters == nullptr) return;
    Session& session = *session_;
    BatchedLaunch batched{m.launch,       m.range, launch_result(cb), "", m.correlation,
                          m.window_start, 0};
    if (batched.result != CUDA_SUCCESS)
      batched.error = driver_.describe(cb->functionName, batched.result);
    Clock::time_point t = Clock::now();
    // The kernel ends before its range closes, whatever order CUPTI gives the pop.
    synchronize_context();
    add_phase("sync", seconds_since(t));
    batched.window_end = KernelActivity::now_ns();
    session.batched.push_back(std::move(batched));
    t = Clock::now();
    try {
      session.counters->pop_range();
    } catch (const gpu::ProfilerError& error) {
      fail_batch(session, error.what());
      return;
    }
    add_phase("pop", seconds_since(t));
    if (session.counters->batch_full()) end_batch(session);
  }

  // Ends the open batch of `session` (if any), reads its counters and writes a row for each
  // of its launches. With the session's context current and sessions_mutex_ held.
  void end_batch(Session& session) {
    if (session.counters == nullptr || !session.counters->batch_open()) return;
    add_phase("batches", 1);
    std::vector<gpu::RangeValues> ranges;
    try {
      ranges = read_counters(session);
    } catch (const gpu::ProfilerError& error) {
      fail_batch(session, error.what());
      return;
    }
    const Clock::time_point t = Clock::now();
    flush_activity();
    std::map<std::string, const gpu::RangeValues*> by_name;
    for (const gpu::RangeValues& range : ranges) by_name[range.name] = &range;
    for (const BatchedLaunch& b : session.batched) {
      const auto found = by_name.find(b.range);
      if (b.result != CUDA_SUCCESS)
        record(launch_record(b.launch, RowStatus::kError, b.error, {}));
      else if (found == by_name.end())
        record(launch_record(b.launch, RowStatus::kError,
                             "the range profiler recorded no range for this launch", {}));
      else
        record_ranges(session, b.launch, {*found->second},
                      take_gpu_time(b.launch, b.correlation, b.window_start, b.window_end),
                      Around::kUserRange);
    }
    session.batched.clear();
    add_phase("record", seconds_since(t));
  }

  // Waits for the current context's work. An error here (a kernel fault) is the program's to
  // see at its next call; the launch's own row reports its launch result.
  void synchronize_context() const { driver_.ctx_synchronize(); }

  // The batch's launches get error rows saying `why`; the batch is dropped.
  void fail_batch(Session& session, const std::string& why) {
    for (const BatchedLaunch& b : session.batched)
      record(launch_record(b.launch, RowStatus::kError,
                           b.result != CUDA_SUCCESS ? b.error : "counters lost: " + why, {}));
    session.batched.clear();
  }

  // Opens the range of a batched launch, starting a batch first when none is open. Throws
  // gpu::ProfilerError.
  void open_batch_range(Session& session, Measuring& m) {
    Clock::time_point t = Clock::now();
    if (!session.counters->batch_open()) {
      session.counters->begin_batch(kBatchRanges);
      add_phase("start", seconds_since(t));
      // The batch open at exit is read by a handler registered now, after the CUDA runtime
      // registered its own: handlers run in reverse order, so it runs while CUDA and CUPTI are
      // still whole. (Read from the handler registered in InitializeInjection, during cuInit,
      // the last batch came back empty from PyTorch and crashed a CUDA C++ program, SIGSEGV.)
      std::call_once(batch_exit_registered_, [] { std::atexit(on_exit_read_batch); });
      t = Clock::now();
    }
    // The range must hold this kernel alone: the flush and every earlier launch of the
    // context finish before it opens (kernel replay serialises the same way).
    synchronize_context();
    add_phase("sync", seconds_since(t));
    t = Clock::now();
    m.range = std::to_string(session.ranges_pushed++);
    session.counters->push_range(m.range);
    add_phase("push", seconds_since(t));
    m.batched = true;
  }

  // Starts a pass for this launch alone (auto range, kernel replay); an open batch ends first.
  // Throws gpu::ProfilerError.
  void start_pass(Session& session, bool graph) {
    end_batch(session);
    const Clock::time_point t = Clock::now();
    session.counters->start(graph);
    add_phase("start", seconds_since(t));
  }

  // True when this launch goes into a batch: the batch mode and a one-pass set (a graph launch
  // too, as one range).
  bool batches(const Session& session) const {
    return options_.replay == ReplayMode::kBatch && session.counters != nullptr &&
           session.counters->num_passes() == 1;
  }

  // Rows of one launch from its ranges (one for a kernel, one per kernel node of a graph).
  void record_ranges(const Session& session, const KernelLaunch& launch,
                     const std::vector<gpu::RangeValues>& ranges,
                     const std::optional<LaunchGpuTime>& time, Around around) {
    // In a batch the context is idle when a kernel launch is submitted (synchronised before
    // its range opens): from its submission to its end is the GPU's time for it.
    const bool from_submission = around == Around::kUserRange && !launch.graph;
    if (ranges.empty()) {
      record(launch_record(launch, RowStatus::kError,
                           "the range profiler recorded no range for this launch", {}));
      return;
    }
    const CounterSet set = options_.counter_set;
    for (std::size_t i = 0; i < ranges.size(); ++i) {
      KernelLaunch row = launch;
      std::string message;
      if (launch.graph) {
        message = ranges.size() == 1
                      ? "a CUDA graph launch, measured as a whole"
                      : "kernel node " + std::to_string(i + 1) + " of " +
                            std::to_string(ranges.size()) + " of a CUDA graph launch";
        // Auto-range names are the launch order ("0", "1", ...) unless CUPTI names the kernel.
        const std::string& name = ranges[i].name;
        if (name.find_first_not_of("0123456789") != std::string::npos) {
          row.mangled_name = name;
          row.demangled_name = demangle(name.c_str());
        }
      }
      if (!session.catalogued) {
        std::map<std::string, double> counters;
        if (!ranges[i].values.empty() && ranges[i].values[0] == ranges[i].values[0])
          counters[quantity::kGpuTime] = ranges[i].values[0] * 1e-9;
        std::string note = "no metric catalogue for chip " + session.chip + ": kernel time only";
        if (ranges.size() == 1) apply_gpu_time(counters, time, note, around, from_submission);
        record(launch_record(row, RowStatus::kCountersUnavailable, note, counters));
        continue;
      }
      std::map<std::string, double> counters =
          combine_metrics(session.chip, set, session.metrics, ranges[i].values);
      if (counters.empty()) {  // a range without values: never an `ok` row without counters
        record(launch_record(row, RowStatus::kError,
                             "the range profiler returned no counter values for this launch", {}));
        continue;
      }
      // A graph launch back per kernel node (not done today: graphs are only batched) keeps
      // each node's range time.
      if (ranges.size() == 1) apply_gpu_time(counters, time, message, around, from_submission);
      record(launch_record(row, RowStatus::kOk, message, std::move(counters)));
    }
  }

  // The activity records CUPTI holds, delivered (the launches read next have finished).
  void flush_activity() {
    if (!no_activity_.empty()) return;
    const Clock::time_point t = Clock::now();
    KernelActivity::instance().flush();
    add_phase("activity", seconds_since(t));
  }

  // The GPU time of a launch that has just finished: its context synchronised, records flushed.
  std::optional<LaunchGpuTime> gpu_time(const KernelLaunch& launch, std::uint32_t correlation,
                                        std::uint64_t window_start) {
    if (!no_activity_.empty()) return std::nullopt;
    synchronize_context();
    const std::uint64_t window_end = KernelActivity::now_ns();
    flush_activity();
    return take_gpu_time(launch, correlation, window_start, window_end);
  }

  // A graph launch's kernels are its kernel nodes; a kernel launch's, those of its name.
  std::optional<LaunchGpuTime> take_gpu_time(const KernelLaunch& launch, std::uint32_t correlation,
                                             std::uint64_t start, std::uint64_t end) {
    if (!no_activity_.empty()) return std::nullopt;
    std::optional<LaunchGpuTime> time = KernelActivity::instance().take(
        correlation, launch.graph ? std::string() : launch.mangled_name, start, end);
    add_phase(!time             ? "activity missing"
              : time->by_window ? "activity by window"
                                : "activity by correlation",
              1);
    return time;
  }

  // The row's time (kGpuTime) from the activity records: with `from_submission`, from the
  // submission of the launch to the GPU to the kernel's end, the GPU's launch processing
  // included as in ncu's gpu__time_duration (on the H200 the two agreed within 0.4 us at the
  // median over 1,314 PyTorch launches, where the execution alone read 1.1 us less); else the
  // kernels' execution (kKernelExecution, kept beside it either way). `counters`' kGpuTime on
  // entry is what was measured around the launch (`around`), kept as kRangeTime; without a
  // record it stays the row's time and, unless it is an auto range (the kernel alone, as ncu
  // measures it), `message` says so.
  void apply_gpu_time(std::map<std::string, double>& counters,
                      const std::optional<LaunchGpuTime>& time, std::string& message, Around around,
                      bool from_submission) const {
    auto note = [&message](const std::string& text) {
      message += (message.empty() ? "" : "; ") + text;
    };
    const auto measured = counters.find(quantity::kGpuTime);
    const double around_seconds = measured != counters.end() ? measured->second : std::nan("");
    if (!std::isnan(around_seconds)) counters[quantity::kRangeTime] = around_seconds;
    if (!time) {
      if (around != Around::kAutoRange)
        note(std::string("kernel time from ") +
             (around == Around::kEvents ? "CUDA events" : "the range") +
             " around the launch (launch latency included): " +
             (no_activity_.empty() ? "CUPTI gave no kernel activity record for it" : no_activity_));
      return;
    }
    counters[quantity::kKernelExecution] = time->seconds;
    counters[quantity::kKernelCount] = time->kernels;
    counters[quantity::kGpuTime] = from_submission && std::isfinite(time->seconds_from_submission)
                                       ? time->seconds_from_submission
                                       : time->seconds;
    // A kernel cannot outlast what was measured around it: if it seems to, one source is wrong.
    if (around_seconds > 0 && time->seconds > around_seconds * 1.05 + 2e-6)
      note("the kernel's activity time (" + format_fixed(time->seconds * 1e6, 1) +
           " us) exceeds the time measured around it (" + format_fixed(around_seconds * 1e6, 1) +
           " us)");
  }

  std::unique_ptr<RecordFile> records_;
  ProfileOptions options_;
  const Driver& driver_;
  std::string run_dir_;  // the run's record directory: record files and counter leases
  std::string process_;
  std::string no_activity_;  // why kernel activity records are unavailable; empty: they work
  std::optional<std::regex> regex_;
  std::atomic<bool> active_{true};
  std::atomic<bool> stopping_{false};  // the process is exiting: the watcher stops
  std::atomic<bool> forked_child_{false};
  // Lock order: launch_mutex_, then sessions_mutex_, then phases_mutex_.
  std::mutex launch_mutex_;  // held from a launch's entry to its exit callback
  std::mutex sessions_mutex_;
  std::unique_ptr<Session> session_;
  bool watcher_started_ = false;  // guarded by sessions_mutex_
  std::once_flag batch_exit_registered_;
  bool device_recorded_ = false;
  std::mutex phases_mutex_;
  std::map<std::string, double> phases_;  // seconds per phase ("sessions": how many opened)
  std::int64_t launches_ = 0;             // guarded by launch_mutex_
  std::int64_t matched_ = 0;
  std::int64_t profiled_ = 0;
};

Injection* g_injection = nullptr;  // never deleted: see the file comment

void CUPTIAPI on_callback(void*, CUpti_CallbackDomain domain, CUpti_CallbackId id,
                          const void* data) {
  if (t_inside || g_injection == nullptr) return;
  t_inside = true;
  try {
    switch (domain) {
      case CUPTI_CB_DOMAIN_NVTX:
        g_injection->on_nvtx(id, static_cast<const CUpti_NvtxData*>(data));
        break;
      case CUPTI_CB_DOMAIN_RESOURCE:
        if (id == CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING)
          g_injection->on_context_destroy(static_cast<const CUpti_ResourceData*>(data)->context);
        break;
      case CUPTI_CB_DOMAIN_DRIVER_API: {
        const auto* cb = static_cast<const CUpti_CallbackData*>(data);
        if (cb->callbackSite == CUPTI_API_ENTER)
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
    if (!options.kernel_regex.empty()) std::regex check(options.kernel_regex);
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
  cuptiEnableCallback(1, subscriber, CUPTI_CB_DOMAIN_RESOURCE,
                      CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING);
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
