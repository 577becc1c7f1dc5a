#include "lib/gpu/cupti/profiler_session.hpp"

#include <cupti_profiler_target.h>
#include <cupti_target.h>

#include <atomic>
#include <cstring>
#include <mutex>

#include "lib/gpu/cupti/call.hpp"

namespace roofline::gpu::cupti {
namespace {

std::mutex& lease_mutex() {
  static std::mutex m;
  return m;
}

int& lease_count() {
  static int n = 0;
  return n;
}

// The process's one profiling slot: CUPTI allows one profiling client.
std::atomic<bool> g_slot_taken{false};

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

}  // namespace

ProfilerInitLease::ProfilerInitLease() {
  std::lock_guard<std::mutex> lock(lease_mutex());
  if (lease_count() == 0) {
    auto params =
        make_params<CUpti_Profiler_Initialize_Params>(CUpti_Profiler_Initialize_Params_STRUCT_SIZE);
    ROOFLINE_CUPTI_CALL(cuptiProfilerInitialize(&params));
  }
  ++lease_count();
}

ProfilerInitLease::~ProfilerInitLease() {
  std::lock_guard<std::mutex> lock(lease_mutex());
  if (--lease_count() == 0) {
    auto params = make_params<CUpti_Profiler_DeInitialize_Params>(
        CUpti_Profiler_DeInitialize_Params_STRUCT_SIZE);
    cuptiProfilerDeInitialize(&params);  // nothing to do about a failure here
  }
}

std::string chip_name_of(int device) {
  auto params =
      make_params<CUpti_Device_GetChipName_Params>(CUpti_Device_GetChipName_Params_STRUCT_SIZE);
  params.deviceIndex = static_cast<std::size_t>(device);
  ROOFLINE_CUPTI_CALL(cuptiDeviceGetChipName(&params));
  return params.pChipName != nullptr ? std::string(params.pChipName) : std::string();
}

ProfilerSession::ProfilerSession(const char* owner) {
  if (g_slot_taken.exchange(true)) {
    throw ProfilerError(ProfilerErrorKind::kMultipleSubscribers,
                        std::string("a ") + owner +
                            " already exists in this process; CUPTI allows one profiling "
                            "session at a time");
  }
  owns_slot_ = true;
}

ProfilerSession::~ProfilerSession() {
  if (object_ != nullptr) {
    if (started_) {
      if (range_open_) {
        auto pop = make_params<CUpti_RangeProfiler_PopRange_Params>(
            CUpti_RangeProfiler_PopRange_Params_STRUCT_SIZE);
        pop.pRangeProfilerObject = object_;
        cuptiRangeProfilerPopRange(&pop);
      }
      auto stop =
          make_params<CUpti_RangeProfiler_Stop_Params>(CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE);
      stop.pRangeProfilerObject = object_;
      cuptiRangeProfilerStop(&stop);
    }
    auto disable = make_params<CUpti_RangeProfiler_Disable_Params>(
        CUpti_RangeProfiler_Disable_Params_STRUCT_SIZE);
    disable.pRangeProfilerObject = object_;
    cuptiRangeProfilerDisable(&disable);
    object_ = nullptr;
  }
  host_.reset();
  lease_.reset();
  if (owns_slot_) g_slot_taken.store(false);
}

void ProfilerSession::open(CUcontext context, CUdevice device, int chip_device,
                           const std::vector<std::string>& metrics) {
  metrics_ = metrics;
  lease_ = std::make_unique<ProfilerInitLease>();
  require_device_supported(device);
  chip_ = chip_name_of(chip_device);
  require_supported_chip(chip_);
  availability_ = counter_availability(context);
  host_ = std::make_unique<HostObject>(chip_, &availability_);
  config_ = build_config(*host_, chip_, metrics_);
  passes_ = passes_of(config_);

  auto enable =
      make_params<CUpti_RangeProfiler_Enable_Params>(CUpti_RangeProfiler_Enable_Params_STRUCT_SIZE);
  enable.ctx = context;
  ROOFLINE_CUPTI_CALL(cuptiRangeProfilerEnable(&enable));
  object_ = enable.pRangeProfilerObject;
}

CounterDataImage ProfilerSession::image(std::size_t ranges, Collection collection) const {
  return sized_image(object_, metrics_, ranges, collection);
}

void ProfilerSession::initialize(CounterDataImage& image) const {
  initialize_image(object_, image);
}

void ProfilerSession::set_config(CounterDataImage& image) const {
  auto set = make_params<CUpti_RangeProfiler_SetConfig_Params>(
      CUpti_RangeProfiler_SetConfig_Params_STRUCT_SIZE);
  set.pRangeProfilerObject = object_;
  set.configSize = config_.size();
  set.pConfig = config_.data();
  set.counterDataImageSize = image.data.size();
  set.pCounterDataImage = image.data.data();
  const bool user = image.collection == Collection::kUserRanges;
  set.range = user ? CUPTI_UserRange : CUPTI_AutoRange;
  set.replayMode = user ? CUPTI_UserReplay : CUPTI_KernelReplay;
  set.maxRangesPerPass = image.ranges;
  set.numNestingLevels = 1;
  set.minNestingLevel = 1;
  set.passIndex = 0;
  set.targetNestingLevel = 1;
  ROOFLINE_CUPTI_CALL(cuptiRangeProfilerSetConfig(&set));
}

void ProfilerSession::start() {
  auto start =
      make_params<CUpti_RangeProfiler_Start_Params>(CUpti_RangeProfiler_Start_Params_STRUCT_SIZE);
  start.pRangeProfilerObject = object_;
  ROOFLINE_CUPTI_CALL(cuptiRangeProfilerStart(&start));
  started_ = true;
}

bool ProfilerSession::stop() {
  if (range_open_) {  // a launch whose exit never came: close its range first
    auto pop = make_params<CUpti_RangeProfiler_PopRange_Params>(
        CUpti_RangeProfiler_PopRange_Params_STRUCT_SIZE);
    pop.pRangeProfilerObject = object_;
    range_open_ = false;
    cuptiRangeProfilerPopRange(&pop);
  }
  auto stop =
      make_params<CUpti_RangeProfiler_Stop_Params>(CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE);
  stop.pRangeProfilerObject = object_;
  started_ = false;
  ROOFLINE_CUPTI_CALL(cuptiRangeProfilerStop(&stop));
  return stop.isAllPassSubmitted != 0;
}

void ProfilerSession::push_range(const std::string& name) {
  auto push = make_params<CUpti_RangeProfiler_PushRange_Params>(
      CUpti_RangeProfiler_PushRange_Params_STRUCT_SIZE);
  push.pRangeProfilerObject = object_;
  push.pRangeName = name.c_str();
  ROOFLINE_CUPTI_CALL(cuptiRangeProfilerPushRange(&push));
  range_open_ = true;
}

void ProfilerSession::pop_range() {
  auto pop = make_params<CUpti_RangeProfiler_PopRange_Params>(
      CUpti_RangeProfiler_PopRange_Params_STRUCT_SIZE);
  pop.pRangeProfilerObject = object_;
  range_open_ = false;
  ROOFLINE_CUPTI_CALL(cuptiRangeProfilerPopRange(&pop));
}

std::size_t ProfilerSession::decode() {
  auto decode = make_params<CUpti_RangeProfiler_DecodeData_Params>(
      CUpti_RangeProfiler_DecodeData_Params_STRUCT_SIZE);
  decode.pRangeProfilerObject = object_;
  ROOFLINE_CUPTI_CALL(cuptiRangeProfilerDecodeData(&decode));
  return decode.numOfRangeDropped;
}

std::vector<RangeValues> ProfilerSession::evaluate(const CounterDataImage& image) const {
  return evaluate_image(*host_, image.data, metrics_, /*checked=*/false);
}

}  // namespace roofline::gpu::cupti
