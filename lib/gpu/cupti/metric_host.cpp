// The host half: HostObject, chip and metric checks, config images, and MetricHost.
#include "lib/gpu/cupti/metric_host.hpp"

#include <cupti_version.h>

#include "lib/gpu/cupti/call.hpp"
#include "lib/gpu/cupti/counter_data_image.hpp"
#include "lib/gpu/range_profiler.hpp"

namespace roofline::gpu {
namespace cupti {
namespace {

std::string joined(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& item : items) out += (out.empty() ? "" : ", ") + item;
  return out;
}

}  // namespace

HostObject::HostObject(const std::string& chip,
                       const std::vector<std::uint8_t>* counter_availability) {
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

HostObject::~HostObject() {
  if (object_ == nullptr) return;
  auto params = make_params<CUpti_Profiler_Host_Deinitialize_Params>(
      CUpti_Profiler_Host_Deinitialize_Params_STRUCT_SIZE);
  params.pHostObject = object_;
  cuptiProfilerHostDeinitialize(&params);  // nothing to do about a failure here
}

std::vector<std::string> supported_chip_list() {
  auto params = make_params<CUpti_Profiler_Host_GetSupportedChips_Params>(
      CUpti_Profiler_Host_GetSupportedChips_Params_STRUCT_SIZE);
  ROOFLINE_CUPTI_CALL(cuptiProfilerHostGetSupportedChips(&params));
  std::vector<std::string> chips;
  chips.reserve(params.numChips);
  for (std::size_t i = 0; i < params.numChips; ++i) chips.emplace_back(params.ppChipNames[i]);
  return chips;
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

// A fresh host object per name: one rejected name would poison a shared one.
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

// The names are checked one by one only when CUPTI refuses the set, to name the culprit (about
// 4 ms a name).
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

}  // namespace cupti

// =============================================================================================
// MetricHost

struct MetricHost::Impl {
  explicit Impl(std::string chip_name) : chip(std::move(chip_name)), host(chip, nullptr) {}
  std::string chip;
  cupti::HostObject host;  // metrics are never added to it: evaluation only
};

MetricHost::MetricHost(const std::string& chip) {
  cupti::require_supported_chip(chip);
  impl_ = std::make_unique<Impl>(chip);
}

MetricHost::~MetricHost() = default;
MetricHost::MetricHost(MetricHost&& other) noexcept = default;
MetricHost& MetricHost::operator=(MetricHost&& other) noexcept = default;

std::vector<std::string> MetricHost::supported_chips() {
  return cupti::supported_chip_list();
}

const std::string& MetricHost::chip() const {
  if (impl_ == nullptr) cupti::moved_from("MetricHost");
  return impl_->chip;
}

bool MetricHost::has_metric(const std::string& name) const {
  return cupti::metric_accepted(chip(), name);
}

std::vector<std::uint8_t> MetricHost::config_image(const std::vector<std::string>& metrics) const {
  cupti::HostObject fresh(chip(), nullptr);
  return cupti::build_config(fresh, chip(), metrics);
}

int MetricHost::num_passes(const std::vector<std::uint8_t>& config_image) const {
  return cupti::passes_of(config_image);
}

std::vector<RangeValues> MetricHost::evaluate(const std::vector<std::uint8_t>& counter_data_image,
                                              const std::vector<std::string>& metrics) const {
  cupti::require_metrics(chip(), metrics);
  return cupti::evaluate_image(impl_->host, counter_data_image, metrics, /*checked=*/true);
}

}  // namespace roofline::gpu
