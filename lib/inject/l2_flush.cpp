#include "lib/inject/l2_flush.hpp"

#include <stdexcept>

// The PTX of flush_l2.cu, embedded at build time (embed_text.cmake).
extern const char cuflash_roofline_flush_ptx[];

namespace roofline::inject {
namespace {

void check(const Driver& driver, const char* call, CUresult result) {
  if (result != CUDA_SUCCESS) throw std::runtime_error(driver.describe(call, result));
}

}  // namespace

L2Flush::L2Flush(const Driver& driver, CUdevice device) : driver_(driver) {
  int l2_bytes = 0, sms = 0;
  check(driver, "cuDeviceGetAttribute",
        driver.device_get_attribute(&l2_bytes, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, device));
  check(driver, "cuDeviceGetAttribute",
        driver.device_get_attribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, device));
  // Twice the L2, in whole 16-byte vectors (the kernel's loads).
  const size_t bytes = (2 * static_cast<size_t>(l2_bytes > 0 ? l2_bytes : (64 << 20))) / 16 * 16;
  vectors_ = bytes / 16;
  blocks_ = static_cast<unsigned>(4 * (sms > 0 ? sms : 1));
  try {
    check(driver, "cuModuleLoadData",
          driver.module_load_data(&module_, cuflash_roofline_flush_ptx));
    check(driver, "cuModuleGetFunction",
          driver.module_get_function(&function_, module_, "cuflash_roofline_flush_l2"));
    check(driver, "cuMemAlloc", driver.mem_alloc(&buffer_, bytes));
    check(driver, "cuMemAlloc", driver.mem_alloc(&sink_, sizeof(unsigned)));
    // Zeros: the sum is 0 and never equals the 1 that run() passes, so nothing is stored.
    check(driver, "cuMemsetD32", driver.memset_d32(buffer_, 0, bytes / sizeof(unsigned)));
  } catch (...) {
    release();
    throw;
  }
}

L2Flush::~L2Flush() {
  release();
}

void L2Flush::release() {
  // Failures here leave memory to the context's own teardown; nothing else to do.
  if (sink_ != 0) driver_.mem_free(sink_);
  if (buffer_ != 0) driver_.mem_free(buffer_);
  if (module_ != nullptr) driver_.module_unload(module_);
  sink_ = buffer_ = 0;
  module_ = nullptr;
}

void L2Flush::run(CUstream stream) {
  unsigned never = 1;
  void* args[] = {&buffer_, &vectors_, &never, &sink_};
  check(driver_, "cuLaunchKernel (L2 flush)",
        driver_.launch_kernel(function_, blocks_, 1, 1, 256, 1, 1, 0, stream, args, nullptr));
  check(driver_, "cuStreamSynchronize (L2 flush)", driver_.stream_synchronize(stream));
}

}  // namespace roofline::inject
