// `run --sms N`: a CUDA green context holding N SMs of one device, current on the calling thread
// while it lives, so that every launch the thread makes (the runtime's streams, cuBLAS, the L2
// flush, the counter and energy passes) runs on those SMs and no others. Driver API (CUDA 12.4+):
// the device's SM resource split by count, a descriptor of the part, the green context, and the
// context made current through cuCtxFromGreenCtx.
#pragma once

#include <memory>
#include <string>

#include <cuda.h>

namespace roofline::gpu {

class GreenContext {
 public:
  // At least `sms` SMs of device `ordinal`: the driver rounds the count up to its granularity
  // (on compute capability 9.0 a multiple of 8: 66 becomes 72), and a count that rounds past
  // the device's SMs gets all of them. Makes the green context current on this thread; the
  // context current before comes back when the object ends. Throws InputError when `sms` is
  // below 1 or above the device's SM count, GpuUnavailableError when the driver has no green
  // contexts or refuses one (its message kept).
  GreenContext(int ordinal, int sms);
  ~GreenContext();
  GreenContext(const GreenContext&) = delete;
  GreenContext& operator=(const GreenContext&) = delete;

  int sm_count() const { return sm_count_; }           // the SMs obtained
  int requested_sms() const { return requested_; }     // the SMs asked for
  int device_sm_count() const { return device_sms_; }  // the whole device's
  // "a green context of 72 of the device's 132 SMs (asked 66; the driver's granularity: 8)"
  std::string description() const;

 private:
  struct Destroy {
    void operator()(CUgreenCtx_st* context) const;
  };
  std::unique_ptr<CUgreenCtx_st, Destroy> green_;
  CUcontext previous_ = nullptr;  // current before; restored at the end
  int requested_ = 0;
  int sm_count_ = 0;
  int device_sms_ = 0;
  int granularity_ = 0;  // smCoscheduledAlignment of the device's SM resource
};

}  // namespace roofline::gpu
