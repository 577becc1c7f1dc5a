// The busy-wait behind `run --test-slowdown`: one block of one thread that spins on the SM's
// cycle counter. It reads and writes no memory, so a range that contains it counts the same
// bytes and FLOPs; only its time grows. And the SM census behind gpu.green_context.
#include "kernels/test_aids.hpp"

#include <vector>

#include "kernels/common.cuh"

namespace roofline::kernels {
namespace {

__global__ void spin_kernel(long long cycles) {
  const long long start = clock64();
  while (clock64() - start < cycles) {
  }
}

// Each CTA marks the SM it runs on (%smid), then spins so that the launch lasts long enough for
// the scheduler to use every SM it may.
__global__ void sm_census_kernel(unsigned* seen, unsigned slots) {
  unsigned sm = 0;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
  if (threadIdx.x == 0 && sm < slots) atomicOr(&seen[sm], 1u);
  const long long start = clock64();
  while (clock64() - start < 40000) {
  }
}

}  // namespace

cudaError_t count_sms_used(int blocks, int* distinct) {
  if (blocks < 1 || distinct == nullptr) return cudaErrorInvalidValue;
  constexpr unsigned kSlots = 1024;  // above any GPU's SM ids
  *distinct = 0;
  Scratch seen;
  ROOFLINE_RETURN_IF_ERROR(seen.allocate(kSlots * sizeof(unsigned)));
  ROOFLINE_RETURN_IF_ERROR(cudaMemset(seen.as<unsigned>(), 0, kSlots * sizeof(unsigned)));
  sm_census_kernel<<<blocks, 32>>>(seen.as<unsigned>(), kSlots);
  ROOFLINE_RETURN_IF_LAUNCH_FAILED();
  std::vector<unsigned> host(kSlots, 0);
  ROOFLINE_RETURN_IF_ERROR(cudaMemcpy(host.data(), seen.as<unsigned>(), kSlots * sizeof(unsigned),
                                      cudaMemcpyDeviceToHost));
  for (unsigned v : host) *distinct += v != 0;
  return seen.free();
}

cudaError_t spin_cycles(long long cycles, cudaStream_t stream) {
  if (cycles < 0) return cudaErrorInvalidValue;
  spin_kernel<<<1, 1, 0, stream>>>(cycles);
  ROOFLINE_RETURN_IF_LAUNCH_FAILED();
  return cudaSuccess;
}

}  // namespace roofline::kernels
