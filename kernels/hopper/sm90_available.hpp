// Whether a kernel of the sm_90a-only target (kernels/CMakeLists.txt: roofline_kernels_sm90) can
// run on the current device: compute capability 9.0 and an image of the kernel in this build.
// Host code, for the micro-kernels of `calibrate` that other GPUs skip.
#pragma once

#include <cuda_runtime_api.h>

namespace roofline::kernels {

template <typename Kernel>
bool sm90a_kernel_available(Kernel kernel) {
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess) return false;
  int major = 0, minor = 0;
  if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) != cudaSuccess ||
      cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device) != cudaSuccess)
    return false;
  cudaFuncAttributes attributes{};
  return major == 9 && minor == 0 && cudaFuncGetAttributes(&attributes, kernel) == cudaSuccess;
}

// Ready to launch `kernel` with `shared_bytes` of dynamic shared memory:
// cudaErrorNoKernelImageForDevice where it cannot run on this device (the error is cleared).
template <typename Kernel>
cudaError_t sm90a_prepare_launch(Kernel kernel, int shared_bytes) {
  if (!sm90a_kernel_available(kernel)) {
    cudaGetLastError();  // a missing kernel image is an answer here, not a sticky error
    return cudaErrorNoKernelImageForDevice;
  }
  return cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, shared_bytes);
}

// Resident blocks per SM of `kernel` (`threads`, `shared_bytes` of dynamic shared memory); 0,
// and success, where it cannot run on this device.
template <typename Kernel>
cudaError_t sm90a_blocks_per_sm(Kernel kernel, int threads, int shared_bytes, int* blocks) {
  *blocks = 0;
  const cudaError_t ready = sm90a_prepare_launch(kernel, shared_bytes);
  if (ready == cudaErrorNoKernelImageForDevice) return cudaSuccess;
  if (ready != cudaSuccess) return ready;
  return cudaOccupancyMaxActiveBlocksPerMultiprocessor(blocks, kernel, threads, shared_bytes);
}

}  // namespace roofline::kernels
