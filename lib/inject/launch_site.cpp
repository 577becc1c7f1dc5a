#include "lib/inject/launch_site.hpp"

namespace roofline::inject {
namespace {

// `d`: a launch's dimensions, dynamic shared memory and stream, as the parameters of a
// cuLaunchKernel-like call or a CUlaunchConfig name them.
template <class Dims>
LaunchSite site_of(CUfunction function, const Dims& d) {
  LaunchSite s;
  s.function = function;
  s.grid = {int(d.gridDimX), int(d.gridDimY), int(d.gridDimZ)};
  s.block = {int(d.blockDimX), int(d.blockDimY), int(d.blockDimZ)};
  s.dynamic_shared = d.sharedMemBytes;
  s.stream = d.hStream;
  return s;
}

template <class Params>
LaunchSite kernel_site(const void* params) {
  const Params& p = *static_cast<const Params*>(params);
  return site_of(p.f, p);
}

template <class Params>
LaunchSite kernel_ex_site(const void* params) {
  const Params& p = *static_cast<const Params*>(params);
  return site_of(p.f, *p.config);
}

template <class Params>
LaunchSite graph_site(const void* params) {
  const Params& p = *static_cast<const Params*>(params);
  LaunchSite s;
  s.stream = p.hStream;
  s.graph = true;
  // The executable graph: hGraph in cuGraphLaunch's parameters, hGraphExec in the _ptsz ones.
  if constexpr (requires { p.hGraphExec; })
    s.graph_exec = p.hGraphExec;
  else
    s.graph_exec = p.hGraph;
  return s;
}

// A launch callback and how its site is read from its parameters.
struct LaunchCallback {
  CUpti_CallbackId id;
  LaunchSite (*site)(const void* params);
};

constexpr LaunchCallback kCallbacks[] = {
    {CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, kernel_site<cuLaunchKernel_params>},
    {CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz, kernel_site<cuLaunchKernel_ptsz_params>},
    {CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel,
     kernel_site<cuLaunchCooperativeKernel_params>},
    {CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz,
     kernel_site<cuLaunchCooperativeKernel_ptsz_params>},
    {CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx, kernel_ex_site<cuLaunchKernelEx_params>},
    {CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz, kernel_ex_site<cuLaunchKernelEx_ptsz_params>},
    {CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch, graph_site<cuGraphLaunch_params>},
    {CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch_ptsz, graph_site<cuGraphLaunch_ptsz_params>},
};

}  // namespace

std::optional<LaunchSite> launch_site(CUpti_CallbackId id, const void* params) {
  for (const LaunchCallback& callback : kCallbacks)
    if (callback.id == id) return callback.site(params);
  return std::nullopt;
}

std::vector<CUpti_CallbackId> launch_callbacks() {
  std::vector<CUpti_CallbackId> ids;
  for (const LaunchCallback& callback : kCallbacks) ids.push_back(callback.id);
  return ids;
}

// The runtime of CUDA 12 and later launches context-independent kernels (CUkernel, passed as
// the CUfunction of cuLaunchKernel), which cuFuncGetAttribute refuses: those are asked as
// kernels, for the current context's device.
int function_attribute(const Driver& driver, CUfunction function, CUfunction_attribute attribute) {
  int value = 0;
  if (driver.func_get_attribute(&value, attribute, function) == CUDA_SUCCESS) return value;
  CUdevice device = 0;
  if (driver.ctx_get_device(&device) == CUDA_SUCCESS &&
      driver.kernel_get_attribute(&value, attribute, reinterpret_cast<CUkernel>(function),
                                  device) == CUDA_SUCCESS)
    return value;
  return 0;
}

void load_function(const Driver& driver, CUfunction function) {
  if (driver.func_load == nullptr || function == nullptr) return;
  if (driver.func_load(function) == CUDA_SUCCESS) return;
  // A context-independent kernel (CUkernel): its function in the current context.
  CUfunction in_context = nullptr;
  if (driver.kernel_get_function != nullptr &&
      driver.kernel_get_function(&in_context, reinterpret_cast<CUkernel>(function)) ==
          CUDA_SUCCESS &&
      in_context != nullptr)
    driver.func_load(in_context);
}

DeviceInfo device_info(const Driver& driver, CUdevice device, const std::string& chip) {
  DeviceInfo info;
  char name[256] = {};
  if (driver.device_get_name(name, sizeof name, device) == CUDA_SUCCESS) info.name = name;
  info.chip = chip;
  int major = 0, minor = 0, sms = 0, l2 = 0, version = 0;
  driver.device_get_attribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, device);
  driver.device_get_attribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, device);
  driver.device_get_attribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, device);
  driver.device_get_attribute(&l2, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, device);
  info.compute_capability = std::to_string(major) + "." + std::to_string(minor);
  info.sm_count = sms;
  info.l2_cache_bytes = l2;
  size_t memory = 0;
  if (driver.device_total_mem(&memory, device) == CUDA_SUCCESS)
    info.memory_bytes = static_cast<std::int64_t>(memory);
  if (driver.driver_get_version(&version) == CUDA_SUCCESS)
    info.driver_version =
        "CUDA " + std::to_string(version / 1000) + "." + std::to_string(version % 1000 / 10);
  return info;
}

}  // namespace roofline::inject
