// The micro-kernels' clock (calibration.hpp): block 0's thread 0 brackets the kernel's work with
// the SM cycle counter and the global timer, so the runner knows the SM clock a rate was reached
// at (cycles ÷ nanoseconds).
#pragma once

namespace roofline::kernels {

__device__ __forceinline__ unsigned long long global_timer_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

struct ClockProbe {
  unsigned long long cycles0 = 0, ns0 = 0;
  __device__ __forceinline__ void start() {
    if (blockIdx.x == 0 && threadIdx.x == 0) {
      ns0 = global_timer_ns();
      cycles0 = clock64();
    }
  }
  // `out` (2 values: cycles, nanoseconds) may be null: nothing is written.
  __device__ __forceinline__ void stop(unsigned long long* out) {
    if (out != nullptr && blockIdx.x == 0 && threadIdx.x == 0) {
      const unsigned long long cycles = clock64() - cycles0;
      out[1] = global_timer_ns() - ns0;
      out[0] = cycles;
    }
  }
};

}  // namespace roofline::kernels
