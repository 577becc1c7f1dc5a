#include "lib/inject/cache_flush.hpp"

#include <algorithm>
#include <stdexcept>

// The PTX of flush_l2.cu (embed_text.cmake) and the fatbin of flush_icache.cmake
// (embed_binary.cmake), embedded at build time.
extern const char cuflash_roofline_flush_ptx[];
extern const unsigned char cuflash_roofline_icache_fatbin[];

namespace roofline::inject {
namespace {

void check(const Driver& driver, const char* call, CUresult result) {
  if (result != CUDA_SUCCESS) throw std::runtime_error(driver.describe(call, result));
}

int attribute(const Driver& driver, CUdevice device, CUdevice_attribute which) {
  int value = 0;
  check(driver, "cuDeviceGetAttribute", driver.device_get_attribute(&value, which, device));
  return value;
}

// The icache flush's CTA: one warp per segment of flush_icache.cmake (CMakeLists.txt sets both).
constexpr unsigned kIcacheThreads = ROOFLINE_ICACHE_FLUSH_WARPS * 32;
// The L2 flush's CTAs: 4 per SM of 256 threads.
constexpr unsigned kL2Threads = 256;

}  // namespace

CacheFlush::CacheFlush(const Driver& driver, CUdevice device) : driver_(driver) {
  const int l2_bytes = attribute(driver, device, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE);
  const int sms = attribute(driver, device, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
  const int shared_per_sm =
      attribute(driver, device, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR);
  const int shared_per_block =
      attribute(driver, device, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
  // Twice the L2, in whole 16-byte vectors (the kernel's loads).
  const size_t bytes = (2 * static_cast<size_t>(l2_bytes > 0 ? l2_bytes : (64 << 20))) / 16 * 16;
  vectors_ = bytes / 16;
  sms_ = static_cast<unsigned>(sms > 0 ? sms : 1);
  blocks_ = 4 * sms_;
  // More than half of an SM's shared memory: no SM runs two of the icache flush's CTAs, so the
  // grid of one CTA per SM reaches every SM of an idle GPU (within what one CTA may ask for).
  icache_shared_ = static_cast<unsigned>(std::min(shared_per_sm / 2 + 1024, shared_per_block));
  try {
    check(driver, "cuModuleLoadData",
          driver.module_load_data(&l2_module_, cuflash_roofline_flush_ptx));
    check(driver, "cuModuleGetFunction",
          driver.module_get_function(&l2_function_, l2_module_, kFlushL2Kernel));
    check(driver, "cuModuleLoadData (instruction-cache flush)",
          driver.module_load_data(&icache_module_, cuflash_roofline_icache_fatbin));
    check(driver, "cuModuleGetFunction",
          driver.module_get_function(&icache_function_, icache_module_, kFlushIcacheKernel));
    check(
        driver, "cuFuncSetAttribute",
        driver.func_set_attribute(icache_function_, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                  static_cast<int>(icache_shared_)));
    check(driver, "cuMemAlloc", driver.mem_alloc(&buffer_, bytes));
    check(driver, "cuMemAlloc", driver.mem_alloc(&sink_, sizeof(unsigned)));
    // Zeros: the sum is 0 and never equals the 1 that run() passes, so nothing is stored.
    check(driver, "cuMemsetD32", driver.memset_d32(buffer_, 0, bytes / sizeof(unsigned)));
  } catch (...) {
    release();
    throw;
  }
}

CacheFlush::~CacheFlush() {
  release();
}

void CacheFlush::release() {
  // Failures here leave memory to the context's own teardown; nothing else to do.
  if (sink_ != 0) driver_.mem_free(sink_);
  if (buffer_ != 0) driver_.mem_free(buffer_);
  if (icache_module_ != nullptr) driver_.module_unload(icache_module_);
  if (l2_module_ != nullptr) driver_.module_unload(l2_module_);
  sink_ = buffer_ = 0;
  l2_module_ = icache_module_ = nullptr;
}

void CacheFlush::run(CUstream stream) {
  unsigned never = 1;
  // The seed is the flush's own: any value gives the same code path.
  unsigned seed = 0;
  void* icache_args[] = {&seed, &never, &sink_};
  check(driver_, "cuLaunchKernel (instruction-cache flush)",
        driver_.launch_kernel(icache_function_, sms_, 1, 1, kIcacheThreads, 1, 1, icache_shared_,
                              stream, icache_args, nullptr));
  // The L2 flush second: the icache flush's code leaves L2 with the rest.
  void* args[] = {&buffer_, &vectors_, &never, &sink_};
  check(driver_, "cuLaunchKernel (L2 flush)",
        driver_.launch_kernel(l2_function_, blocks_, 1, 1, kL2Threads, 1, 1, 0, stream, args,
                              nullptr));
  check(driver_, "cuStreamSynchronize (L2 flush)", driver_.stream_synchronize(stream));
}

}  // namespace roofline::inject
