// Kernel time without counters: two CUDA events around a launch on its stream. Used for the
// launches of a process that could not have the GPU's counters (another process of the run
// kept them too long, or a profiler outside the run holds them): their rows get this time.
#pragma once

#include <cuda.h>

#include "lib/inject/driver.hpp"

namespace roofline::inject {

// Owner of the two events, in the context current at construction. Construct and destroy
// with that context current. Throws std::runtime_error with the driver's message.
class EventTimer {
 public:
  explicit EventTimer(const Driver& driver);
  ~EventTimer();
  EventTimer(const EventTimer&) = delete;
  EventTimer& operator=(const EventTimer&) = delete;

  // Before the launch, on its stream.
  void begin(CUstream stream);
  // After the launch, on the same stream: waits for the kernel, returns seconds between.
  double end(CUstream stream);

 private:
  const Driver& driver_;
  CUevent start_ = nullptr;
  CUevent stop_ = nullptr;
};

}  // namespace roofline::inject
