// What the board did while a timed region ran: its SM clock, sampled through NVML every
// millisecond on a thread of its own, and whether it held that clock down for power or heat.
// An H200 running a long tensor kernel sits at its power cap: the clock then moves within the
// region, so one reading before or after it says little (docs/methodology.md, "Clocks while
// timed").
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

namespace roofline::gpu {

// The samples of one point over all its timed regions.
struct ClockSamples {
  std::vector<double> sm_clock_mhz;
  std::uint64_t reasons = 0;  // nvml clock-event reason bits seen in any sample
  bool reasons_known = false;

  double median_mhz() const;  // 0 without samples
  // Timing::clock_limit's words for the power and thermal bits seen; empty when unknown.
  std::string limit() const;
};

// Samples from construction until stop() (or destruction) into `into`; one sample at stop()
// at least, so that a region shorter than the period still has one. Does nothing where NVML is
// not available (`handle` nullptr).
class ClockSampler {
 public:
  ClockSampler(void* handle, ClockSamples& into);
  ~ClockSampler();
  ClockSampler(const ClockSampler&) = delete;
  ClockSampler& operator=(const ClockSampler&) = delete;

  void stop();

 private:
  void sample();

  void* handle_;
  ClockSamples& into_;
  std::atomic<bool> stopping_{false};
  std::thread thread_;
};

}  // namespace roofline::gpu
