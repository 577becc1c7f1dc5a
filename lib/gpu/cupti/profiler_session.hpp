// One enabled range-profiler session on a CUDA context: what RangeProfiler and
// KernelRangeProfiler (range_profiler.hpp) share. Internal to roofline_profiler.
//
// Open: the process's one profiling slot, the profiler API initialised (a counted lease), the
// device and chip checked, a host object with the context's counter availability, the config
// image for the metrics and its pass count, the range profiler enabled on the context. The
// session then starts and stops passes, pushes and pops ranges, decodes and evaluates into
// counter-data images the caller owns. Teardown (destructor): an open range popped, a started
// pass stopped, the profiler disabled, the host object freed, the lease and the slot given back.
//
// Learnt on CUDA 13.0's CUPTI: cuptiProfilerInitialize fails without a driver and
// cuptiDeviceGetChipName then crashes, so callers ask the runtime or driver for the device
// before opening a session.
#pragma once

#include <cuda.h>
#include <cupti_range_profiler.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "lib/gpu/cupti/counter_data_image.hpp"
#include "lib/gpu/cupti/metric_host.hpp"
#include "lib/gpu/range_profiler.hpp"

namespace roofline::gpu::cupti {

// cuptiProfilerInitialize / DeInitialize, counted: device_chip_name and a session may overlap,
// and the last one out deinitialises.
class ProfilerInitLease {
 public:
  ProfilerInitLease();
  ~ProfilerInitLease();
  ProfilerInitLease(const ProfilerInitLease&) = delete;
  ProfilerInitLease& operator=(const ProfilerInitLease&) = delete;
};

// CUPTI's name of the chip of device `device` (an ordinal); needs a lease.
std::string chip_name_of(int device);

class ProfilerSession {
 public:
  // Takes the process's one profiling slot (CUPTI allows one profiling client); throws
  // ProfilerError(kMultipleSubscribers) naming `owner` ("RangeProfiler") when it is taken.
  explicit ProfilerSession(const char* owner);
  ~ProfilerSession();
  ProfilerSession(const ProfilerSession&) = delete;
  ProfilerSession& operator=(const ProfilerSession&) = delete;

  // Opens on `context`: `device` for the support check, `chip_device` the ordinal CUPTI names
  // the chip by. Throws ProfilerError: kUnsupportedDevice, kInsufficientPrivileges,
  // kMultipleSubscribers, kUnknownMetric, or kOther.
  void open(CUcontext context, CUdevice device, int chip_device,
            const std::vector<std::string>& metrics);

  const std::string& chip() const { return chip_; }
  int passes() const { return passes_; }

  // An image for `ranges` ranges of this session's metrics (sized, not initialised).
  CounterDataImage image(std::size_t ranges, Collection collection) const;
  void initialize(CounterDataImage& image) const;
  // The config and `image` for the next start(), in the image's collection mode; one nesting
  // level.
  void set_config(CounterDataImage& image) const;

  void start();
  // Pops a range left open first (unchecked); true once CUPTI has every pass it needs.
  bool stop();
  void push_range(const std::string& name);
  void pop_range();
  bool started() const { return started_; }
  bool range_open() const { return range_open_; }
  // Decodes what the GPU collected into the image set last; returns the ranges dropped.
  std::size_t decode();
  std::vector<RangeValues> evaluate(const CounterDataImage& image) const;

 private:
  bool owns_slot_ = false;
  std::unique_ptr<ProfilerInitLease> lease_;
  std::string chip_;
  std::vector<std::string> metrics_;
  std::vector<std::uint8_t> availability_;
  std::unique_ptr<HostObject> host_;
  std::vector<std::uint8_t> config_;
  int passes_ = 0;
  CUpti_RangeProfiler_Object* object_ = nullptr;
  bool started_ = false;
  bool range_open_ = false;
};

}  // namespace roofline::gpu::cupti
