// The cold caches of `--cache cold`, in the program's context, before a profiled launch, as
// `ncu --cache-control all` leaves them:
//   - the instruction caches: cuflash_roofline_flush_icache (flush_icache.cmake), one CTA per SM
//     of 4 warps running 4,096 distinct instructions each (256 KB of code, more than the
//     128 KB L1 instruction cache measured on Volta; Hopper's sizes are not published), so
//     that the kernel fetches its code again;
//   - L2: a buffer twice the L2 size, read once by cuflash_roofline_flush_l2 (flush_l2.cu).
#pragma once

#include <cuda.h>

#include "lib/inject/driver.hpp"

namespace roofline::inject {

// The names of the two kernels, which are never a program's (kernel_activity.cpp skips them).
inline constexpr const char* kFlushL2Kernel = "cuflash_roofline_flush_l2";
inline constexpr const char* kFlushIcacheKernel = "cuflash_roofline_flush_icache";

// Owner (not copyable) of the buffers and modules in one context. Construct and destroy with
// that context current. Throws std::runtime_error with the driver's message.
class CacheFlush {
 public:
  CacheFlush(const Driver& driver, CUdevice device);
  ~CacheFlush();
  CacheFlush(const CacheFlush&) = delete;
  CacheFlush& operator=(const CacheFlush&) = delete;

  // Runs both flushes on `stream` and waits for them, so that the next kernel starts with its
  // code in no SM's instruction cache and L2 holding only the flush's clean lines.
  void run(CUstream stream);

 private:
  void release();

  const Driver& driver_;
  CUmodule l2_module_ = nullptr;
  CUfunction l2_function_ = nullptr;
  CUmodule icache_module_ = nullptr;
  CUfunction icache_function_ = nullptr;
  CUdeviceptr buffer_ = 0;
  CUdeviceptr sink_ = 0;
  unsigned long long vectors_ = 0;  // 16-byte vectors in the buffer
  unsigned blocks_ = 0;             // of the L2 flush
  unsigned sms_ = 0;
  unsigned icache_shared_ = 0;  // dynamic shared bytes: one icache-flush CTA per SM
};

}  // namespace roofline::inject
