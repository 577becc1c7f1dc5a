// CUDA runtime status codes become exceptions here, in one macro that keeps the call text,
// file:line and the runtime's own message.
#pragma once

#include <stdexcept>
#include <string>

#include <cuda_runtime_api.h>

namespace roofline::gpu {

class CudaError : public std::runtime_error {
 public:
  CudaError(cudaError_t code, const std::string& message)
      : std::runtime_error(message), code_(code) {}
  cudaError_t code() const { return code_; }

 private:
  cudaError_t code_;
};

[[noreturn]] void throw_cuda_error(cudaError_t code, const char* call, const char* file, int line);

}  // namespace roofline::gpu

#define ROOFLINE_CUDA_CALL(call)                                                      \
  do {                                                                                \
    const cudaError_t roofline_status_ = (call);                                      \
    if (roofline_status_ != cudaSuccess)                                              \
      ::roofline::gpu::throw_cuda_error(roofline_status_, #call, __FILE__, __LINE__); \
  } while (0)
