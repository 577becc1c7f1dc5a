#include "lib/gpu/cupti/call.hpp"

#include <cstring>

namespace roofline::gpu::cupti {
namespace {

const char* base_name(const char* path) {
  const char* slash = std::strrchr(path, '/');
  return slash != nullptr ? slash + 1 : path;
}

std::string trimmed(const char* text) {
  std::string s = text != nullptr ? text : "";
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ' || s.back() == '\r')) s.pop_back();
  return s;
}

ProfilerErrorKind kind_of(CUptiResult result) {
  switch (result) {
    case CUPTI_ERROR_INSUFFICIENT_PRIVILEGES:
    case CUPTI_ERROR_VIRTUALIZED_DEVICE_INSUFFICIENT_PRIVILEGES:
      return ProfilerErrorKind::kInsufficientPrivileges;
    case CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED:
    case CUPTI_ERROR_HARDWARE_BUSY:
    case CUPTI_ERROR_OLD_PROFILER_API_INITIALIZED:
      return ProfilerErrorKind::kMultipleSubscribers;
    case CUPTI_ERROR_NOT_SUPPORTED:
    case CUPTI_ERROR_INVALID_DEVICE:
    case CUPTI_ERROR_INVALID_CHIP_NAME:
    case CUPTI_ERROR_LEGACY_PROFILER_NOT_SUPPORTED:
    case CUPTI_ERROR_VIRTUALIZED_DEVICE_NOT_SUPPORTED:
    case CUPTI_ERROR_CONFIDENTIAL_COMPUTING_NOT_SUPPORTED:
    case CUPTI_ERROR_CMP_DEVICE_NOT_SUPPORTED:
    case CUPTI_ERROR_MIG_DEVICE_NOT_SUPPORTED:
    case CUPTI_ERROR_SLI_DEVICE_NOT_SUPPORTED:
    case CUPTI_ERROR_WSL_DEVICE_NOT_SUPPORTED:
      return ProfilerErrorKind::kUnsupportedDevice;
    case CUPTI_ERROR_INVALID_METRIC_NAME:
      return ProfilerErrorKind::kUnknownMetric;
    default:
      return ProfilerErrorKind::kOther;
  }
}

constexpr const char* kSubscribersFix =
    "another profiler (Nsight Compute, Nsight Systems, cuda-gdb or a second CUPTI client) "
    "already holds the GPU's counters. Under ncu or nsys, run with --no-counters.";

}  // namespace

const char* const kPrivilegesFix =
    "GPU performance counters are restricted to administrators on this system. Allow "
    "access as described at https://developer.nvidia.com/ERR_NVGPUCTRPERM (driver option "
    "NVreg_RestrictProfilingToAdminUsers=0, or run with CAP_SYS_ADMIN), or run with "
    "--no-counters; timing and the model still work.";

std::string fix_for(ProfilerErrorKind kind) {
  switch (kind) {
    case ProfilerErrorKind::kInsufficientPrivileges:
      return kPrivilegesFix;
    case ProfilerErrorKind::kMultipleSubscribers:
      return kSubscribersFix;
    case ProfilerErrorKind::kUnsupportedDevice:
      return "this GPU or its configuration (MIG, vGPU, SLI, WSL, confidential computing, "
             "compute capability below 7.5) has no counter access through CUPTI; run with "
             "--no-counters.";
    default:
      return "";
  }
}

void throw_cupti(CUptiResult result, const char* call, const char* file, int line) {
  const char* name = nullptr;
  const char* text = nullptr;
  if (cuptiGetResultString(result, &name) != CUPTI_SUCCESS) name = nullptr;
  if (cuptiGetErrorMessage(result, &text) != CUPTI_SUCCESS) text = nullptr;
  const ProfilerErrorKind kind = kind_of(result);
  std::string message = std::string(call) + " failed at " + base_name(file) + ":" +
                        std::to_string(line) + ": " +
                        (name != nullptr ? trimmed(name) : "CUPTI error") + " (" +
                        std::to_string(static_cast<int>(result)) + ")";
  const std::string detail = trimmed(text);
  if (!detail.empty() && detail != trimmed(name)) message += ": " + detail;
  const std::string fix = fix_for(kind);
  if (!fix.empty()) message += ". " + fix;
  throw ProfilerError(kind, message);
}

void throw_cuda(cudaError_t error, const char* call, const char* file, int line) {
  cudaGetLastError();  // reset the runtime's last error; the exception carries it
  const bool no_device = error == cudaErrorNoDevice || error == cudaErrorInsufficientDriver ||
                         error == cudaErrorInvalidDevice;
  throw ProfilerError(no_device ? ProfilerErrorKind::kNoDevice : ProfilerErrorKind::kOther,
                      std::string(call) + " failed at " + base_name(file) + ":" +
                          std::to_string(line) + ": " + cudaGetErrorName(error) + ": " +
                          cudaGetErrorString(error));
}

std::vector<const char*> c_strings(const std::vector<std::string>& names) {
  std::vector<const char*> out;
  out.reserve(names.size());
  for (const auto& name : names) out.push_back(name.c_str());
  return out;
}

void moved_from(const char* what) {
  throw ProfilerError(ProfilerErrorKind::kOther,
                      std::string(what) + " used after being moved from");
}

}  // namespace roofline::gpu::cupti
