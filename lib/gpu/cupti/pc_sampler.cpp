#include "lib/gpu/cupti/pc_sampler.hpp"

#include <cuda.h>
#include <cuda_runtime_api.h>
#include <cupti.h>
#include <cupti_pcsampling.h>
#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <optional>

#include "lib/core/base/stopwatch.hpp"
#include "lib/gpu/cupti/call.hpp"

namespace roofline::gpu::cupti {
namespace {

// PCs per read of the sampled data; a kernel with more is read in several.
constexpr std::size_t kPcsPerRead = 4096;
// The hardware buffer the samples land in before CUPTI parses them.
constexpr std::size_t kHardwareBufferBytes = std::size_t{64} << 20;

CUcontext as_context(void* c) {
  return static_cast<CUcontext>(c);
}

// The buffer CUPTI fills: kPcsPerRead records of `reasons` stall-reason slots each, owned.
class DataBuffer {
 public:
  explicit DataBuffer(std::size_t reasons)
      : records_(kPcsPerRead), slots_(kPcsPerRead * std::max<std::size_t>(reasons, 1)) {
    data_.size = sizeof(CUpti_PCSamplingData);
    data_.collectNumPcs = kPcsPerRead;
    data_.pPcData = records_.data();
    for (std::size_t i = 0; i < kPcsPerRead; ++i) {
      records_[i].size = sizeof(CUpti_PCSamplingPCData);
      records_[i].stallReason = slots_.data() + i * std::max<std::size_t>(reasons, 1);
    }
  }
  CUpti_PCSamplingData* get() { return &data_; }

 private:
  std::vector<CUpti_PCSamplingPCData> records_;
  std::vector<CUpti_PCSamplingStallReason> slots_;
  CUpti_PCSamplingData data_{};
};

template <class Params>
Params context_params(std::size_t size, CUcontext context) {
  Params p{};
  p.size = size;
  p.ctx = context;
  return p;
}

void set_attributes(CUcontext context, std::vector<CUpti_PCSamplingConfigurationInfo>& infos) {
  auto params = context_params<CUpti_PCSamplingConfigurationInfoParams>(
      CUpti_PCSamplingConfigurationInfoParamsSize, context);
  params.numAttributes = infos.size();
  params.pPCSamplingConfigurationInfo = infos.data();
  ROOFLINE_CUPTI_CALL(cuptiPCSamplingSetConfigurationAttribute(&params));
}

std::vector<CUpti_PCSamplingConfigurationInfo> period_attribute(int period_log2) {
  std::vector<CUpti_PCSamplingConfigurationInfo> infos(1);
  infos[0].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_SAMPLING_PERIOD;
  infos[0].attributeData.samplingPeriodData.samplingPeriod =
      static_cast<std::uint32_t>(std::clamp(period_log2, 5, 31));
  return infos;
}

}  // namespace

// The enabled session, disabled with it: CUPTI's buffer for what the reads leave (written at
// disable) and the one the reads fill, members so that they outlive the disable.
struct PcSession {
  explicit PcSession(CUcontext c) : context(c) {}
  ~PcSession() {
    auto p =
        context_params<CUpti_PCSamplingDisableParams>(CUpti_PCSamplingDisableParamsSize, context);
    cuptiPCSamplingDisable(&p);
  }
  PcSession(const PcSession&) = delete;
  PcSession& operator=(const PcSession&) = delete;

  CUcontext context;
  std::optional<DataBuffer> configured;
  std::optional<DataBuffer> read;
};

std::vector<PcSample> pc_samples_of(const SampledRange& range) {
  std::vector<PcSample> out;
  out.reserve(range.pcs.size());
  for (const SampledPc& pc : range.pcs) {
    PcSample sample;
    sample.function = pc.function;
    sample.cubin_crc = pc.cubin_crc;
    sample.pc_offset = pc.pc_offset;
    sample.reasons = ncu_stall_reasons(pc.reasons);
    out.push_back(std::move(sample));
  }
  return out;
}

StallRangeTotals stall_totals_of(const SampledRange& range) {
  return {range.total_samples, range.dropped_samples, range.non_user_samples,
          range.hardware_buffer_full};
}

PcSampler::~PcSampler() = default;

PcSampler::PcSampler() {
  using GetCurrent = CUresult (*)(CUcontext*);
  ROOFLINE_PROFILER_CUDA_CALL(cudaFree(nullptr));  // the primary context, current
  CUcontext context = nullptr;
  if (driver_function<GetCurrent>("cuCtxGetCurrent")(&context) != CUDA_SUCCESS ||
      context == nullptr)
    throw ProfilerError(ProfilerErrorKind::kNoDevice, "PC sampling: no current CUDA context");
  context_ = context;
}

PcSampler::PcSampler(void* context) : context_(context) {
  if (context_ == nullptr)
    throw ProfilerError(ProfilerErrorKind::kNoDevice, "PC sampling: no CUDA context");
}

// Waits for the current context's work: the driver's call, looked up in the libcuda already
// loaded (the context need not be the runtime's, and the injection library calls no runtime
// function inside the program's driver calls).
void PcSampler::synchronize() const {
  using Synchronize = CUresult (*)();
  static const Synchronize sync = [] {
    void* cuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    return cuda != nullptr ? reinterpret_cast<Synchronize>(dlsym(cuda, "cuCtxSynchronize"))
                           : nullptr;
  }();
  if (sync == nullptr)
    throw ProfilerError(ProfilerErrorKind::kNoDevice, "PC sampling: no CUDA driver loaded");
  if (const CUresult r = sync(); r != CUDA_SUCCESS)
    throw ProfilerError(ProfilerErrorKind::kOther,
                        "PC sampling: cuCtxSynchronize failed (" + std::to_string(int(r)) + ")");
}

// The device's stall reasons (CUPTI answers only while sampling is enabled in the context).
void PcSampler::read_reasons() {
  const CUcontext context = as_context(context_);
  std::size_t count = 0;
  auto num = context_params<CUpti_PCSamplingGetNumStallReasonsParams>(
      CUpti_PCSamplingGetNumStallReasonsParamsSize, context);
  num.numStallReasons = &count;
  ROOFLINE_CUPTI_CALL(cuptiPCSamplingGetNumStallReasons(&num));
  reason_indices_.assign(count, 0);
  std::vector<std::unique_ptr<char[]>> names;
  std::vector<char*> name_pointers;
  for (std::size_t i = 0; i < count; ++i) {
    names.push_back(std::make_unique<char[]>(CUPTI_STALL_REASON_STRING_SIZE));
    name_pointers.push_back(names.back().get());
  }
  auto reasons = context_params<CUpti_PCSamplingGetStallReasonsParams>(
      CUpti_PCSamplingGetStallReasonsParamsSize, context);
  reasons.numStallReasons = count;
  reasons.stallReasonIndex = reason_indices_.data();
  reasons.stallReasons = name_pointers.data();
  ROOFLINE_CUPTI_CALL(cuptiPCSamplingGetStallReasons(&reasons));
  reason_names_.clear();
  for (std::size_t i = 0; i < count; ++i) reason_names_.emplace_back(name_pointers[i]);
}

void PcSampler::open_session(int period_log2) {
  const CUcontext context = as_context(context_);
  auto enable =
      context_params<CUpti_PCSamplingEnableParams>(CUpti_PCSamplingEnableParamsSize, context);
  ROOFLINE_CUPTI_CALL(cuptiPCSamplingEnable(&enable));
  // The session owns the enable from here (sample() drops it when what follows throws).
  session_ = std::make_unique<PcSession>(context);
  if (reason_indices_.empty()) read_reasons();
  session_->configured.emplace(reason_indices_.size());
  session_->read.emplace(reason_indices_.size());
  std::vector<CUpti_PCSamplingConfigurationInfo> infos = period_attribute(period_log2);
  infos.resize(7);
  infos[1].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_STALL_REASON;
  infos[1].attributeData.stallReasonData.stallReasonCount = reason_indices_.size();
  infos[1].attributeData.stallReasonData.pStallReasonIndex = reason_indices_.data();
  infos[2].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_COLLECTION_MODE;
  infos[2].attributeData.collectionModeData.collectionMode =
      CUPTI_PC_SAMPLING_COLLECTION_MODE_KERNEL_SERIALIZED;
  infos[3].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_ENABLE_START_STOP_CONTROL;
  infos[3].attributeData.enableStartStopControlData.enableStartStopControl = 1;
  infos[4].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_OUTPUT_DATA_FORMAT;
  infos[4].attributeData.outputDataFormatData.outputDataFormat =
      CUPTI_PC_SAMPLING_OUTPUT_DATA_FORMAT_PARSED;
  infos[5].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_SAMPLING_DATA_BUFFER;
  infos[5].attributeData.samplingDataBufferData.samplingDataBuffer = session_->configured->get();
  // CUPTI's default hardware buffer is 512 MB, set up inside the first sampled launch of each
  // enable: that launch took 0.29 s with it and 0.09 s with 64 MB (H100, 2026-12-06). The
  // periods chosen aim at kStallTargetSamples samples a launch, a few MB, and CUPTI's worker
  // drains the buffer while the kernel runs (a fill is counted and reported).
  infos[6].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_HARDWARE_BUFFER_SIZE;
  infos[6].attributeData.hardwareBufferSizeData.hardwareBufferSize = kHardwareBufferBytes;
  set_attributes(context, infos);
}

SampledRange PcSampler::sample(int period_log2, const std::function<void()>& work) {
  start(period_log2);
  try {
    const Stopwatch watch(seconds_.work);
    work();
  } catch (...) {
    session_.reset();  // disabled; the next range enables anew
    period_log2_ = 0;
    throw;
  }
  return stop();
}

void PcSampler::start(int period_log2) {
  const CUcontext context = as_context(context_);
  try {
    {
      // A change of period costs about 0.4 s on an H100 (CUPTI 13.0), paid at the next sampled
      // launch: it is set only when it changes.
      const Stopwatch watch(seconds_.configure);
      if (!session_) {
        open_session(period_log2);
        period_log2_ = period_log2;
      } else if (period_log2 != period_log2_) {
        std::vector<CUpti_PCSamplingConfigurationInfo> period = period_attribute(period_log2);
        set_attributes(context, period);
        period_log2_ = period_log2;
      }
    }
    {
      const Stopwatch watch(seconds_.work);
      synchronize();
    }
    const Stopwatch watch(seconds_.start);
    auto start =
        context_params<CUpti_PCSamplingStartParams>(CUpti_PCSamplingStartParamsSize, context);
    ROOFLINE_CUPTI_CALL(cuptiPCSamplingStart(&start));
  } catch (...) {
    session_.reset();  // disabled; the next range enables anew
    period_log2_ = 0;
    throw;
  }
}

SampledRange PcSampler::stop() {
  try {
    return stop_and_read();
  } catch (...) {
    session_.reset();
    period_log2_ = 0;
    throw;
  }
}

SampledRange PcSampler::stop_and_read() {
  if (!session_)
    throw ProfilerError(ProfilerErrorKind::kOther, "PC sampling: stop() without a started range");
  const CUcontext context = as_context(context_);
  {
    const Stopwatch watch(seconds_.work);
    synchronize();
  }
  {
    const Stopwatch watch(seconds_.stop);
    auto stop = context_params<CUpti_PCSamplingStopParams>(CUpti_PCSamplingStopParamsSize, context);
    ROOFLINE_CUPTI_CALL(cuptiPCSamplingStop(&stop));
  }
  const Stopwatch read_watch(seconds_.read);

  // Read until CUPTI has no PC left (the same PC may come in several reads): the next range
  // starts from an empty buffer.
  SampledRange out;
  std::map<std::tuple<std::uint64_t, std::string, std::uint64_t>, std::size_t> index;
  const auto take = [&](const CUpti_PCSamplingData& data) {
    out.total_samples += data.totalSamples;
    out.dropped_samples += data.droppedSamples;
    out.non_user_samples += data.nonUsrKernelsTotalSamples;
    out.hardware_buffer_full = out.hardware_buffer_full || data.hardwareBufferFull != 0;
    for (std::size_t i = 0; i < data.totalNumPcs; ++i) {
      const CUpti_PCSamplingPCData& pc = data.pPcData[i];
      const std::string function = pc.functionName != nullptr ? pc.functionName : "";
      const auto key = std::make_tuple(pc.cubinCrc, function, pc.pcOffset);
      auto [at, added] = index.try_emplace(key, out.pcs.size());
      if (added) out.pcs.push_back({function, pc.cubinCrc, pc.pcOffset, {}});
      SampledPc& into = out.pcs[at->second];
      for (std::size_t r = 0; r < pc.stallReasonCount; ++r) {
        const CUpti_PCSamplingStallReason& reason = pc.stallReason[r];
        const auto it = std::find(reason_indices_.begin(), reason_indices_.end(),
                                  reason.pcSamplingStallReasonIndex);
        if (it == reason_indices_.end() || reason.samples == 0) continue;
        into.reasons[reason_names_[static_cast<std::size_t>(it - reason_indices_.begin())]] +=
            reason.samples;
      }
    }
  };
  for (int reads = 0; reads < 1 << 20; ++reads) {
    auto get =
        context_params<CUpti_PCSamplingGetDataParams>(CUpti_PCSamplingGetDataParamsSize, context);
    get.pcSamplingData = session_->read->get();
    ROOFLINE_CUPTI_CALL(cuptiPCSamplingGetData(&get));
    take(*session_->read->get());
    if (session_->read->get()->remainingNumPcs == 0) break;
  }
  return out;
}

}  // namespace roofline::gpu::cupti
