// CUPTI Range Profiler (CUDA 13: cupti_range_profiler.h + cupti_profiler_host.h) behind
// MetricHost and RangeProfiler. The only file of the project that includes a CUPTI header.
//
// Things learnt on CUDA 13.0's CUPTI that shape this file (see also shared/measurement.md):
//   - A host object that once rejected a metric in cuptiProfilerHostConfigAddMetrics stays
//     broken: every later add fails and its config has 0 passes. So every name is checked on a
//     fresh scratch host object (about 3 ms each after the first), and each config image is
//     built on a fresh host object.
//   - cuptiProfilerHostGetMetricProperties accepts names a config refuses (a counter without
//     its rollup, "dram__bytes_read"), so has_metric asks ConfigAddMetrics, which is the truth.
//   - The host calls need no GPU and no driver. cuptiProfilerInitialize fails without a driver
//     and cuptiDeviceGetChipName then crashes, so the runtime API is asked for a device first.
//   - The evaluation calls crash on malformed counter-data images, so an image from a file is
//     checked against the header layout before CUPTI sees it (validate_counter_data).
//   - cuptiRangeProfilerCounterDataGetRangeInfo hangs without a GPU; range names come from
//     cuptiProfilerHostGetRangeName, which works offline.
//   - Without libcuda linked, the current CUcontext comes from the runtime's driver entry
//     points, so binaries built with this file still start on machines without a driver.
#include "lib/gpu/range_profiler.hpp"

#include <cuda.h>
#include <cuda_runtime_api.h>
#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <cupti_range_profiler.h>
#include <cupti_result.h>
#include <cupti_target.h>
#include <cupti_version.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace roofline::gpu {
namespace {

// ---------------------------------------------------------------------------------------------
// Status codes at the boundary: ROOFLINE_CUPTI_CALL (and ROOFLINE_PROFILER_CUDA_CALL for the
// runtime calls made here) turn a failed call into a ProfilerError carrying the call text,
// file:line, the API's own message and, for the expected limitations, the fix. Unlike
// cuda_check.hpp's CudaError, a runtime failure here is a ProfilerError (kNoDevice when the
// driver or device is missing), so callers handle every counter problem in one place.

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

constexpr const char* kPrivilegesFix =
    "GPU performance counters are restricted to administrators on this system. Allow "
    "access as described at https://developer.nvidia.com/ERR_NVGPUCTRPERM (driver option "
    "NVreg_RestrictProfilingToAdminUsers=0, or run with CAP_SYS_ADMIN), or run with "
    "--no-counters; timing and the model still work.";
constexpr const char* kSubscribersFix =
    "another profiler (Nsight Compute, Nsight Systems, cuda-gdb or a second CUPTI client) "
    "already holds the GPU's counters. Under ncu or nsys, run with --no-counters.";

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

[[noreturn]] void throw_cupti(CUptiResult result, const char* call, const char* file, int line) {
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

void check_cupti(CUptiResult result, const char* call, const char* file, int line) {
  if (result != CUPTI_SUCCESS) throw_cupti(result, call, file, line);
}

[[noreturn]] void throw_cuda(cudaError_t error, const char* call, const char* file, int line) {
  cudaGetLastError();  // reset the runtime's last error; the exception carries it
  const bool no_device = error == cudaErrorNoDevice || error == cudaErrorInsufficientDriver ||
                         error == cudaErrorInvalidDevice;
  throw ProfilerError(no_device ? ProfilerErrorKind::kNoDevice : ProfilerErrorKind::kOther,
                      std::string(call) + " failed at " + base_name(file) + ":" +
                          std::to_string(line) + ": " + cudaGetErrorName(error) + ": " +
                          cudaGetErrorString(error));
}

void check_cuda(cudaError_t error, const char* call, const char* file, int line) {
  if (error != cudaSuccess) throw_cuda(error, call, file, line);
}

#define ROOFLINE_CUPTI_CALL(call) check_cupti((call), #call, __FILE__, __LINE__)
#define ROOFLINE_PROFILER_CUDA_CALL(call) check_cuda((call), #call, __FILE__, __LINE__)

// A CUPTI parameter struct: zeroed, with its structSize set.
template <class Params>
Params make_params(std::size_t struct_size) {
  Params params{};
  params.structSize = struct_size;
  return params;
}

// ---------------------------------------------------------------------------------------------
// Host half helpers.

// Move-only owner of a CUpti_Profiler_Host_Object for one chip.
class HostObject {
 public:
  HostObject(const std::string& chip, const std::vector<std::uint8_t>* counter_availability) {
    auto params = make_params<CUpti_Profiler_Host_Initialize_Params>(
        CUpti_Profiler_Host_Initialize_Params_STRUCT_SIZE);
    params.profilerType = CUPTI_PROFILER_TYPE_RANGE_PROFILER;
    params.pChipName = chip.c_str();
    params.pCounterAvailabilityImage =
        counter_availability != nullptr && !counter_availability->empty()
            ? counter_availability->data()
            : nullptr;
    ROOFLINE_CUPTI_CALL(cuptiProfilerHostInitialize(&params));
    object_ = params.pHostObject;
  }
  ~HostObject() {
    if (object_ == nullptr) return;
    auto params = make_params<CUpti_Profiler_Host_Deinitialize_Params>(
        CUpti_Profiler_Host_Deinitialize_Params_STRUCT_SIZE);
    params.pHostObject = object_;
    cuptiProfilerHostDeinitialize(&params);  // nothing to do about a failure here
  }
  HostObject(HostObject&& other) noexcept : object_(std::exchange(other.object_, nullptr)) {}
  HostObject& operator=(HostObject&&) = delete;
  HostObject(const HostObject&) = delete;
  HostObject& operator=(const HostObject&) = delete;

  CUpti_Profiler_Host_Object* get() const { return object_; }

 private:
  CUpti_Profiler_Host_Object* object_ = nullptr;
};

std::vector<std::string> supported_chip_list() {
  auto params = make_params<CUpti_Profiler_Host_GetSupportedChips_Params>(
      CUpti_Profiler_Host_GetSupportedChips_Params_STRUCT_SIZE);
  ROOFLINE_CUPTI_CALL(cuptiProfilerHostGetSupportedChips(&params));
  std::vector<std::string> chips;
  chips.reserve(params.numChips);
  for (std::size_t i = 0; i < params.numChips; ++i) chips.emplace_back(params.ppChipNames[i]);
  return chips;
}

std::string joined(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& item : items) out += (out.empty() ? "" : ", ") + item;
  return out;
}

void require_supported_chip(const std::string& chip) {
  const auto chips = supported_chip_list();
  for (const auto& known : chips) {
    if (known == chip) return;
  }
  throw ProfilerError(ProfilerErrorKind::kUnsupportedDevice,
                      "chip '" + chip + "' is not supported by this CUPTI (" +
                          std::to_string(CUPTI_API_VERSION) +
                          "); supported chips: " + joined(chips));
}

// True when a config on `chip` accepts `metric`. A fresh host object per name: one rejected
// name would poison a shared one.
bool metric_accepted(const std::string& chip, const std::string& metric) {
  if (metric.empty()) return false;
  HostObject scratch(chip, nullptr);
  auto params = make_params<CUpti_Profiler_Host_ConfigAddMetrics_Params>(
      CUpti_Profiler_Host_ConfigAddMetrics_Params_STRUCT_SIZE);
  const char* name = metric.c_str();
  params.pHostObject = scratch.get();
  params.ppMetricNames = &name;
  params.numMetrics = 1;
  return cuptiProfilerHostConfigAddMetrics(&params) == CUPTI_SUCCESS;
}

void require_metrics(const std::string& chip, const std::vector<std::string>& metrics) {
  if (metrics.empty()) {
    throw ProfilerError(ProfilerErrorKind::kUnknownMetric, "no metrics given");
  }
  for (const auto& metric : metrics) {
    if (!metric_accepted(chip, metric)) {
      throw ProfilerError(ProfilerErrorKind::kUnknownMetric,
                          "metric '" + metric + "' does not exist on chip " + chip +
                              " (or the range profiler cannot collect it; a counter needs "
                              "its rollup, e.g. '.sum')");
    }
  }
}

std::vector<const char*> c_strings(const std::vector<std::string>& names) {
  std::vector<const char*> out;
  out.reserve(names.size());
  for (const auto& name : names) out.push_back(name.c_str());
  return out;
}

// Config image for `metrics` on `host`, a fresh host object of `chip`. The names are checked
// one by one only when CUPTI refuses the set, to name the culprit (about 4 ms a name).
std::vector<std::uint8_t> build_config(const HostObject& host, const std::string& chip,
                                       const std::vector<std::string>& metrics) {
  if (metrics.empty()) require_metrics(chip, metrics);
  auto names = c_strings(metrics);
  auto add = make_params<CUpti_Profiler_Host_ConfigAddMetrics_Params>(
      CUpti_Profiler_Host_ConfigAddMetrics_Params_STRUCT_SIZE);
  add.pHostObject = host.get();
  add.ppMetricNames = names.data();
  add.numMetrics = names.size();
  if (cuptiProfilerHostConfigAddMetrics(&add) != CUPTI_SUCCESS) {
    require_metrics(chip, metrics);
    ROOFLINE_CUPTI_CALL(cuptiProfilerHostConfigAddMetrics(&add));  // reports CUPTI's reason
  }

  auto size = make_params<CUpti_Profiler_Host_GetConfigImageSize_Params>(
      CUpti_Profiler_Host_GetConfigImageSize_Params_STRUCT_SIZE);
  size.pHostObject = host.get();
  ROOFLINE_CUPTI_CALL(cuptiProfilerHostGetConfigImageSize(&size));

  std::vector<std::uint8_t> image(size.configImageSize);
  auto get = make_params<CUpti_Profiler_Host_GetConfigImage_Params>(
      CUpti_Profiler_Host_GetConfigImage_Params_STRUCT_SIZE);
  get.pHostObject = host.get();
  get.configImageSize = image.size();
  get.pConfigImage = image.data();
  ROOFLINE_CUPTI_CALL(cuptiProfilerHostGetConfigImage(&get));
  return image;
}

int passes_of(const std::vector<std::uint8_t>& config_image) {
  if (config_image.empty()) {
    throw ProfilerError(ProfilerErrorKind::kOther, "num_passes: empty config image");
  }
  std::vector<std::uint8_t> copy = config_image;  // the API takes a non-const pointer
  auto params = make_params<CUpti_Profiler_Host_GetNumOfPasses_Params>(
      CUpti_Profiler_Host_GetNumOfPasses_Params_STRUCT_SIZE);
  params.configImageSize = copy.size();
  params.pConfigImage = copy.data();
  ROOFLINE_CUPTI_CALL(cuptiProfilerHostGetNumOfPasses(&params));
  if (params.numOfPasses == 0) {
    throw ProfilerError(ProfilerErrorKind::kOther, "config image schedules no pass");
  }
  return static_cast<int>(params.numOfPasses);
}

// ---------------------------------------------------------------------------------------------
// Counter-data images. CUPTI's parser trusts the image: cuptiRangeProfilerGetCounterDataInfo
// (NVPW_CounterData_GetNumRanges) follows an offset in the header and crashes on garbage, and
// cuptiProfilerHostGetRangeName does not check the image at all. So an image from a file is
// checked before CUPTI sees it, against the layout that CUPTI 13.0 writes (read off an image
// recorded on an H200, GH100; the names are ours, all fields little-endian):
//   0x00         char[8]  "LOPDATA\0"
//   0x08         u32 24, u32 1     layout words: any other pair is rejected
//   0x10..0x3b   u32 x 11          offsets and sizes of header sections, each < image size
//   0x38         u32               offset T of the range table
//   T + 0x08     u64               offset of the first range's counters
//   T + 0x10     u64               bytes per range
//   T + 0x20     u32               number of ranges recorded (what CUPTI reports)
//   image size = first-range offset + max ranges x bytes per range
// Only the fields the parser follows are checked: corruption inside the counters is for the
// caller's checksum to catch. Images straight from the RangeProfiler skip the check.
constexpr char kCounterDataMagic[8] = {'L', 'O', 'P', 'D', 'A', 'T', 'A', '\0'};
constexpr std::uint32_t kLayoutWords[2] = {24, 1};
constexpr std::size_t kHeaderBytes = 0x3c;
constexpr std::size_t kRangeTableBytes = 0x28;
constexpr std::size_t kMaxCounterDataBytes = std::size_t{1} << 30;

struct CounterDataLayout {
  std::size_t first_range_offset = 0;
  std::size_t bytes_per_range = 0;
};

[[noreturn]] void bad_counter_data(const std::string& why) {
  throw ProfilerError(ProfilerErrorKind::kBadCounterData, "counter-data image rejected: " + why);
}

template <class T>
T read_le(const std::vector<std::uint8_t>& image, std::size_t offset) {
  T value{};
  std::memcpy(&value, image.data() + offset, sizeof value);
  return value;
}

CounterDataLayout validate_counter_data(const std::vector<std::uint8_t>& image) {
  const std::size_t size = image.size();
  if (size < kHeaderBytes + kRangeTableBytes) {
    bad_counter_data(std::to_string(size) + " bytes, too small to hold a header");
  }
  if (size > kMaxCounterDataBytes) bad_counter_data(std::to_string(size) + " bytes, over 1 GiB");
  if (std::memcmp(image.data(), kCounterDataMagic, sizeof kCounterDataMagic) != 0) {
    bad_counter_data("no LOPDATA signature: not a CUPTI counter-data image");
  }
  const auto w0 = read_le<std::uint32_t>(image, 8);
  const auto w1 = read_le<std::uint32_t>(image, 12);
  if (w0 != kLayoutWords[0] || w1 != kLayoutWords[1]) {
    bad_counter_data("layout words " + std::to_string(w0) + "/" + std::to_string(w1) +
                     " differ from the " + std::to_string(kLayoutWords[0]) + "/" +
                     std::to_string(kLayoutWords[1]) +
                     " of CUPTI 13.0; re-record the image with this CUPTI");
  }
  for (std::size_t offset = 0x10; offset < kHeaderBytes; offset += 4) {
    if (read_le<std::uint32_t>(image, offset) >= size) {
      bad_counter_data("header field at byte " + std::to_string(offset) +
                       " points outside the image");
    }
  }
  const std::size_t table = read_le<std::uint32_t>(image, 0x38);
  if (table > size - kRangeTableBytes) bad_counter_data("range table outside the image");
  CounterDataLayout layout;
  const auto first = read_le<std::uint64_t>(image, table + 0x08);
  const auto per_range = read_le<std::uint64_t>(image, table + 0x10);
  if (first > size || per_range == 0 || per_range > size) {
    bad_counter_data("range table sizes do not fit the image (" + std::to_string(size) + " bytes)");
  }
  layout.first_range_offset = static_cast<std::size_t>(first);
  layout.bytes_per_range = static_cast<std::size_t>(per_range);
  return layout;
}

std::size_t range_count(const std::vector<std::uint8_t>& image) {
  auto params = make_params<CUpti_RangeProfiler_GetCounterDataInfo_Params>(
      CUpti_RangeProfiler_GetCounterDataInfo_Params_STRUCT_SIZE);
  params.pCounterDataImage = image.data();
  params.counterDataImageSize = image.size();
  ROOFLINE_CUPTI_CALL(cuptiRangeProfilerGetCounterDataInfo(&params));
  return params.numTotalRanges;
}

std::string range_name(const std::vector<std::uint8_t>& image, std::size_t index) {
  auto params = make_params<CUpti_Profiler_Host_GetRangeName_Params>(
      CUpti_Profiler_Host_GetRangeName_Params_STRUCT_SIZE);
  params.pCounterDataImage = image.data();
  params.counterDataImageSize = image.size();
  params.rangeIndex = index;
  params.delimiter = "/";
  ROOFLINE_CUPTI_CALL(cuptiProfilerHostGetRangeName(&params));
  return params.pRangeName != nullptr ? std::string(params.pRangeName) : std::string();
}

// Every range of `image`. `checked`: the image comes from a file and must pass
// validate_counter_data first. `host` must be alive: CUPTI's counter-data parser is set up by
// cuptiProfilerHostInitialize (without one, GetCounterDataInfo answers NOT_INITIALIZED).
std::vector<RangeValues> evaluate_image(const HostObject& host,
                                        const std::vector<std::uint8_t>& image,
                                        const std::vector<std::string>& metrics, bool checked) {
  CounterDataLayout layout;
  if (checked) layout = validate_counter_data(image);
  auto names = c_strings(metrics);
  std::vector<RangeValues> ranges;
  try {
    const std::size_t count = range_count(image);
    if (checked && count > (image.size() - layout.first_range_offset) / layout.bytes_per_range) {
      bad_counter_data("it claims " + std::to_string(count) + " ranges, more than its " +
                       std::to_string(image.size()) + " bytes can hold");
    }
    ranges.reserve(count);
    for (std::size_t index = 0; index < count; ++index) {
      RangeValues range;
      range.name = range_name(image, index);
      range.values.assign(metrics.size(), 0.0);
      auto params = make_params<CUpti_Profiler_Host_EvaluateToGpuValues_Params>(
          CUpti_Profiler_Host_EvaluateToGpuValues_Params_STRUCT_SIZE);
      params.pHostObject = host.get();
      params.pCounterDataImage = image.data();
      params.counterDataImageSize = image.size();
      params.rangeIndex = index;
      params.ppMetricNames = names.data();
      params.numMetrics = names.size();
      params.pMetricValues = range.values.data();
      ROOFLINE_CUPTI_CALL(cuptiProfilerHostEvaluateToGpuValues(&params));
      ranges.push_back(std::move(range));
    }
  } catch (const ProfilerError& error) {
    if (error.kind() != ProfilerErrorKind::kOther) throw;
    throw ProfilerError(ProfilerErrorKind::kBadCounterData,
                        std::string("counter-data image could not be evaluated: ") + error.what());
  }
  return ranges;
}

// ---------------------------------------------------------------------------------------------
// Target half helpers.

// cuptiProfilerInitialize / DeInitialize, counted: device_chip_name and a RangeProfiler may
// overlap, and the last one out deinitialises.
class ProfilerInitLease {
 public:
  ProfilerInitLease() {
    std::lock_guard<std::mutex> lock(mutex());
    if (count() == 0) {
      auto params = make_params<CUpti_Profiler_Initialize_Params>(
          CUpti_Profiler_Initialize_Params_STRUCT_SIZE);
      ROOFLINE_CUPTI_CALL(cuptiProfilerInitialize(&params));
    }
    ++count();
  }
  ~ProfilerInitLease() {
    std::lock_guard<std::mutex> lock(mutex());
    if (--count() == 0) {
      auto params = make_params<CUpti_Profiler_DeInitialize_Params>(
          CUpti_Profiler_DeInitialize_Params_STRUCT_SIZE);
      cuptiProfilerDeInitialize(&params);  // nothing to do about a failure here
    }
  }
  ProfilerInitLease(const ProfilerInitLease&) = delete;
  ProfilerInitLease& operator=(const ProfilerInitLease&) = delete;

 private:
  static std::mutex& mutex() {
    static std::mutex m;
    return m;
  }
  static int& count() {
    static int n = 0;
    return n;
  }
};

// Throws kNoDevice unless the runtime sees a device with this ordinal. Target calls crash
// without a driver, so this runs before any of them.
void require_device(int device) {
  int count = 0;
  const cudaError_t error = cudaGetDeviceCount(&count);
  if (error != cudaSuccess) {
    cudaGetLastError();
    throw ProfilerError(ProfilerErrorKind::kNoDevice,
                        std::string("no usable CUDA device: cudaGetDeviceCount: ") +
                            cudaGetErrorName(error) + ": " + cudaGetErrorString(error));
  }
  if (device < 0 || device >= count) {
    throw ProfilerError(ProfilerErrorKind::kNoDevice, "no CUDA device with ordinal " +
                                                          std::to_string(device) + " (" +
                                                          std::to_string(count) + " present)");
  }
}

std::string chip_name_of(int device) {
  auto params =
      make_params<CUpti_Device_GetChipName_Params>(CUpti_Device_GetChipName_Params_STRUCT_SIZE);
  params.deviceIndex = static_cast<std::size_t>(device);
  ROOFLINE_CUPTI_CALL(cuptiDeviceGetChipName(&params));
  return params.pChipName != nullptr ? std::string(params.pChipName) : std::string();
}

// A driver function through the runtime, so that libcuda is not a link dependency.
template <class Fn>
Fn driver_function(const char* symbol) {
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult status{};
  ROOFLINE_PROFILER_CUDA_CALL(
      cudaGetDriverEntryPointByVersion(symbol, &fn, 12000, cudaEnableDefault, &status));
  if (status != cudaDriverEntryPointSuccess || fn == nullptr) {
    throw ProfilerError(ProfilerErrorKind::kNoDevice,
                        std::string("the CUDA driver does not provide ") + symbol);
  }
  return reinterpret_cast<Fn>(fn);
}

const char* support_text(CUpti_Profiler_Support_Level level) {
  switch (level) {
    case CUPTI_PROFILER_CONFIGURATION_SUPPORTED:
      return "supported";
    case CUPTI_PROFILER_CONFIGURATION_DISABLED:
      return "disabled";
    case CUPTI_PROFILER_CONFIGURATION_UNSUPPORTED:
      return "unsupported";
    default:
      return "unknown";
  }
}

void require_device_supported(CUdevice device) {
  auto params = make_params<CUpti_Profiler_DeviceSupported_Params>(
      CUpti_Profiler_DeviceSupported_Params_STRUCT_SIZE);
  params.cuDevice = device;
  params.api = CUPTI_PROFILER_RANGE_PROFILING;
  ROOFLINE_CUPTI_CALL(cuptiProfilerDeviceSupported(&params));
  if (params.isSupported == CUPTI_PROFILER_CONFIGURATION_SUPPORTED) return;

  struct Part {
    const char* name;
    CUpti_Profiler_Support_Level level;
  };
  const Part parts[] = {{"architecture (compute capability >= 7.5)", params.architecture},
                        {"SLI", params.sli},
                        {"vGPU", params.vGpu},
                        {"confidential computing", params.confidentialCompute},
                        {"CMP (mining processor)", params.cmp},
                        {"WSL", params.wsl}};
  std::string failing;
  bool only_disabled_vgpu = true;
  for (const auto& part : parts) {
    if (part.level == CUPTI_PROFILER_CONFIGURATION_SUPPORTED) continue;
    failing +=
        (failing.empty() ? "" : ", ") + std::string(part.name) + ": " + support_text(part.level);
    if (!(part.level == CUPTI_PROFILER_CONFIGURATION_DISABLED &&
          std::strcmp(part.name, "vGPU") == 0)) {
      only_disabled_vgpu = false;
    }
  }
  if (failing.empty()) failing = std::string("overall: ") + support_text(params.isSupported);
  if (only_disabled_vgpu) {
    throw ProfilerError(ProfilerErrorKind::kInsufficientPrivileges,
                        "profiling is disabled on this vGPU (" + failing +
                            "): the hypervisor must enable it. " + kPrivilegesFix);
  }
  throw ProfilerError(ProfilerErrorKind::kUnsupportedDevice,
                      "the range profiler does not support this device: " + failing + ". " +
                          fix_for(ProfilerErrorKind::kUnsupportedDevice));
}

std::vector<std::uint8_t> counter_availability(CUcontext context) {
  auto params = make_params<CUpti_Profiler_GetCounterAvailability_Params>(
      CUpti_Profiler_GetCounterAvailability_Params_STRUCT_SIZE);
  params.ctx = context;
  ROOFLINE_CUPTI_CALL(cuptiProfilerGetCounterAvailability(&params));
  std::vector<std::uint8_t> image(params.counterAvailabilityImageSize);
  params.pCounterAvailabilityImage = image.data();
  ROOFLINE_CUPTI_CALL(cuptiProfilerGetCounterAvailability(&params));
  image.resize(params.counterAvailabilityImageSize);
  return image;
}

// One RangeProfiler per process: CUPTI allows one profiling client.
std::atomic<bool> g_range_profiler_alive{false};

}  // namespace

// =============================================================================================
// MetricHost

struct MetricHost::Impl {
  explicit Impl(std::string chip_name) : chip(std::move(chip_name)), host(chip, nullptr) {}
  std::string chip;
  HostObject host;  // metrics are never added to it: evaluation only
};

MetricHost::MetricHost(const std::string& chip) {
  require_supported_chip(chip);
  impl_ = std::make_unique<Impl>(chip);
}

MetricHost::~MetricHost() = default;
MetricHost::MetricHost(MetricHost&& other) noexcept = default;
MetricHost& MetricHost::operator=(MetricHost&& other) noexcept = default;

std::vector<std::string> MetricHost::supported_chips() {
  return supported_chip_list();
}

namespace {
[[noreturn]] void moved_from(const char* what) {
  throw ProfilerError(ProfilerErrorKind::kOther,
                      std::string(what) + " used after being moved from");
}
}  // namespace

const std::string& MetricHost::chip() const {
  if (impl_ == nullptr) moved_from("MetricHost");
  return impl_->chip;
}

bool MetricHost::has_metric(const std::string& name) const {
  return metric_accepted(chip(), name);
}

std::vector<std::uint8_t> MetricHost::config_image(const std::vector<std::string>& metrics) const {
  HostObject fresh(chip(), nullptr);
  return build_config(fresh, chip(), metrics);
}

int MetricHost::num_passes(const std::vector<std::uint8_t>& config_image) const {
  return passes_of(config_image);
}

std::vector<RangeValues> MetricHost::evaluate(const std::vector<std::uint8_t>& counter_data_image,
                                              const std::vector<std::string>& metrics) const {
  require_metrics(chip(), metrics);
  return evaluate_image(impl_->host, counter_data_image, metrics, /*checked=*/true);
}

std::string device_chip_name(int device) {
  require_device(device);
  ProfilerInitLease lease;
  return chip_name_of(device);
}

// =============================================================================================
// RangeProfiler

struct RangeProfiler::Impl {
  enum class State { kIdle, kInPass, kBetweenPasses, kAllSubmitted, kDecoded };

  Impl() = default;
  Impl(const Impl&) = delete;
  Impl& operator=(const Impl&) = delete;
  ~Impl() {
    if (object != nullptr) {
      if (state == State::kInPass) {
        auto stop = make_params<CUpti_RangeProfiler_Stop_Params>(
            CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE);
        stop.pRangeProfilerObject = object;
        cuptiRangeProfilerStop(&stop);
      }
      auto disable = make_params<CUpti_RangeProfiler_Disable_Params>(
          CUpti_RangeProfiler_Disable_Params_STRUCT_SIZE);
      disable.pRangeProfilerObject = object;
      cuptiRangeProfilerDisable(&disable);
      object = nullptr;
    }
    host.reset();
    lease.reset();
    if (owns_guard) g_range_profiler_alive.store(false);
  }

  void open(int device_ordinal, const std::vector<std::string>& metric_names, int ranges) {
    if (g_range_profiler_alive.exchange(true)) {
      throw ProfilerError(ProfilerErrorKind::kMultipleSubscribers,
                          "a RangeProfiler already exists in this process; CUPTI allows one "
                          "profiling session at a time");
    }
    owns_guard = true;
    if (ranges < 1) {
      throw ProfilerError(ProfilerErrorKind::kOther,
                          "max_ranges must be at least 1, got " + std::to_string(ranges));
    }
    device = device_ordinal;
    metrics = metric_names;
    max_ranges = ranges;

    require_device(device);
    ROOFLINE_PROFILER_CUDA_CALL(cudaSetDevice(device));
    ROOFLINE_PROFILER_CUDA_CALL(cudaFree(nullptr));  // the primary context exists from here on
    using CtxGetCurrent = CUresult (*)(CUcontext*);
    using CtxGetDevice = CUresult (*)(CUdevice*);
    CUdevice cu_device = 0;
    if (driver_function<CtxGetCurrent>("cuCtxGetCurrent")(&context) != CUDA_SUCCESS ||
        driver_function<CtxGetDevice>("cuCtxGetDevice")(&cu_device) != CUDA_SUCCESS ||
        context == nullptr) {
      throw ProfilerError(ProfilerErrorKind::kNoDevice,
                          "no current CUDA context on device " + std::to_string(device));
    }

    lease = std::make_unique<ProfilerInitLease>();
    require_device_supported(cu_device);
    chip = chip_name_of(device);
    require_supported_chip(chip);

    availability = counter_availability(context);
    host = std::make_unique<HostObject>(chip, &availability);
    config = build_config(*host, chip, metrics);
    passes = passes_of(config);

    auto enable = make_params<CUpti_RangeProfiler_Enable_Params>(
        CUpti_RangeProfiler_Enable_Params_STRUCT_SIZE);
    enable.ctx = context;
    ROOFLINE_CUPTI_CALL(cuptiRangeProfilerEnable(&enable));
    object = enable.pRangeProfilerObject;

    auto names = c_strings(metrics);
    auto size = make_params<CUpti_RangeProfiler_GetCounterDataSize_Params>(
        CUpti_RangeProfiler_GetCounterDataSize_Params_STRUCT_SIZE);
    size.pRangeProfilerObject = object;
    size.pMetricNames = names.data();
    size.numMetrics = names.size();
    size.maxNumOfRanges = static_cast<std::size_t>(max_ranges);
    size.maxNumRangeTreeNodes = static_cast<std::uint32_t>(max_ranges);
    ROOFLINE_CUPTI_CALL(cuptiRangeProfilerGetCounterDataSize(&size));
    counter_data.assign(size.counterDataSize, 0);
    configure();
  }

  // Fresh counter data and config: before the first pass and before each reuse.
  void configure() {
    auto init = make_params<CUpti_RangeProfiler_CounterDataImage_Initialize_Params>(
        CUpti_RangeProfiler_CounterDataImage_Initialize_Params_STRUCT_SIZE);
    init.pRangeProfilerObject = object;
    init.counterDataSize = counter_data.size();
    init.pCounterData = counter_data.data();
    ROOFLINE_CUPTI_CALL(cuptiRangeProfilerCounterDataImageInitialize(&init));

    auto set = make_params<CUpti_RangeProfiler_SetConfig_Params>(
        CUpti_RangeProfiler_SetConfig_Params_STRUCT_SIZE);
    set.pRangeProfilerObject = object;
    set.configSize = config.size();
    set.pConfig = config.data();
    set.counterDataImageSize = counter_data.size();
    set.pCounterDataImage = counter_data.data();
    set.range = CUPTI_UserRange;
    set.replayMode = CUPTI_UserReplay;
    set.maxRangesPerPass = static_cast<std::size_t>(max_ranges);
    set.numNestingLevels = 1;
    set.minNestingLevel = 1;
    set.passIndex = 0;
    set.targetNestingLevel = 1;
    ROOFLINE_CUPTI_CALL(cuptiRangeProfilerSetConfig(&set));
    state = State::kIdle;
    passes_done = 0;
    ranges_in_pass = 0;
    ranges_first_pass = 0;
    open_ranges = 0;
  }

  void require_state(bool ok, const char* call, const char* expected) const {
    if (!ok) {
      throw ProfilerError(ProfilerErrorKind::kOther, std::string("RangeProfiler::") + call +
                                                         " called out of order: " + expected);
    }
  }

  int device = 0;
  std::string chip;
  std::vector<std::string> metrics;
  int max_ranges = 0;
  int passes = 0;
  std::unique_ptr<ProfilerInitLease> lease;
  std::vector<std::uint8_t> availability;
  std::unique_ptr<HostObject> host;
  std::vector<std::uint8_t> config;
  std::vector<std::uint8_t> counter_data;
  CUcontext context = nullptr;
  CUpti_RangeProfiler_Object* object = nullptr;
  State state = State::kIdle;
  int passes_done = 0;
  std::size_t ranges_in_pass = 0;
  std::size_t ranges_first_pass = 0;
  int open_ranges = 0;
  bool owns_guard = false;
};

RangeProfiler::RangeProfiler(int device, const std::vector<std::string>& metrics, int max_ranges)
    : impl_(std::make_unique<Impl>()) {
  // On a throw, impl_ (a member already built) is destroyed with the half-built object.
  impl_->open(device, metrics, max_ranges);
}

RangeProfiler::~RangeProfiler() = default;
RangeProfiler::RangeProfiler(RangeProfiler&& other) noexcept = default;
RangeProfiler& RangeProfiler::operator=(RangeProfiler&& other) noexcept = default;

int RangeProfiler::num_passes() const {
  if (impl_ == nullptr) moved_from("RangeProfiler");
  return impl_->passes;
}

const std::string& RangeProfiler::chip() const {
  if (impl_ == nullptr) moved_from("RangeProfiler");
  return impl_->chip;
}

void RangeProfiler::begin_pass() {
  if (impl_ == nullptr) moved_from("RangeProfiler");
  Impl& s = *impl_;
  using State = Impl::State;
  if (s.state == State::kDecoded) s.configure();  // the next sweep reuses enable and config
  s.require_state(s.state == State::kIdle || s.state == State::kBetweenPasses, "begin_pass",
                  "after construction, after end_pass() returned false, or after "
                  "decode_and_evaluate()");
  auto start =
      make_params<CUpti_RangeProfiler_Start_Params>(CUpti_RangeProfiler_Start_Params_STRUCT_SIZE);
  start.pRangeProfilerObject = s.object;
  ROOFLINE_CUPTI_CALL(cuptiRangeProfilerStart(&start));
  s.state = State::kInPass;
  s.ranges_in_pass = 0;
}

void RangeProfiler::push_range(const std::string& name) {
  if (impl_ == nullptr) moved_from("RangeProfiler");
  Impl& s = *impl_;
  s.require_state(s.state == Impl::State::kInPass, "push_range", "between begin_pass and end_pass");
  s.require_state(s.open_ranges == 0, "push_range",
                  "ranges do not nest: pop_range() the open range first");
  auto push = make_params<CUpti_RangeProfiler_PushRange_Params>(
      CUpti_RangeProfiler_PushRange_Params_STRUCT_SIZE);
  push.pRangeProfilerObject = s.object;
  push.pRangeName = name.c_str();
  ROOFLINE_CUPTI_CALL(cuptiRangeProfilerPushRange(&push));
  ++s.open_ranges;
  ++s.ranges_in_pass;
}

void RangeProfiler::pop_range() {
  if (impl_ == nullptr) moved_from("RangeProfiler");
  Impl& s = *impl_;
  s.require_state(s.state == Impl::State::kInPass && s.open_ranges == 1, "pop_range",
                  "after a push_range() in the same pass");
  auto pop = make_params<CUpti_RangeProfiler_PopRange_Params>(
      CUpti_RangeProfiler_PopRange_Params_STRUCT_SIZE);
  pop.pRangeProfilerObject = s.object;
  ROOFLINE_CUPTI_CALL(cuptiRangeProfilerPopRange(&pop));
  --s.open_ranges;
}

bool RangeProfiler::end_pass() {
  if (impl_ == nullptr) moved_from("RangeProfiler");
  Impl& s = *impl_;
  s.require_state(s.state == Impl::State::kInPass && s.open_ranges == 0, "end_pass",
                  "after begin_pass(), with every pushed range popped");
  auto stop =
      make_params<CUpti_RangeProfiler_Stop_Params>(CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE);
  stop.pRangeProfilerObject = s.object;
  ROOFLINE_CUPTI_CALL(cuptiRangeProfilerStop(&stop));
  ++s.passes_done;
  if (s.passes_done == 1) {
    s.ranges_first_pass = s.ranges_in_pass;
  } else if (s.ranges_in_pass != s.ranges_first_pass) {
    s.state = Impl::State::kBetweenPasses;
    throw ProfilerError(ProfilerErrorKind::kOther,
                        "pass " + std::to_string(s.passes_done) + " pushed " +
                            std::to_string(s.ranges_in_pass) + " ranges, the first pass " +
                            std::to_string(s.ranges_first_pass) +
                            ": every pass must replay the same ranges");
  }
  const bool all = stop.isAllPassSubmitted != 0;
  s.state = all ? Impl::State::kAllSubmitted : Impl::State::kBetweenPasses;
  if (!all && s.passes_done >= s.passes + 1) {
    throw ProfilerError(ProfilerErrorKind::kOther,
                        "CUPTI still asks for passes after " + std::to_string(s.passes_done) +
                            " of the " + std::to_string(s.passes) + " the config needs");
  }
  return all;
}

std::vector<RangeValues> RangeProfiler::decode_and_evaluate() {
  if (impl_ == nullptr) moved_from("RangeProfiler");
  Impl& s = *impl_;
  s.require_state(s.state == Impl::State::kAllSubmitted, "decode_and_evaluate",
                  "after end_pass() returned true");
  auto decode = make_params<CUpti_RangeProfiler_DecodeData_Params>(
      CUpti_RangeProfiler_DecodeData_Params_STRUCT_SIZE);
  decode.pRangeProfilerObject = s.object;
  ROOFLINE_CUPTI_CALL(cuptiRangeProfilerDecodeData(&decode));
  s.state = Impl::State::kDecoded;
  if (decode.numOfRangeDropped > 0) {
    throw ProfilerError(ProfilerErrorKind::kOther,
                        std::to_string(decode.numOfRangeDropped) + " of " +
                            std::to_string(s.ranges_first_pass) +
                            " ranges were dropped: max_ranges (" + std::to_string(s.max_ranges) +
                            ") is too small for one pass");
  }
  return evaluate_image(*s.host, s.counter_data, s.metrics, /*checked=*/false);
}

const std::vector<std::uint8_t>& RangeProfiler::counter_data_image() const {
  if (impl_ == nullptr) moved_from("RangeProfiler");
  return impl_->counter_data;
}

// =============================================================================================
// KernelRangeProfiler

namespace {
// Ranges one start()..stop() can hold. A kernel launch is one range; a graph launch one per
// kernel node. The counter-data image is sized for them, and CUPTI initialises the whole image
// before each start (about 150 KB a range with the default set: 512 ranges took ~12 ms a
// launch on the H200's host, more than the evaluation), so kernel launches get a small image
// and graph launches a large one, made on first use.
constexpr std::size_t kRangesPerKernelLaunch = 4;
constexpr std::size_t kRangesPerGraphLaunch = 512;
}  // namespace

struct KernelRangeProfiler::Impl {
  Impl() = default;
  Impl(const Impl&) = delete;
  Impl& operator=(const Impl&) = delete;
  ~Impl() {
    if (object != nullptr) {
      if (started) {
        auto stop = make_params<CUpti_RangeProfiler_Stop_Params>(
            CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE);
        stop.pRangeProfilerObject = object;
        if (range_open) {
          auto pop = make_params<CUpti_RangeProfiler_PopRange_Params>(
              CUpti_RangeProfiler_PopRange_Params_STRUCT_SIZE);
          pop.pRangeProfilerObject = object;
          cuptiRangeProfilerPopRange(&pop);
        }
        cuptiRangeProfilerStop(&stop);
      }
      auto disable = make_params<CUpti_RangeProfiler_Disable_Params>(
          CUpti_RangeProfiler_Disable_Params_STRUCT_SIZE);
      disable.pRangeProfilerObject = object;
      cuptiRangeProfilerDisable(&disable);
      object = nullptr;
    }
    host.reset();
    lease.reset();
    if (owns_guard) g_range_profiler_alive.store(false);
  }

  void open(CUcontext ctx, int cu_device, const std::vector<std::string>& metric_names) {
    if (g_range_profiler_alive.exchange(true)) {
      throw ProfilerError(ProfilerErrorKind::kMultipleSubscribers,
                          "a range profiler already exists in this process; CUPTI allows one "
                          "profiling session at a time");
    }
    owns_guard = true;
    context = ctx;
    metrics = metric_names;
    lease = std::make_unique<ProfilerInitLease>();
    require_device_supported(static_cast<CUdevice>(cu_device));
    chip = chip_name_of(cu_device);
    require_supported_chip(chip);
    availability = counter_availability(context);
    host = std::make_unique<HostObject>(chip, &availability);
    config = build_config(*host, chip, metrics);
    passes = passes_of(config);

    auto enable = make_params<CUpti_RangeProfiler_Enable_Params>(
        CUpti_RangeProfiler_Enable_Params_STRUCT_SIZE);
    enable.ctx = context;
    ROOFLINE_CUPTI_CALL(cuptiRangeProfilerEnable(&enable));
    object = enable.pRangeProfilerObject;

    kernel_image = make_image(kRangesPerKernelLaunch);
    use(kernel_image);
  }

  // A counter-data image for `ranges` ranges, initialised.
  struct Image {
    std::size_t ranges = 0;
    bool user_ranges = false;  // a batch image: user range, user replay
    std::vector<std::uint8_t> data;
  };
  Image make_image(std::size_t ranges) {
    auto names = c_strings(metrics);
    auto size = make_params<CUpti_RangeProfiler_GetCounterDataSize_Params>(
        CUpti_RangeProfiler_GetCounterDataSize_Params_STRUCT_SIZE);
    size.pRangeProfilerObject = object;
    size.pMetricNames = names.data();
    size.numMetrics = names.size();
    size.maxNumOfRanges = ranges;
    size.maxNumRangeTreeNodes = static_cast<std::uint32_t>(ranges);
    ROOFLINE_CUPTI_CALL(cuptiRangeProfilerGetCounterDataSize(&size));
    Image image;
    image.ranges = ranges;
    image.data.assign(size.counterDataSize, 0);
    initialize(image);
    return image;
  }

  // Makes `image` (initialised) the one the next start() collects into: auto range and
  // kernel replay, or user range and user replay for a batch image.
  void use(Image& image) {
    auto set = make_params<CUpti_RangeProfiler_SetConfig_Params>(
        CUpti_RangeProfiler_SetConfig_Params_STRUCT_SIZE);
    set.pRangeProfilerObject = object;
    set.configSize = config.size();
    set.pConfig = config.data();
    set.counterDataImageSize = image.data.size();
    set.pCounterDataImage = image.data.data();
    set.range = image.user_ranges ? CUPTI_UserRange : CUPTI_AutoRange;
    set.replayMode = image.user_ranges ? CUPTI_UserReplay : CUPTI_KernelReplay;
    set.maxRangesPerPass = image.ranges;
    set.numNestingLevels = 1;
    set.minNestingLevel = 1;
    set.passIndex = 0;
    set.targetNestingLevel = 1;
    ROOFLINE_CUPTI_CALL(cuptiRangeProfilerSetConfig(&set));
    current = &image;
  }

  void initialize(Image& image) {
    auto init = make_params<CUpti_RangeProfiler_CounterDataImage_Initialize_Params>(
        CUpti_RangeProfiler_CounterDataImage_Initialize_Params_STRUCT_SIZE);
    init.pRangeProfilerObject = object;
    init.counterDataSize = image.data.size();
    init.pCounterData = image.data.data();
    ROOFLINE_CUPTI_CALL(cuptiRangeProfilerCounterDataImageInitialize(&init));
  }

  std::string chip;
  std::vector<std::string> metrics;
  int passes = 0;
  std::unique_ptr<ProfilerInitLease> lease;
  std::vector<std::uint8_t> availability;
  std::unique_ptr<HostObject> host;
  std::vector<std::uint8_t> config;
  Image kernel_image;
  std::unique_ptr<Image> graph_image;  // made for the first graph launch
  std::unique_ptr<Image> batch_image;  // made for the first batch
  Image* current = nullptr;            // the image SetConfig was last given
  CUcontext context = nullptr;
  CUpti_RangeProfiler_Object* object = nullptr;
  bool started = false;
  bool batch = false;            // the started pass is a batch (begin_batch)
  std::size_t batch_pushed = 0;  // ranges pushed in the open batch
  bool range_open = false;       // a batch range pushed, not popped yet
  bool stopped = false;          // stopped, not decoded yet
  bool decoded = false;          // decoded, not evaluated yet
  bool owns_guard = false;
};

KernelRangeProfiler::KernelRangeProfiler(void* context, int device,
                                         const std::vector<std::string>& metrics)
    : impl_(std::make_unique<Impl>()) {
  // On a throw, impl_ (a member already built) is destroyed with the half-built object.
  impl_->open(static_cast<CUcontext>(context), device, metrics);
}

KernelRangeProfiler::~KernelRangeProfiler() = default;
KernelRangeProfiler::KernelRangeProfiler(KernelRangeProfiler&& other) noexcept = default;
KernelRangeProfiler& KernelRangeProfiler::operator=(KernelRangeProfiler&& other) noexcept = default;

int KernelRangeProfiler::num_passes() const {
  if (impl_ == nullptr) moved_from("KernelRangeProfiler");
  return impl_->passes;
}

const std::string& KernelRangeProfiler::chip() const {
  if (impl_ == nullptr) moved_from("KernelRangeProfiler");
  return impl_->chip;
}

void KernelRangeProfiler::start(bool graph) {
  if (impl_ == nullptr) moved_from("KernelRangeProfiler");
  Impl& s = *impl_;
  if (s.started || s.stopped || s.decoded) {
    throw ProfilerError(ProfilerErrorKind::kOther,
                        "KernelRangeProfiler::start called before the last start's "
                        "stop, decode and evaluate");
  }
  if (graph && s.graph_image == nullptr)
    s.graph_image = std::make_unique<Impl::Image>(s.make_image(kRangesPerGraphLaunch));
  Impl::Image& image = graph ? *s.graph_image : s.kernel_image;
  if (s.current != &image) s.use(image);
  auto start =
      make_params<CUpti_RangeProfiler_Start_Params>(CUpti_RangeProfiler_Start_Params_STRUCT_SIZE);
  start.pRangeProfilerObject = s.object;
  ROOFLINE_CUPTI_CALL(cuptiRangeProfilerStart(&start));
  s.started = true;
  s.batch = false;
}

void KernelRangeProfiler::begin_batch(std::size_t ranges) {
  if (impl_ == nullptr) moved_from("KernelRangeProfiler");
  Impl& s = *impl_;
  if (s.started || s.stopped || s.decoded) {
    throw ProfilerError(ProfilerErrorKind::kOther,
                        "KernelRangeProfiler::begin_batch called before the last start's "
                        "stop, decode and evaluate");
  }
  if (s.passes != 1) {
    throw ProfilerError(ProfilerErrorKind::kOther,
                        "a batch needs a one-pass counter set; this one needs " +
                            std::to_string(s.passes) + " passes (use kernel replay)");
  }
  if (ranges < 1)
    throw ProfilerError(ProfilerErrorKind::kOther, "a batch needs room for at least one range");
  if (s.batch_image == nullptr || s.batch_image->ranges != ranges) {
    auto image = std::make_unique<Impl::Image>();
    image->ranges = ranges;
    image->user_ranges = true;
    Impl::Image sized = s.make_image(ranges);
    image->data = std::move(sized.data);
    if (s.current == s.batch_image.get()) s.current = nullptr;
    s.batch_image = std::move(image);
  }
  // SetConfig before every batch, as RangeProfiler does before every sweep of user replay:
  // with SetConfig only before the first, every later batch came back on the H200 with its
  // ranges named but no values (a session whose passes were all submitted seems to collect
  // nothing more until it is configured again).
  s.use(*s.batch_image);
  auto start =
      make_params<CUpti_RangeProfiler_Start_Params>(CUpti_RangeProfiler_Start_Params_STRUCT_SIZE);
  start.pRangeProfilerObject = s.object;
  ROOFLINE_CUPTI_CALL(cuptiRangeProfilerStart(&start));
  s.started = true;
  s.batch = true;
  s.batch_pushed = 0;
  s.range_open = false;
}

bool KernelRangeProfiler::batch_open() const {
  if (impl_ == nullptr) moved_from("KernelRangeProfiler");
  return impl_->started && impl_->batch;
}

bool KernelRangeProfiler::batch_full() const {
  if (impl_ == nullptr) moved_from("KernelRangeProfiler");
  const Impl& s = *impl_;
  return s.started && s.batch && s.batch_pushed >= s.batch_image->ranges;
}

void KernelRangeProfiler::push_range(const std::string& name) {
  if (impl_ == nullptr) moved_from("KernelRangeProfiler");
  Impl& s = *impl_;
  if (!s.started || !s.batch || s.range_open || s.batch_pushed >= s.batch_image->ranges) {
    throw ProfilerError(ProfilerErrorKind::kOther,
                        "KernelRangeProfiler::push_range called outside an open batch with "
                        "room left, or inside another range");
  }
  auto push = make_params<CUpti_RangeProfiler_PushRange_Params>(
      CUpti_RangeProfiler_PushRange_Params_STRUCT_SIZE);
  push.pRangeProfilerObject = s.object;
  push.pRangeName = name.c_str();
  ROOFLINE_CUPTI_CALL(cuptiRangeProfilerPushRange(&push));
  s.range_open = true;
  ++s.batch_pushed;
}

void KernelRangeProfiler::pop_range() {
  if (impl_ == nullptr) moved_from("KernelRangeProfiler");
  Impl& s = *impl_;
  if (!s.range_open) {
    throw ProfilerError(ProfilerErrorKind::kOther,
                        "KernelRangeProfiler::pop_range called without a pushed range");
  }
  auto pop = make_params<CUpti_RangeProfiler_PopRange_Params>(
      CUpti_RangeProfiler_PopRange_Params_STRUCT_SIZE);
  pop.pRangeProfilerObject = s.object;
  s.range_open = false;
  ROOFLINE_CUPTI_CALL(cuptiRangeProfilerPopRange(&pop));
}

void KernelRangeProfiler::stop() {
  if (impl_ == nullptr) moved_from("KernelRangeProfiler");
  Impl& s = *impl_;
  if (!s.started) {
    throw ProfilerError(ProfilerErrorKind::kOther,
                        "KernelRangeProfiler::stop called without start");
  }
  auto stop =
      make_params<CUpti_RangeProfiler_Stop_Params>(CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE);
  stop.pRangeProfilerObject = s.object;
  if (s.range_open) {  // a launch whose exit never came: close its range first
    auto pop = make_params<CUpti_RangeProfiler_PopRange_Params>(
        CUpti_RangeProfiler_PopRange_Params_STRUCT_SIZE);
    pop.pRangeProfilerObject = s.object;
    s.range_open = false;
    cuptiRangeProfilerPopRange(&pop);
  }
  s.started = false;
  ROOFLINE_CUPTI_CALL(cuptiRangeProfilerStop(&stop));
  s.stopped = true;
  if (s.batch && stop.isAllPassSubmitted == 0) {
    s.stopped = false;
    s.initialize(*s.current);
    throw ProfilerError(ProfilerErrorKind::kOther,
                        "CUPTI asks for another pass of a one-pass batch: its ranges are lost");
  }
}

void KernelRangeProfiler::decode() {
  if (impl_ == nullptr) moved_from("KernelRangeProfiler");
  Impl& s = *impl_;
  if (!s.stopped) {
    throw ProfilerError(ProfilerErrorKind::kOther,
                        "KernelRangeProfiler::decode called without a stop before it");
  }
  s.stopped = false;
  auto decode = make_params<CUpti_RangeProfiler_DecodeData_Params>(
      CUpti_RangeProfiler_DecodeData_Params_STRUCT_SIZE);
  decode.pRangeProfilerObject = s.object;
  ROOFLINE_CUPTI_CALL(cuptiRangeProfilerDecodeData(&decode));
  if (decode.numOfRangeDropped > 0) {
    s.initialize(*s.current);
    throw ProfilerError(
        ProfilerErrorKind::kOther,
        std::to_string(decode.numOfRangeDropped) + " kernel ranges were dropped: more than " +
            std::to_string(s.current->ranges) +
            (s.current->user_ranges ? " ranges in one batch" : " kernels in one launch"));
  }
  s.decoded = true;
}

std::vector<RangeValues> KernelRangeProfiler::evaluate() {
  if (impl_ == nullptr) moved_from("KernelRangeProfiler");
  Impl& s = *impl_;
  if (!s.decoded) {
    throw ProfilerError(ProfilerErrorKind::kOther,
                        "KernelRangeProfiler::evaluate called without a decode before it");
  }
  s.decoded = false;
  std::vector<RangeValues> values;
  try {
    values = evaluate_image(*s.host, s.current->data, s.metrics, /*checked=*/false);
  } catch (...) {
    s.initialize(*s.current);  // the next start() begins with an empty image either way
    throw;
  }
  s.initialize(*s.current);
  return values;
}

std::string chip_name_of_loaded_device(int device) {
  ProfilerInitLease lease;
  return chip_name_of(device);
}

}  // namespace roofline::gpu

#undef ROOFLINE_CUPTI_CALL
#undef ROOFLINE_PROFILER_CUDA_CALL
