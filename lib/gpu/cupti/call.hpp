// Status codes at the CUPTI boundary, for the files of roofline_profiler (lib/gpu/cupti/ and
// range_profiler.cpp), not part of its interface. ROOFLINE_CUPTI_CALL (and
// ROOFLINE_PROFILER_CUDA_CALL for the runtime calls made there) turn a failed call into a
// ProfilerError carrying the call text, file:line, the API's own message and, for the expected
// limitations, the fix. Unlike cuda_check.hpp's CudaError, a runtime failure here is a
// ProfilerError (kNoDevice when the driver or device is missing), so callers handle every
// counter problem in one place.
#pragma once

#include <cuda_runtime_api.h>
#include <cupti_result.h>

#include <cstddef>
#include <string>
#include <vector>

#include "lib/gpu/range_profiler.hpp"

namespace roofline::gpu::cupti {

// The fix for counters restricted to administrators (ERR_NVGPUCTRPERM).
extern const char* const kPrivilegesFix;
// One sentence naming the fix for an expected limitation; empty for the others.
std::string fix_for(ProfilerErrorKind kind);

[[noreturn]] void throw_cupti(CUptiResult result, const char* call, const char* file, int line);
inline void check_cupti(CUptiResult result, const char* call, const char* file, int line) {
  if (result != CUPTI_SUCCESS) throw_cupti(result, call, file, line);
}
[[noreturn]] void throw_cuda(cudaError_t error, const char* call, const char* file, int line);
inline void check_cuda(cudaError_t error, const char* call, const char* file, int line) {
  if (error != cudaSuccess) throw_cuda(error, call, file, line);
}

#define ROOFLINE_CUPTI_CALL(call) \
  ::roofline::gpu::cupti::check_cupti((call), #call, __FILE__, __LINE__)
#define ROOFLINE_PROFILER_CUDA_CALL(call) \
  ::roofline::gpu::cupti::check_cuda((call), #call, __FILE__, __LINE__)

// A CUPTI parameter struct: zeroed, with its structSize set.
template <class Params>
Params make_params(std::size_t struct_size) {
  Params params{};
  params.structSize = struct_size;
  return params;
}

// A driver function through the runtime, so that libcuda is not a link dependency.
template <class Fn>
Fn driver_function(const char* symbol) {
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult status{};
  ROOFLINE_PROFILER_CUDA_CALL(
      cudaGetDriverEntryPointByVersion(symbol, &fn, 12000, cudaEnableDefault, &status));
  if (status != cudaDriverEntryPointSuccess || fn == nullptr) {
    throw ProfilerError(ProfilerErrorKind::kNoDevice,
                        std::string("the CUDA driver does not provide ") + symbol);
  }
  return reinterpret_cast<Fn>(fn);
}

// Pointers to the names, for the APIs that take `const char**`; valid while `names` lives.
std::vector<const char*> c_strings(const std::vector<std::string>& names);

// Throws ProfilerError(kOther): `what` ("RangeProfiler") was used after being moved from.
[[noreturn]] void moved_from(const char* what);

}  // namespace roofline::gpu::cupti
