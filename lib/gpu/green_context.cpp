#include "lib/gpu/green_context.hpp"

#include <string>

#include <cuda_runtime_api.h>

#include "lib/core/base/errors.hpp"
#include "lib/gpu/cuda_check.hpp"

namespace roofline::gpu {
namespace {

// A driver function through the runtime's entry-point query (this library links the CUDA
// runtime only). Throws GpuUnavailableError where the driver does not have it.
template <typename Fn>
Fn driver(const char* symbol, int version) {
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult status{};
  if (cudaGetDriverEntryPointByVersion(symbol, &fn, version, cudaEnableDefault, &status) !=
          cudaSuccess ||
      status != cudaDriverEntryPointSuccess || fn == nullptr)
    throw GpuUnavailableError(std::string("--sms: the CUDA driver has no ") + symbol +
                              " (green contexts need a CUDA 12.4 driver or newer)");
  return reinterpret_cast<Fn>(fn);
}

// Throws GpuUnavailableError naming the call and the driver's own message.
void check(CUresult status, const char* call) {
  if (status == CUDA_SUCCESS) return;
  const char* text = nullptr;
  if (driver<CUresult (*)(CUresult, const char**)>("cuGetErrorString", 6000)(status, &text) !=
          CUDA_SUCCESS ||
      text == nullptr)
    text = "unknown error";
  throw GpuUnavailableError(std::string("--sms: ") + call + " failed: " + text + " (" +
                            std::to_string(static_cast<int>(status)) + ")");
}

constexpr int kGreenContexts = 12040;  // the driver API version that has them

}  // namespace

void GreenContext::Destroy::operator()(CUgreenCtx_st* context) const {
  // Never throws: the driver may be gone at exit; a failure leaks the context, nothing more.
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult status{};
  if (cudaGetDriverEntryPointByVersion("cuGreenCtxDestroy", &fn, kGreenContexts, cudaEnableDefault,
                                       &status) == cudaSuccess &&
      status == cudaDriverEntryPointSuccess && fn != nullptr)
    reinterpret_cast<CUresult (*)(CUgreenCtx)>(fn)(context);
}

GreenContext::GreenContext(int ordinal, int sms) : requested_(sms) {
  if (sms < 1) throw InputError("--sms must be at least 1 (got " + std::to_string(sms) + ")");
  // The primary context first: the green context retains it, and it is cheaper made once.
  ROOFLINE_CUDA_CALL(cudaSetDevice(ordinal));
  ROOFLINE_CUDA_CALL(cudaFree(nullptr));
  const auto device_get = driver<CUresult (*)(CUdevice*, int)>("cuDeviceGet", 2000);
  const auto get_resource = driver<CUresult (*)(CUdevice, CUdevResource*, CUdevResourceType)>(
      "cuDeviceGetDevResource", kGreenContexts);
  const auto split =
      driver<CUresult (*)(CUdevResource*, unsigned*, const CUdevResource*, CUdevResource*, unsigned,
                          unsigned)>("cuDevSmResourceSplitByCount", kGreenContexts);
  const auto describe = driver<CUresult (*)(CUdevResourceDesc*, CUdevResource*, unsigned)>(
      "cuDevResourceGenerateDesc", kGreenContexts);
  const auto create = driver<CUresult (*)(CUgreenCtx*, CUdevResourceDesc, CUdevice, unsigned)>(
      "cuGreenCtxCreate", kGreenContexts);
  const auto get_green_resource =
      driver<CUresult (*)(CUgreenCtx, CUdevResource*, CUdevResourceType)>(
          "cuGreenCtxGetDevResource", kGreenContexts);
  const auto to_context =
      driver<CUresult (*)(CUcontext*, CUgreenCtx)>("cuCtxFromGreenCtx", kGreenContexts);
  const auto get_current = driver<CUresult (*)(CUcontext*)>("cuCtxGetCurrent", 4000);
  const auto set_current = driver<CUresult (*)(CUcontext)>("cuCtxSetCurrent", 4000);

  CUdevice device = 0;
  check(device_get(&device, ordinal), "cuDeviceGet");
  CUdevResource all{};
  check(get_resource(device, &all, CU_DEV_RESOURCE_TYPE_SM), "cuDeviceGetDevResource");
  device_sms_ = static_cast<int>(all.sm.smCount);
  granularity_ = static_cast<int>(all.sm.smCoscheduledAlignment);
  if (sms > device_sms_)
    throw InputError("--sms " + std::to_string(sms) + ": the GPU has " +
                     std::to_string(device_sms_) + " SMs");
  // One group of at least `sms` SMs; the rest of the device is left out. A count the driver
  // rounds past the device's SMs makes no group: the whole device then.
  CUdevResource part{};
  CUdevResource rest{};
  unsigned groups = 1;
  CUdevResource* chosen = &all;
  if (sms < device_sms_ &&
      split(&part, &groups, &all, &rest, 0, static_cast<unsigned>(sms)) == CUDA_SUCCESS &&
      groups == 1)
    chosen = &part;
  CUdevResourceDesc desc = nullptr;
  check(describe(&desc, chosen, 1), "cuDevResourceGenerateDesc");
  CUgreenCtx green = nullptr;
  check(create(&green, desc, device, CU_GREEN_CTX_DEFAULT_STREAM), "cuGreenCtxCreate");
  green_.reset(green);
  CUdevResource obtained{};
  check(get_green_resource(green, &obtained, CU_DEV_RESOURCE_TYPE_SM), "cuGreenCtxGetDevResource");
  sm_count_ = static_cast<int>(obtained.sm.smCount);
  CUcontext context = nullptr;
  check(to_context(&context, green), "cuCtxFromGreenCtx");
  check(get_current(&previous_), "cuCtxGetCurrent");
  check(set_current(context), "cuCtxSetCurrent");
}

GreenContext::~GreenContext() {
  // The previous context back before the green one goes (what was made in it is gone by now:
  // its owners were made after this object, so they ended before it).
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult status{};
  if (cudaGetDriverEntryPointByVersion("cuCtxSetCurrent", &fn, 4000, cudaEnableDefault, &status) ==
          cudaSuccess &&
      status == cudaDriverEntryPointSuccess && fn != nullptr)
    reinterpret_cast<CUresult (*)(CUcontext)>(fn)(previous_);
}

std::string GreenContext::description() const {
  std::string text = "a green context of " + std::to_string(sm_count_) + " of the device's " +
                     std::to_string(device_sms_) + " SMs";
  if (sm_count_ != requested_)
    text += " (asked " + std::to_string(requested_) +
            "; the driver's granularity: " + std::to_string(granularity_) + ")";
  return text;
}

}  // namespace roofline::gpu
