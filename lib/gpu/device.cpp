#include "lib/gpu/device.hpp"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <vector>

#include <spdlog/spdlog.h>

#include "lib/core/base/errors.hpp"
#include "lib/core/base/text.hpp"
#include "lib/gpu/cuda_check.hpp"
#include "lib/gpu/nvml.hpp"

namespace roofline::gpu {
namespace {

std::string version_text(int version) {
  return std::to_string(version / 1000) + "." + std::to_string((version % 1000) / 10);
}

int attribute(cudaDeviceAttr attr, int ordinal) {
  int value = 0;
  ROOFLINE_CUDA_CALL(cudaDeviceGetAttribute(&value, attr, ordinal));
  return value;
}

// Per-SM, per-clock rates by compute capability, for devices without a spec file. Rough on
// purpose: the spec they make is labelled approximate.
struct ArchRates {
  int fp32_lanes;
  double tensor_fp16_flops_per_clock;
};
ArchRates arch_rates(int major, int minor) {
  if (major == 8 && minor == 0) return {64, 2048};
  if (major == 8) return {128, 1024};
  if (major == 9) return {128, 2730};  // mma.sync rate; wgmma is 4096
  if (major >= 10) return {128, 4096};
  return {64, 1024};
}

GpuSpec derived_spec(const DeviceInfo& device, int ordinal) {
  const int major = device.cc_major;
  const int minor = device.cc_minor;
  const double clock_mhz = attribute(cudaDevAttrClockRate, ordinal) / 1e3;
  const double memory_clock_hz = attribute(cudaDevAttrMemoryClockRate, ordinal) * 1e3;
  const double bus_bytes = attribute(cudaDevAttrGlobalMemoryBusWidth, ordinal) / 8.0;
  const ArchRates rates = arch_rates(major, minor);
  const std::string source = "derived from cudaGetDeviceProperties (approximate; add a spec file)";
  GpuSpec spec;
  spec.key = "device";
  spec.name = device.name + " (derived)";
  spec.aliases = {"device"};
  spec.device_names = {device.name};
  spec.chip = device.chip.empty() ? "unknown" : device.chip;
  spec.compute_capability = device.compute_capability;
  spec.sm_count = device.sm_count;
  spec.boost_clock_mhz = clock_mhz;
  spec.base_clock_mhz = clock_mhz;
  spec.l2_cache_bytes = device.l2_cache_bytes;
  spec.memory_bytes = device.memory_bytes;
  spec.tdp_watts = 1;
  for (const char* key : {"sm_count", "boost_clock_mhz", "base_clock_mhz", "l2_cache_bytes",
                          "memory_bytes", "tdp_watts"})
    spec.sources[key] = source;
  spec.memory.push_back({MemoryLevel::kDram, 2 * memory_clock_hz * bus_bytes / 1e9, source});
  const double sm_clocks = device.sm_count * clock_mhz * 1e6;
  spec.compute.push_back({ComputePath::kTensorFp16, TensorInstruction::kNone,
                          sm_clocks * rates.tensor_fp16_flops_per_clock / 1e12, clock_mhz, source});
  // BF16 tensor cores arrived with sm_80, at the FP16 rate.
  if (major >= 8)
    spec.compute.push_back({ComputePath::kTensorBf16, TensorInstruction::kNone,
                            sm_clocks * rates.tensor_fp16_flops_per_clock / 1e12, clock_mhz,
                            source});
  spec.compute.push_back({ComputePath::kFp32, TensorInstruction::kNone,
                          sm_clocks * rates.fp32_lanes * 2 / 1e12, clock_mhz, source});
  return spec;
}

}  // namespace

int device_count() {
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess || count == 0) {
    const std::string reason =
        status != cudaSuccess ? cudaGetErrorString(status) : "no CUDA device";
    throw GpuUnavailableError("no usable GPU (" + reason +
                              "); `cuflash-roofline model` works without a GPU");
  }
  return count;
}

DeviceInfo detect_device(int ordinal) {
  const int count = device_count();
  if (ordinal < 0 || ordinal >= count)
    throw InputError("--device " + std::to_string(ordinal) + " does not exist (" +
                     std::to_string(count) + " CUDA device" + (count == 1 ? "" : "s") + ")");
  cudaDeviceProp prop{};
  ROOFLINE_CUDA_CALL(cudaGetDeviceProperties(&prop, ordinal));
  DeviceInfo info;
  info.name = prop.name;
  info.cc_major = prop.major;
  info.cc_minor = prop.minor;
  info.compute_capability = std::to_string(prop.major) + "." + std::to_string(prop.minor);
  info.sm_count = prop.multiProcessorCount;
  info.memory_bytes = static_cast<std::int64_t>(prop.totalGlobalMem);
  info.l2_cache_bytes = prop.l2CacheSize;
  int driver = 0, runtime = 0;
  cudaDriverGetVersion(&driver);
  cudaRuntimeGetVersion(&runtime);
  info.driver_version = version_text(driver);
  info.runtime_version = version_text(runtime);
  return info;
}

SpecChoice choose_spec(const SpecRegistry& registry, const DeviceInfo& device, int ordinal,
                       const std::optional<std::string>& requested) {
  return choose_judging_spec(registry, device.name, requested,
                             [&] { return derived_spec(device, ordinal); });
}

std::optional<std::string> host_gpu_name() {
  // The driver's /proc files first ("Model:       NVIDIA H200" per GPU): a file read, before
  // NVML, whose initialisation opens every GPU.
  std::error_code error;
  std::vector<std::filesystem::path> gpus;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/driver/nvidia/gpus", error))
    gpus.push_back(entry.path());
  std::sort(gpus.begin(), gpus.end());  // PCI bus order
  for (const std::filesystem::path& gpu : gpus) {
    std::ifstream in(gpu / "information");
    std::string line;
    while (std::getline(in, line)) {
      if (line.rfind("Model:", 0) != 0) continue;
      if (std::string model = trim(line.substr(6)); !model.empty()) return model;
    }
  }
  return nvml::name(nvml::first_device_handle());
}

std::optional<std::vector<std::string>> visible_device_entries() {
  const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
  if (visible == nullptr) return std::nullopt;
  std::vector<std::string> entries;
  for (const std::string& entry : split(visible, ','))
    if (std::string trimmed = trim(entry); !trimmed.empty()) entries.push_back(std::move(trimmed));
  return entries;
}

std::optional<int> visible_gpu_count() {
  if (const auto entries = visible_device_entries()) return static_cast<int>(entries->size());
  std::error_code error;
  int count = 0;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/driver/nvidia/gpus", error)) {
    (void)entry;
    ++count;
  }
  if (error || count == 0) return std::nullopt;
  return count;
}

double current_sm_clock_mhz(int ordinal) {
  return nvml::sm_clock_mhz(nvml::device_handle(ordinal)).value_or(0);
}

}  // namespace roofline::gpu
