// The GPU present: detection, its identity for reports, its spec, and its SM clock.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "lib/core/domain/gpu_spec.hpp"
#include "lib/core/report/report.hpp"

namespace roofline::gpu {

// Number of CUDA devices. Throws GpuUnavailableError (exit 3) when there is no driver or no
// device; never touches CUPTI.
int device_count();

// Identity of CUDA device `ordinal`. Throws GpuUnavailableError (exit 3) with one sentence when
// there is no driver or no such device; never touches CUPTI.
DeviceInfo detect_device(int ordinal);

// The spec judging this device: the user's choice when given, else the spec file whose
// device_names match, else one derived from the device's properties (approximate, labelled so).
struct SpecChoice {
  GpuSpec spec;
  bool projection = false;  // judged against another GPU than the one measured
  GpuSpec measured;         // the device's own spec (derived when no file names it)
  std::string note;         // what to tell the user (empty when nothing to say)
};
SpecChoice choose_spec(const SpecRegistry& registry, const DeviceInfo& device, int ordinal,
                       const std::optional<std::string>& requested);

// The name of the host's first GPU ("NVIDIA H200"), without initialising CUDA: from the
// driver's /proc/driver/nvidia/gpus/*/information, else NVML; nullopt when neither answers.
std::optional<std::string> host_gpu_name();

// The entries of CUDA_VISIBLE_DEVICES (trimmed, empty ones dropped); nullopt when it is unset.
std::optional<std::vector<std::string>> visible_device_entries();

// How many CUDA devices this process would see, without initialising CUDA: the entries of
// CUDA_VISIBLE_DEVICES when it is set, else the GPUs in /proc/driver/nvidia/gpus; nullopt when
// neither says.
std::optional<int> visible_gpu_count();

// Current SM clock through NVML (loaded at run time); 0 when NVML is not available.
double current_sm_clock_mhz(int ordinal);

}  // namespace roofline::gpu
