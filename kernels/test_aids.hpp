// Test aids for checking the CI gate (scripts/gate_check.sh): kernels that make a measured
// launch sequence slower by a known amount without touching memory. Plain host header.
#pragma once

#include <cuda_runtime_api.h>

namespace roofline::kernels {

// One thread busy-waits `cycles` SM clock cycles, touching no memory, so that a launch sequence
// it joins takes a known time longer.
cudaError_t spin_cycles(long long cycles, cudaStream_t stream);

}  // namespace roofline::kernels
