// What the driver tells about a launch and its device: the launch site read from a launch
// callback's parameters (the driver API's kernel and graph launches, which the runtime goes
// through too), a kernel's attributes, and the device record's DeviceInfo.
#pragma once

#include <cuda.h>
#include <cupti.h>

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "lib/inject/driver.hpp"
#include "lib/profile/profile_protocol.hpp"

namespace roofline::inject {

// What a launch callback tells about the launch.
struct LaunchSite {
  CUfunction function = nullptr;
  std::array<int, 3> grid{1, 1, 1};
  std::array<int, 3> block{1, 1, 1};
  std::int64_t dynamic_shared = 0;
  CUstream stream = nullptr;
  bool graph = false;
  CUgraphExec graph_exec = nullptr;  // a graph launch's executable graph
};

// The driver API callbacks that launch kernels: the ones launch_site() reads.
std::vector<CUpti_CallbackId> launch_callbacks();

// The site of the launch callback `id` with the callback's `params`; nullopt for a callback
// that is not a launch.
std::optional<LaunchSite> launch_site(CUpti_CallbackId id, const void* params);

// An attribute of a launched function; 0 when the driver cannot say.
int function_attribute(const Driver& driver, CUfunction function, CUfunction_attribute attribute);

// Loads the function's module into the current context now (CUDA_MODULE_LOADING=LAZY, the
// default, loads it inside the first launch: inside the measured range, where the load's
// milliseconds and its device-memory writes would be counted as the kernel's). Best effort:
// a driver without cuFuncLoad, or a handle it refuses, leaves loading lazy.
void load_function(const Driver& driver, CUfunction function);

// The device as the device record gives it; `chip` as the range profiler names it.
DeviceInfo device_info(const Driver& driver, CUdevice device, const std::string& chip);

}  // namespace roofline::inject
