// The injection library's entry: InitializeInjection, which the CUDA driver calls during cuInit
// (CUDA_INJECTION64_PATH), reads the options `profile` set in the environment, subscribes to
// CUPTI's callbacks and hands each to the process's Injection (injection.hpp); and the exit and
// fork handlers. Nothing escapes a callback: a failure becomes a record.
#include <cuda.h>
#include <cupti.h>
#include <dlfcn.h>
#include <pthread.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

#include "lib/inject/injection.hpp"
#include "lib/inject/kernel_activity.hpp"
#include "lib/inject/nvtx_ranges.hpp"

namespace roofline::inject {
namespace {

// Per thread: our own driver calls re-enter the callback.
thread_local bool t_inside = false;

Injection* g_injection = nullptr;  // never deleted: see the file comment

void CUPTIAPI on_callback(void*, CUpti_CallbackDomain domain, CUpti_CallbackId id,
                          const void* data) {
  if (g_injection == nullptr) return;
  // A module's cubin (--stalls), also when our own driver calls load it (a launch's module is
  // loaded inside its entry callback, before its flush and sampling).
  if (domain == CUPTI_CB_DOMAIN_RESOURCE && id == CUPTI_CBID_RESOURCE_MODULE_LOADED) {
    const auto* resource = static_cast<const CUpti_ResourceData*>(data);
    const auto* module = static_cast<const CUpti_ModuleResourceData*>(resource->resourceDescriptor);
    try {
      if (module != nullptr && module->pCubin != nullptr && module->cubinSize > 0)
        g_injection->on_module_loaded(module->pCubin, module->cubinSize);
    } catch (...) {
      // Out of memory for the copy: that module's PCs get no SASS or lines.
    }
    return;
  }
  if (t_inside) return;
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
        } else if (GraphCounter::takes_memory(id)) {
          if (cb->callbackSite == CUPTI_API_ENTER) g_injection->on_memory_call(cb);
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
  g_injection =
      new Injection(std::move(records), options, *driver, dir, no_activity, on_exit_read_batch);
  for (CUpti_CallbackId id : launch_callbacks())
    if (CUptiResult r = cuptiEnableCallback(1, subscriber, CUPTI_CB_DOMAIN_DRIVER_API, id);
        r != CUPTI_SUCCESS) {
      g_injection->fail(ProfileErrorKind::kInternal, cupti_error("cuptiEnableCallback", r));
      return false;
    }
  // Graph instantiation, changes to executable graphs and the program's allocations: for
  // --graph-nodes counted alone.
  if (options.graph_nodes == GraphNodes::kCounted) {
    for (CUpti_CallbackId id : GraphCounter::callbacks())
      cuptiEnableCallback(1, subscriber, CUPTI_CB_DOMAIN_DRIVER_API, id);
    for (CUpti_CallbackId id : GraphCounter::memory_callbacks())
      cuptiEnableCallback(1, subscriber, CUPTI_CB_DOMAIN_DRIVER_API, id);
  }
  for (CUpti_CallbackId id :
       {CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING, CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED,
        CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED, CUPTI_CBID_RESOURCE_GRAPHEXEC_CREATE_STARTING,
        CUPTI_CBID_RESOURCE_GRAPHEXEC_CREATED})
    cuptiEnableCallback(1, subscriber, CUPTI_CB_DOMAIN_RESOURCE, id);
  // --stalls: each module's cubin as it loads, for the sampled PCs' SASS and lines (without
  // it, the stall records say that their modules were not kept).
  if (options.stalls)
    cuptiEnableCallback(1, subscriber, CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_MODULE_LOADED);
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
