// The busy-wait behind `run --test-slowdown`: one block of one thread that spins on the SM's
// cycle counter. It reads and writes no memory, so a range that contains it counts the same
// bytes and FLOPs; only its time grows.
#include "kernels/test_aids.hpp"

#include "kernels/common.cuh"

namespace roofline::kernels {
namespace {

__global__ void spin_kernel(long long cycles) {
  const long long start = clock64();
  while (clock64() - start < cycles) {
  }
}

}  // namespace

cudaError_t spin_cycles(long long cycles, cudaStream_t stream) {
  if (cycles < 0) return cudaErrorInvalidValue;
  spin_kernel<<<1, 1, 0, stream>>>(cycles);
  ROOFLINE_RETURN_IF_LAUNCH_FAILED();
  return cudaSuccess;
}

}  // namespace roofline::kernels
