#include "lib/gpu/clock_sampler.hpp"

#include <algorithm>
#include <chrono>

#include "lib/gpu/nvml.hpp"

namespace roofline::gpu {

double ClockSamples::median_mhz() const {
  if (sm_clock_mhz.empty()) return 0;
  std::vector<unsigned> sorted = sm_clock_mhz;
  std::sort(sorted.begin(), sorted.end());
  const std::size_t n = sorted.size();
  return n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0;
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
