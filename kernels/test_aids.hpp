// Test aids: for the CI gate (scripts/gate_check.sh), a kernel that makes a measured launch
// sequence slower by a known amount without touching memory; for `run --sms`, a census of the
// SMs a launch ran on. Plain host header.
#pragma once

#include <cuda_runtime_api.h>

namespace roofline::kernels {

// One thread busy-waits `cycles` SM clock cycles, touching no memory, so that a launch sequence
// it joins takes a known time longer.
cudaError_t spin_cycles(long long cycles, cudaStream_t stream);

// How many distinct SMs the CTAs of one launch of `blocks` CTAs ran on (each CTA spins about
// 20 µs, so a few waves spread over every SM the context may use), counted on the current
// context's default stream; synchronises. Errors from the launch or the copy are returned.
cudaError_t count_sms_used(int blocks, int* distinct);

}  // namespace roofline::kernels
