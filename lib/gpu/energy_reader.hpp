// The board's energy counter (NVML) read on a thread of its own: every change of its value
// kept with the host time it was seen at, for energy_from_readings (domain/energy.hpp). The
// counter advances in steps (about every 100 ms on the H200) and one read takes a few
// milliseconds, so the thread polls it every 0.2 ms and keeps only the changes.
#pragma once

#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>
#include <vector>

namespace roofline::gpu {

class EnergyReader {
 public:
  using Clock = std::chrono::steady_clock;

  // Starts reading the counter of NVML device `handle` (nvml.hpp); times are seconds since
  // `origin`.
  EnergyReader(void* handle, Clock::time_point origin);
  ~EnergyReader();  // stops the thread
  EnergyReader(const EnergyReader&) = delete;
  EnergyReader& operator=(const EnergyReader&) = delete;

  // Stops reading; the readings below are complete (and stable) only after it.
  void stop();
  const std::vector<double>& seconds() const { return seconds_; }
  const std::vector<double>& millijoules() const { return millijoules_; }

 private:
  void poll();

  void* handle_;
  Clock::time_point origin_;
  std::atomic<bool> stopping_{false};
  std::mutex mutex_;
  std::vector<double> seconds_, millijoules_;
  std::thread thread_;  // last: started once the members above exist
};

}  // namespace roofline::gpu
