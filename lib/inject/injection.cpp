// The injection library of `cuflash-roofline profile`. The CUDA driver loads it into the
// program under test (CUDA_INJECTION64_PATH) and calls InitializeInjection during cuInit.
//
// It subscribes to CUPTI callbacks: kernel and graph launches of the driver API (which the
// runtime goes through too), NVTX range push/pop, and context destruction. A launch chosen by
// the filters is measured on its own: under a process-wide lock held from the launch's entry
// callback to its exit callback, an L2 flush on the launch's stream (--cache cold), then the
// range profiler in auto range + kernel replay mode (KernelRangeProfiler) is started, the
// launch runs (serialised, replayed by CUPTI when the counter set needs several passes), and
// the exit callback stops, decodes and evaluates the range and appends one launch record to
// this process's record file. Launches not chosen run as usual, but also take the lock while
// any launch is left to profile, so that no other thread's kernel falls into a measured range.
//
// Every failure is a record (profile_protocol.hpp), never an exception across the driver: the
// program then goes on unprofiled. The state lives until the process ends: CUDA tears down
// its contexts before static destructors would run, so nothing here is freed at exit.
#include <cuda.h>
#include <cupti.h>
#include <cxxabi.h>
#include <dlfcn.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <mutex>
#include <optional>
#include <regex>
#include <string>
#include <vector>

#include "generated_nvtx_meta.h"
#include "lib/core/errors.hpp"
#include "lib/core/profile_protocol.hpp"
#include "lib/gpu/range_profiler.hpp"
#include "lib/inject/driver.hpp"
#include "lib/inject/l2_flush.hpp"
#include "lib/inject/record_file.hpp"

namespace roofline::inject {
namespace {

std::string demangle(const char* name) {
  if (name == nullptr) return "";
  int status = 0;
  char* text = abi::__cxa_demangle(name, nullptr, nullptr, &status);
  if (status != 0 || text == nullptr) return name;
  std::string out(text);
  std::free(text);
  return out;
}

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

// What a launch callback tells about the launch.
struct LaunchSite {
  CUfunction function = nullptr;
  std::array<int, 3> grid{1, 1, 1};
  std::array<int, 3> block{1, 1, 1};
  std::int64_t dynamic_shared = 0;
  CUstream stream = nullptr;
  bool graph = false;
};

std::optional<LaunchSite> launch_site(CUpti_CallbackId id, const void* params) {
  LaunchSite s;
  auto from_plain = [&](const auto* p) {
    s.function = p->f;
    s.grid = {int(p->gridDimX), int(p->gridDimY), int(p->gridDimZ)};
    s.block = {int(p->blockDimX), int(p->blockDimY), int(p->blockDimZ)};
    s.dynamic_shared = p->sharedMemBytes;
    s.stream = p->hStream;
  };
  auto from_ex = [&](const auto* p) {
    s.function = p->f;
    const CUlaunchConfig* c = p->config;
    s.grid = {int(c->gridDimX), int(c->gridDimY), int(c->gridDimZ)};
    s.block = {int(c->blockDimX), int(c->blockDimY), int(c->blockDimZ)};
    s.dynamic_shared = c->sharedMemBytes;
    s.stream = c->hStream;
  };
  switch (id) {
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel:
      from_plain(static_cast<const cuLaunchKernel_params*>(params));
      return s;
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz:
      from_plain(static_cast<const cuLaunchKernel_ptsz_params*>(params));
      return s;
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel:
      from_plain(static_cast<const cuLaunchCooperativeKernel_params*>(params));
      return s;
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz:
      from_plain(static_cast<const cuLaunchCooperativeKernel_ptsz_params*>(params));
      return s;
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx:
      from_ex(static_cast<const cuLaunchKernelEx_params*>(params));
      return s;
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz:
      from_ex(static_cast<const cuLaunchKernelEx_ptsz_params*>(params));
      return s;
    case CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch:
      s.graph = true;
      s.stream = static_cast<const cuGraphLaunch_params*>(params)->hStream;
      return s;
    case CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch_ptsz:
      s.graph = true;
      s.stream = static_cast<const cuGraphLaunch_ptsz_params*>(params)->hStream;
      return s;
    default:
      return std::nullopt;
  }
}

constexpr CUpti_CallbackId kLaunchCallbacks[] = {
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch,
    CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch_ptsz,
};

// The measurement session of one context: the range profiler and the flush buffer.
struct Session {
  CUcontext context = nullptr;
  std::string chip;
  std::vector<std::string> metrics;
  bool catalogued = false;
  std::unique_ptr<gpu::KernelRangeProfiler> profiler;
  std::unique_ptr<L2Flush> flush;
};

// Per thread: our own driver calls re-enter the callback; the NVTX stack; the launch measured.
thread_local bool t_inside = false;
thread_local std::vector<std::string> t_nvtx;
thread_local std::optional<KernelLaunch> t_measuring;
thread_local bool t_holds_lock = false;

class Injection {
 public:
  Injection(std::unique_ptr<RecordFile> records, ProfileOptions options, const Driver& driver)
      : records_(std::move(records)),
        options_(std::move(options)),
        driver_(driver),
        process_(process_name()) {
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

    KernelLaunch launch;
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
      int value = 0;
      if (driver_.func_get_attribute(&value, CU_FUNC_ATTRIBUTE_NUM_REGS, site->function) ==
          CUDA_SUCCESS)
        launch.registers_per_thread = value;
      if (driver_.func_get_attribute(&value, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, site->function) ==
          CUDA_SUCCESS)
        launch.static_shared_bytes = value;
    }
    unsigned long long stream_id = 0;
    if (site->stream != nullptr && driver_.stream_get_id(site->stream, &stream_id) == CUDA_SUCCESS)
      launch.stream_id = static_cast<std::int64_t>(stream_id);

    try {
      Session& session = session_for(cb->context);
      if (options_.cache == CacheControl::kCold && session.flush) session.flush->run(site->stream);
      session.profiler->start();
      t_measuring = std::move(launch);
    } catch (const gpu::ProfilerError& error) {
      fail(kind_of(error.kind()), error.what());
    } catch (const std::exception& error) {
      fail(ProfileErrorKind::kInternal, error.what());
    }
  }

  void on_launch_exit(const CUpti_CallbackData* cb) {
    if (t_measuring) {
      KernelLaunch launch = std::move(*t_measuring);
      t_measuring.reset();
      ++profiled_;
      finish(launch, cb);
      if (options_.launch_count >= 0 && profiled_ >= options_.launch_count) active_.store(false);
    }
    if (t_holds_lock) {
      t_holds_lock = false;
      launch_mutex_.unlock();
    }
  }

  void on_exit() { record(end_record(launches_, profiled_)); }

 private:
  // The session of `context`, opened on first use (one context is measured at a time: a
  // launch on another context closes the previous one).
  Session& session_for(CUcontext context) {
    std::lock_guard<std::mutex> lock(sessions_mutex_);
    if (session_ != nullptr && session_->context == context) return *session_;
    close_session();
    auto session = std::make_unique<Session>();
    session->context = context;
    CUdevice device = 0;
    if (CUresult r = driver_.ctx_get_device(&device); r != CUDA_SUCCESS)
      throw std::runtime_error(driver_.describe("cuCtxGetDevice", r));
    session->chip = gpu::chip_name_of_loaded_device(static_cast<int>(device));
    session->catalogued = has_catalogue(session->chip);
    // A chip without a catalogue still gets the kernel time, the one metric every chip names.
    session->metrics = session->catalogued ? catalogue_metrics(session->chip, options_.counter_set)
                                           : std::vector<std::string>{"gpu__time_duration.sum"};
    session->profiler = std::make_unique<gpu::KernelRangeProfiler>(
        static_cast<void*>(context), static_cast<int>(device), session->metrics);
    if (options_.cache == CacheControl::kCold)
      session->flush = std::make_unique<L2Flush>(driver_, device);
    if (!device_recorded_) {
      record(device_record(device_info(device, session->chip),
                           std::string(to_string(options_.counter_set)), session->metrics,
                           session->profiler->num_passes()));
      device_recorded_ = true;
    }
    session_ = std::move(session);
    return *session_;
  }

  void close_session() {
    if (session_ == nullptr) return;
    // The flush buffer belongs to the context: free it with the context current.
    if (session_->flush && driver_.ctx_push_current(session_->context) == CUDA_SUCCESS) {
      session_->flush.reset();
      CUcontext popped = nullptr;
      driver_.ctx_pop_current(&popped);
    } else {
      session_->flush.release();  // the context is gone: so is the buffer
    }
    session_.reset();
  }

  DeviceInfo device_info(CUdevice device, const std::string& chip) const {
    DeviceInfo info;
    char name[256] = {};
    if (driver_.device_get_name(name, sizeof name, device) == CUDA_SUCCESS) info.name = name;
    info.chip = chip;
    int major = 0, minor = 0, sms = 0, l2 = 0, version = 0;
    driver_.device_get_attribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, device);
    driver_.device_get_attribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, device);
    driver_.device_get_attribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, device);
    driver_.device_get_attribute(&l2, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, device);
    info.compute_capability = std::to_string(major) + "." + std::to_string(minor);
    info.sm_count = sms;
    info.l2_cache_bytes = l2;
    size_t memory = 0;
    if (driver_.device_total_mem(&memory, device) == CUDA_SUCCESS)
      info.memory_bytes = static_cast<std::int64_t>(memory);
    if (driver_.driver_get_version(&version) == CUDA_SUCCESS)
      info.driver_version =
          "CUDA " + std::to_string(version / 1000) + "." + std::to_string(version % 1000 / 10);
    return info;
  }

  void finish(KernelLaunch& launch, const CUpti_CallbackData* cb) {
    std::lock_guard<std::mutex> lock(sessions_mutex_);
    if (session_ == nullptr) return;
    Session& session = *session_;
    std::vector<gpu::RangeValues> ranges;
    try {
      ranges = session.profiler->stop_and_evaluate();
    } catch (const gpu::ProfilerError& error) {
      record(launch_record(launch, RowStatus::kError, error.what(), {}));
      return;
    }
    const CUresult result = cb->functionReturnValue != nullptr
                                ? *static_cast<const CUresult*>(cb->functionReturnValue)
                                : CUDA_SUCCESS;
    if (result != CUDA_SUCCESS) {
      record(
          launch_record(launch, RowStatus::kError, driver_.describe(cb->functionName, result), {}));
      return;
    }
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
        record(launch_record(row, RowStatus::kCountersUnavailable,
                             "no metric catalogue for chip " + session.chip + ": kernel time only",
                             counters));
        continue;
      }
      record(launch_record(row, RowStatus::kOk, message,
                           combine_metrics(session.chip, set, session.metrics, ranges[i].values)));
    }
  }

  std::unique_ptr<RecordFile> records_;
  ProfileOptions options_;
  const Driver& driver_;
  std::string process_;
  std::optional<std::regex> regex_;
  std::atomic<bool> active_{true};
  std::mutex launch_mutex_;  // held from a launch's entry to its exit callback
  std::mutex sessions_mutex_;
  std::unique_ptr<Session> session_;
  bool device_recorded_ = false;
  std::int64_t launches_ = 0;  // guarded by launch_mutex_
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
  g_injection = new Injection(std::move(records), options, *driver);
  for (CUpti_CallbackId id : kLaunchCallbacks)
    if (CUptiResult r = cuptiEnableCallback(1, subscriber, CUPTI_CB_DOMAIN_DRIVER_API, id);
        r != CUPTI_SUCCESS) {
      g_injection->fail(ProfileErrorKind::kInternal, cupti_error("cuptiEnableCallback", r));
      return false;
    }
  cuptiEnableCallback(1, subscriber, CUPTI_CB_DOMAIN_RESOURCE,
                      CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING);
  cuptiEnableDomain(1, subscriber, CUPTI_CB_DOMAIN_NVTX);  // without NVTX: no range names
  std::atexit(on_process_exit);
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
