#include "lib/gpu/clock_sampler.hpp"

#include <chrono>

#include "lib/core/base/statistics.hpp"
#include "lib/gpu/nvml.hpp"

namespace roofline::gpu {

double ClockSamples::median_mhz() const {
  return sm_clock_mhz.empty() ? 0 : median(sm_clock_mhz);
}

std::string ClockSamples::limit() const {
  if (!reasons_known) return {};
  const bool power = (reasons & (nvml::kReasonSwPowerCap | nvml::kReasonHwPowerBrake)) != 0;
  const bool heat =
      (reasons & (nvml::kReasonSwThermal | nvml::kReasonHwThermal | nvml::kReasonHwSlowdown)) != 0;
  if (power && heat) return "power cap, thermal";
  if (power) return "power cap";
  if (heat) return "thermal";
  return "none";
}

ClockSampler::ClockSampler(void* handle, ClockSamples& into) : handle_(handle), into_(into) {
  if (handle_ == nullptr) return;
  thread_ = std::thread([this] {
    while (!stopping_.load(std::memory_order_relaxed)) {
      sample();
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  });
}

ClockSampler::~ClockSampler() {
  stop();
}

void ClockSampler::stop() {
  if (!thread_.joinable()) return;
  stopping_.store(true, std::memory_order_relaxed);
  thread_.join();
  sample();
}

// Only the sampling thread calls this until stop() has joined it.
void ClockSampler::sample() {
  if (const auto mhz = nvml::sm_clock_mhz(handle_)) into_.sm_clock_mhz.push_back(*mhz);
  if (const auto bits = nvml::clock_event_reasons(handle_)) {
    into_.reasons |= *bits;
    into_.reasons_known = true;
  }
}

}  // namespace roofline::gpu
