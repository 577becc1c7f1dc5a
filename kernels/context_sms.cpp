#include "kernels/context_sms.hpp"

#include <cuda.h>

namespace roofline::kernels {
namespace {

// The driver's functions through the runtime's entry-point query: this library links the CUDA
// runtime only. Null where the driver does not have them.
struct DriverCalls {
  CUresult (*get_current)(CUcontext*) = nullptr;
  CUresult (*get_resource)(CUcontext, CUdevResource*, CUdevResourceType) = nullptr;
};

template <typename Fn>
void find(const char* symbol, int version, Fn& out) {
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult status{};
  if (cudaGetDriverEntryPointByVersion(symbol, &fn, version, cudaEnableDefault, &status) ==
          cudaSuccess &&
      status == cudaDriverEntryPointSuccess)
    out = reinterpret_cast<Fn>(fn);
}

const DriverCalls& driver() {
  static const DriverCalls calls = [] {
    DriverCalls c;
    find("cuCtxGetCurrent", 4000, c.get_current);
    find("cuCtxGetDevResource", 12040, c.get_resource);
    return c;
  }();
  return calls;
}

cudaError_t device_sms(int* sms) {
  int device = 0;
  const cudaError_t status = cudaGetDevice(&device);
  if (status != cudaSuccess) return status;
  return cudaDeviceGetAttribute(sms, cudaDevAttrMultiProcessorCount, device);
}

}  // namespace

cudaError_t current_context_sms(int* sms) {
  const DriverCalls& d = driver();
  CUcontext context = nullptr;
  if (d.get_current == nullptr || d.get_resource == nullptr ||
      d.get_current(&context) != CUDA_SUCCESS || context == nullptr)
    return device_sms(sms);
  CUdevResource resource{};
  if (d.get_resource(context, &resource, CU_DEV_RESOURCE_TYPE_SM) != CUDA_SUCCESS ||
      resource.type != CU_DEV_RESOURCE_TYPE_SM || resource.sm.smCount == 0)
    return device_sms(sms);
  *sms = static_cast<int>(resource.sm.smCount);
  return cudaSuccess;
}

}  // namespace roofline::kernels
