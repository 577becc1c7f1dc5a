// The CUDA driver functions the injection library calls, looked up in the libcuda that loaded
// it (dlopen with RTLD_NOLOAD), so that the library has no link dependency on libcuda: it can
// be loaded into a process on a machine without a driver and fail there with a message.
#pragma once

#include <cuda.h>

#include <string>

namespace roofline::inject {

struct Driver {
  CUresult (*ctx_get_device)(CUdevice*) = nullptr;
  CUresult (*ctx_push_current)(CUcontext) = nullptr;
  CUresult (*ctx_pop_current)(CUcontext*) = nullptr;
  CUresult (*device_get_name)(char*, int, CUdevice) = nullptr;
  CUresult (*device_get_pci_bus_id)(char*, int, CUdevice) = nullptr;
  CUresult (*device_get_attribute)(int*, CUdevice_attribute, CUdevice) = nullptr;
  CUresult (*device_total_mem)(size_t*, CUdevice) = nullptr;
  CUresult (*driver_get_version)(int*) = nullptr;
  CUresult (*func_get_attribute)(int*, CUfunction_attribute, CUfunction) = nullptr;
  CUresult (*func_set_attribute)(CUfunction, CUfunction_attribute, int) = nullptr;
  CUresult (*kernel_get_attribute)(int*, CUfunction_attribute, CUkernel, CUdevice) = nullptr;
  CUresult (*module_load_data)(CUmodule*, const void*) = nullptr;
  CUresult (*module_unload)(CUmodule) = nullptr;
  CUresult (*module_get_function)(CUfunction*, CUmodule, const char*) = nullptr;
  CUresult (*launch_kernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                            unsigned, CUstream, void**, void**) = nullptr;
  CUresult (*mem_alloc)(CUdeviceptr*, size_t) = nullptr;
  CUresult (*mem_free)(CUdeviceptr) = nullptr;
  CUresult (*memset_d32)(CUdeviceptr, unsigned, size_t) = nullptr;
  CUresult (*stream_synchronize)(CUstream) = nullptr;
  CUresult (*ctx_synchronize)() = nullptr;
  CUresult (*stream_is_capturing)(CUstream, CUstreamCaptureStatus*) = nullptr;
  CUresult (*stream_get_id)(CUstream, unsigned long long*) = nullptr;
  CUresult (*event_create)(CUevent*, unsigned) = nullptr;
  CUresult (*event_record)(CUevent, CUstream) = nullptr;
  CUresult (*event_synchronize)(CUevent) = nullptr;
  CUresult (*event_query)(CUevent) = nullptr;
  CUresult (*event_elapsed_time)(float*, CUevent, CUevent) = nullptr;
  CUresult (*event_destroy)(CUevent) = nullptr;
  CUresult (*get_error_string)(CUresult, const char**) = nullptr;
  // Optional (CUDA 12.4 and later; nullptr on older drivers): load a function's module now,
  // not lazily inside the first launch.
  CUresult (*func_load)(CUfunction) = nullptr;
  CUresult (*kernel_get_function)(CUfunction*, CUkernel) = nullptr;
  // Optional: what replaying a graph's nodes one by one needs (node_replay.hpp); a driver
  // without one leaves graph nodes timed, not counted.
  CUresult (*graph_get_nodes)(CUgraph, CUgraphNode*, size_t*) = nullptr;
  // cuGraphGetEdges_v2: the v1 call refuses graphs whose edges carry data (programmatic
  // dependent launches: CUDA_ERROR_LOSSY_QUERY).
  CUresult (*graph_get_edges)(CUgraph, CUgraphNode*, CUgraphNode*, CUgraphEdgeData*,
                              size_t*) = nullptr;
  CUresult (*graph_node_get_type)(CUgraphNode, CUgraphNodeType*) = nullptr;
  CUresult (*graph_kernel_node_get_params)(CUgraphNode, CUDA_KERNEL_NODE_PARAMS_v2*) = nullptr;
  CUresult (*graph_kernel_node_get_attribute)(CUgraphNode, CUkernelNodeAttrID,
                                              CUkernelNodeAttrValue*) = nullptr;
  CUresult (*graph_memcpy_node_get_params)(CUgraphNode, CUDA_MEMCPY3D*) = nullptr;
  CUresult (*graph_memset_node_get_params)(CUgraphNode, CUDA_MEMSET_NODE_PARAMS*) = nullptr;
  CUresult (*func_get_param_info)(CUfunction, size_t, size_t*, size_t*) = nullptr;
  CUresult (*launch_kernel_ex)(const CUlaunchConfig*, CUfunction, void**, void**) = nullptr;
  CUresult (*memcpy_3d_async)(const CUDA_MEMCPY3D*, CUstream) = nullptr;
  CUresult (*memset_d2d8_async)(CUdeviceptr, size_t, unsigned char, size_t, size_t,
                                CUstream) = nullptr;
  CUresult (*memset_d2d16_async)(CUdeviceptr, size_t, unsigned short, size_t, size_t,
                                 CUstream) = nullptr;
  CUresult (*memset_d2d32_async)(CUdeviceptr, size_t, unsigned, size_t, size_t, CUstream) = nullptr;

  // "cuMemAlloc failed: CUDA_ERROR_OUT_OF_MEMORY (2)"
  std::string describe(const char* call, CUresult result) const;
};

// The driver already loaded in this process, or nullptr with `why` filled: no libcuda loaded
// (the library was not loaded by the CUDA driver) or a function missing (driver too old).
const Driver* loaded_driver(std::string* why);

}  // namespace roofline::inject
