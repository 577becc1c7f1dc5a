#include "lib/gpu/device_memory.hpp"

#include "lib/gpu/cuda_check.hpp"

namespace roofline::gpu {

void throw_cuda_error(cudaError_t code, const char* call, const char* file, int line) {
  throw CudaError(code, std::string(call) + " failed at " + file + ":" + std::to_string(line) +
                            ": " + cudaGetErrorName(code) + " (" + cudaGetErrorString(code) + ")");
}

DeviceBuffer::DeviceBuffer(std::size_t bytes) {
  ensure(bytes);
}

DeviceBuffer::~DeviceBuffer() {
  reset();
}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& other) noexcept {
  if (this != &other) {
    reset();
    data_ = std::exchange(other.data_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
  }
  return *this;
}

void DeviceBuffer::ensure(std::size_t bytes) {
  if (bytes <= bytes_ && data_ != nullptr) return;
  reset();
  if (bytes == 0) return;
  ROOFLINE_CUDA_CALL(cudaMalloc(&data_, bytes));
  bytes_ = bytes;
}

void DeviceBuffer::reset() {
  if (data_ != nullptr) cudaFree(data_);
  data_ = nullptr;
  bytes_ = 0;
}

Event::Event() {
  ROOFLINE_CUDA_CALL(cudaEventCreate(&event_));
}
Event::~Event() {
  if (event_ != nullptr) cudaEventDestroy(event_);
}

double elapsed_seconds(const Event& start, const Event& stop) {
  ROOFLINE_CUDA_CALL(cudaEventSynchronize(stop.get()));
  float ms = 0;
  ROOFLINE_CUDA_CALL(cudaEventElapsedTime(&ms, start.get(), stop.get()));
  return ms * 1e-3;
}

Stream::Stream() {
  ROOFLINE_CUDA_CALL(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
}
Stream::~Stream() {
  if (stream_ != nullptr) cudaStreamDestroy(stream_);
}

}  // namespace roofline::gpu
