// The host half of CUPTI's profiler (cupti_profiler_host.h): host objects, chip and metric
// checks, config images. Needs libcupti only, no GPU and no driver. Internal to
// roofline_profiler; MetricHost (range_profiler.hpp) is its public face.
//
// Learnt on CUDA 13.0's CUPTI:
//   - A host object that once rejected a metric in cuptiProfilerHostConfigAddMetrics stays
//     broken: every later add fails and its config has 0 passes. So every name is checked on a
//     fresh scratch host object (about 3 ms each after the first), and each config image is
//     built on a fresh host object.
//   - cuptiProfilerHostGetMetricProperties accepts names a config refuses (a counter without
//     its rollup, "dram__bytes_read"), so metric checks ask ConfigAddMetrics, which is the truth.
#pragma once

#include <cupti_profiler_host.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace roofline::gpu::cupti {

// Move-only owner of a CUpti_Profiler_Host_Object for one chip.
class HostObject {
 public:
  // `counter_availability`: the context's image (profiler_session.hpp), or null offline.
  HostObject(const std::string& chip, const std::vector<std::uint8_t>* counter_availability);
  ~HostObject();
  HostObject(HostObject&& other) noexcept : object_(std::exchange(other.object_, nullptr)) {}
  HostObject& operator=(HostObject&&) = delete;
  HostObject(const HostObject&) = delete;
  HostObject& operator=(const HostObject&) = delete;

  CUpti_Profiler_Host_Object* get() const { return object_; }

 private:
  CUpti_Profiler_Host_Object* object_ = nullptr;
};

std::vector<std::string> supported_chip_list();
// Throws ProfilerError(kUnsupportedDevice) naming the chips this CUPTI supports.
void require_supported_chip(const std::string& chip);
// True when a config on `chip` accepts `metric` (checked on a scratch host object).
bool metric_accepted(const std::string& chip, const std::string& metric);
// Throws ProfilerError(kUnknownMetric) for an empty list or the first metric refused.
void require_metrics(const std::string& chip, const std::vector<std::string>& metrics);
// Config image for `metrics` on `host`, a fresh host object of `chip`.
std::vector<std::uint8_t> build_config(const HostObject& host, const std::string& chip,
                                       const std::vector<std::string>& metrics);
// Replay passes the config needs (at least 1).
int passes_of(const std::vector<std::uint8_t>& config_image);

}  // namespace roofline::gpu::cupti
