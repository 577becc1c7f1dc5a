#include "lib/inject/driver.hpp"

#include <dlfcn.h>

namespace roofline::inject {
namespace {

template <class Fn>
bool resolve(void* library, const char* symbol, Fn* out, std::string* missing) {
  *out = reinterpret_cast<Fn>(dlsym(library, symbol));
  if (*out == nullptr && missing->empty()) *missing = symbol;
  return *out != nullptr;
}

}  // namespace

std::string Driver::describe(const char* call, CUresult result) const {
  const char* text = nullptr;
  if (get_error_string == nullptr || get_error_string(result, &text) != CUDA_SUCCESS) text = "";
  return std::string(call) + " failed: " + (text != nullptr ? text : "") + " (" +
         std::to_string(static_cast<int>(result)) + ")";
}

const Driver* loaded_driver(std::string* why) {
  static const Driver* driver = nullptr;
  static std::string reason;
  static bool tried = false;
  if (tried) {
    if (driver == nullptr) *why = reason;
    return driver;
  }
  tried = true;
  void* library = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  if (library == nullptr) {
    reason = "the CUDA driver (libcuda.so.1) is not loaded in this process: no usable GPU";
    *why = reason;
    return nullptr;
  }
  static Driver d;
  std::string missing;
  resolve(library, "cuCtxGetDevice", &d.ctx_get_device, &missing);
  resolve(library, "cuCtxPushCurrent_v2", &d.ctx_push_current, &missing);
  resolve(library, "cuCtxPopCurrent_v2", &d.ctx_pop_current, &missing);
  resolve(library, "cuDeviceGetName", &d.device_get_name, &missing);
  resolve(library, "cuDeviceGetPCIBusId", &d.device_get_pci_bus_id, &missing);
  resolve(library, "cuDeviceGetAttribute", &d.device_get_attribute, &missing);
  resolve(library, "cuDeviceTotalMem_v2", &d.device_total_mem, &missing);
  resolve(library, "cuDriverGetVersion", &d.driver_get_version, &missing);
  resolve(library, "cuFuncGetAttribute", &d.func_get_attribute, &missing);
  resolve(library, "cuFuncSetAttribute", &d.func_set_attribute, &missing);
  resolve(library, "cuKernelGetAttribute", &d.kernel_get_attribute, &missing);
  resolve(library, "cuModuleLoadData", &d.module_load_data, &missing);
  resolve(library, "cuModuleUnload", &d.module_unload, &missing);
  resolve(library, "cuModuleGetFunction", &d.module_get_function, &missing);
  resolve(library, "cuLaunchKernel", &d.launch_kernel, &missing);
  resolve(library, "cuMemAlloc_v2", &d.mem_alloc, &missing);
  resolve(library, "cuMemFree_v2", &d.mem_free, &missing);
  resolve(library, "cuMemsetD32_v2", &d.memset_d32, &missing);
  resolve(library, "cuStreamSynchronize", &d.stream_synchronize, &missing);
  resolve(library, "cuCtxSynchronize", &d.ctx_synchronize, &missing);
  resolve(library, "cuStreamIsCapturing", &d.stream_is_capturing, &missing);
  resolve(library, "cuStreamGetId", &d.stream_get_id, &missing);
  resolve(library, "cuEventCreate", &d.event_create, &missing);
  resolve(library, "cuEventRecord", &d.event_record, &missing);
  resolve(library, "cuEventSynchronize", &d.event_synchronize, &missing);
  resolve(library, "cuEventQuery", &d.event_query, &missing);
  resolve(library, "cuEventElapsedTime", &d.event_elapsed_time, &missing);  // the CUDA 12 ABI
  resolve(library, "cuEventDestroy_v2", &d.event_destroy, &missing);
  resolve(library, "cuGetErrorString", &d.get_error_string, &missing);
  std::string optional;  // absent on drivers older than CUDA 12.4: lazy loading stays lazy
  resolve(library, "cuFuncLoad", &d.func_load, &optional);
  resolve(library, "cuKernelGetFunction", &d.kernel_get_function, &optional);
  resolve(library, "cuGraphGetNodes", &d.graph_get_nodes, &optional);
  resolve(library, "cuGraphGetEdges_v2", &d.graph_get_edges, &optional);
  resolve(library, "cuGraphNodeGetType", &d.graph_node_get_type, &optional);
  resolve(library, "cuGraphKernelNodeGetParams_v2", &d.graph_kernel_node_get_params, &optional);
  resolve(library, "cuGraphKernelNodeGetAttribute", &d.graph_kernel_node_get_attribute, &optional);
  resolve(library, "cuGraphMemcpyNodeGetParams", &d.graph_memcpy_node_get_params, &optional);
  resolve(library, "cuGraphMemsetNodeGetParams", &d.graph_memset_node_get_params, &optional);
  resolve(library, "cuFuncGetParamInfo", &d.func_get_param_info, &optional);
  resolve(library, "cuLaunchKernelEx", &d.launch_kernel_ex, &optional);
  resolve(library, "cuMemcpy3DAsync_v2", &d.memcpy_3d_async, &optional);
  resolve(library, "cuMemsetD2D8Async", &d.memset_d2d8_async, &optional);
  resolve(library, "cuMemsetD2D16Async", &d.memset_d2d16_async, &optional);
  resolve(library, "cuMemsetD2D32Async", &d.memset_d2d32_async, &optional);
  if (!missing.empty()) {
    reason =
        "the loaded CUDA driver has no " + missing + ": a driver for CUDA 12 or newer is needed";
    *why = reason;
    return nullptr;
  }
  driver = &d;
  return driver;
}

}  // namespace roofline::inject
