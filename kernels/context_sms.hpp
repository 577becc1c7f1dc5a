// How many SMs the launches of the current CUDA context may use: the whole device's count in a
// primary context, the partition's in a green context (`run --sms`). Kernels that size their
// grid to the GPU (flash-v3's persistent grids, flash-decode's split-KV plan) and cuBLAS's SM
// target read it, so that inside a green context of N SMs they plan for N.
#pragma once

#include <cuda_runtime_api.h>

namespace roofline::kernels {

// The SM count of the context current on this thread (cuCtxGetDevResource). The current
// device's SM count where no context is current yet or the driver has no resource query (before
// CUDA 12.4). Asked at every launch that needs it (one driver call), not cached.
cudaError_t current_context_sms(int* sms);

}  // namespace roofline::kernels
