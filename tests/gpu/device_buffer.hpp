// Move-only owner of a cudaMalloc allocation, shared by the GPU test and the benchmark.
#pragma once

#include <cstddef>
#include <utility>

#include <cuda_runtime_api.h>

namespace roofline::testing {

class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  // On failure the buffer stays empty and status() says why.
  explicit DeviceBuffer(std::size_t bytes) : bytes_(bytes) {
    if (bytes > 0) status_ = cudaMalloc(&ptr_, bytes);
    if (status_ != cudaSuccess) {
      ptr_ = nullptr;
      bytes_ = 0;
    }
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  DeviceBuffer(DeviceBuffer&& other) noexcept { swap(other); }
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept {
    DeviceBuffer moved(std::move(other));
    swap(moved);
    return *this;
  }
  ~DeviceBuffer() {
    if (ptr_ != nullptr) cudaFree(ptr_);
  }

  void* get() const { return ptr_; }
  float* as_float() const { return static_cast<float*>(ptr_); }
  std::size_t bytes() const { return bytes_; }
  cudaError_t status() const { return status_; }

 private:
  void swap(DeviceBuffer& other) noexcept {
    std::swap(ptr_, other.ptr_);
    std::swap(bytes_, other.bytes_);
    std::swap(status_, other.status_);
  }

  void* ptr_ = nullptr;
  std::size_t bytes_ = 0;
  cudaError_t status_ = cudaSuccess;
};

}  // namespace roofline::testing
