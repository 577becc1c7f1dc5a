// The GPU present: detection, its identity for reports, its spec, and its SM clock.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "lib/core/domain/gpu_spec.hpp"
#include "lib/core/domain/spec_choice.hpp"
#include "lib/core/report/report.hpp"

namespace roofline::gpu {

// Number of CUDA devices. Throws GpuUnavailableError (exit 3) when there is no driver or no
// device; never touches CUPTI.
int device_count();

// Identity of CUDA device `ordinal`. Throws GpuUnavailableError (exit 3) with one sentence when
// there is no driver or no such device; never touches CUPTI.
DeviceInfo detect_device(int ordinal);

// The spec judging device `ordinal` (choose_judging_spec, spec_choice.hpp): without a spec file
// for it, one derived from its properties.
using SpecChoice = roofline::SpecChoice;
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
