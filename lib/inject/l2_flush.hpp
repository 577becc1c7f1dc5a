// An L2 flush in the program's context, for `--cache cold`: a buffer twice the L2 size, read
// once by cuflash_roofline_flush_l2 (flush_l2.cu, loaded as PTX) before a profiled launch.
#pragma once

#include <cuda.h>

#include "lib/inject/driver.hpp"

namespace roofline::inject {

// Move-only owner of the buffer and module in one context. Construct and destroy with that
// context current. Throws std::runtime_error with the driver's message.
class L2Flush {
 public:
  L2Flush(const Driver& driver, CUdevice device);
  ~L2Flush();
  L2Flush(const L2Flush&) = delete;
  L2Flush& operator=(const L2Flush&) = delete;

  // Reads the whole buffer on `stream` and waits for it, so that the next kernel starts
  // with L2 holding only the flush's clean lines.
  void run(CUstream stream);

 private:
  void release();

  const Driver& driver_;
  CUmodule module_ = nullptr;
  CUfunction function_ = nullptr;
  CUdeviceptr buffer_ = 0;
  CUdeviceptr sink_ = 0;
  unsigned long long vectors_ = 0;  // 16-byte vectors in the buffer
  unsigned blocks_ = 0;
};

}  // namespace roofline::inject
