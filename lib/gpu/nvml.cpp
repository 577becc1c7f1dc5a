#include "lib/gpu/nvml.hpp"

#include <dlfcn.h>

#include <cuda_runtime.h>

namespace roofline::gpu::nvml {
namespace {

struct Library {
  using Init = int (*)();
  using ByPci = int (*)(const char*, void**);
  using ByIndex = int (*)(unsigned, void**);
  using Name = int (*)(void*, char*, unsigned);
  using Clock = int (*)(void*, int, unsigned*);
  using Reasons = int (*)(void*, unsigned long long*);
  using Energy = int (*)(void*, unsigned long long*);
  using Temperature = int (*)(void*, int, unsigned*);
  using PowerLimit = int (*)(void*, unsigned*);
  ByPci by_pci = nullptr;
  ByIndex by_index = nullptr;
  Name name = nullptr;
  Clock clock = nullptr;
  Reasons reasons = nullptr;
  Energy energy = nullptr;
  Temperature temperature = nullptr;
  PowerLimit power_limit = nullptr;
  bool ok = false;

  Library() {
    void* lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (lib == nullptr) return;
    auto init = reinterpret_cast<Init>(dlsym(lib, "nvmlInit_v2"));
    by_pci = reinterpret_cast<ByPci>(dlsym(lib, "nvmlDeviceGetHandleByPciBusId_v2"));
    by_index = reinterpret_cast<ByIndex>(dlsym(lib, "nvmlDeviceGetHandleByIndex_v2"));
    name = reinterpret_cast<Name>(dlsym(lib, "nvmlDeviceGetName"));
    clock = reinterpret_cast<Clock>(dlsym(lib, "nvmlDeviceGetClockInfo"));
    // The older name of the same query (drivers before 535 have only it).
    reasons = reinterpret_cast<Reasons>(dlsym(lib, "nvmlDeviceGetCurrentClocksEventReasons"));
    if (reasons == nullptr)
      reasons = reinterpret_cast<Reasons>(dlsym(lib, "nvmlDeviceGetCurrentClocksThrottleReasons"));
    energy = reinterpret_cast<Energy>(dlsym(lib, "nvmlDeviceGetTotalEnergyConsumption"));
    temperature = reinterpret_cast<Temperature>(dlsym(lib, "nvmlDeviceGetTemperature"));
    power_limit = reinterpret_cast<PowerLimit>(dlsym(lib, "nvmlDeviceGetEnforcedPowerLimit"));
    ok = init != nullptr && init() == 0;
  }
};

Library& library() {
  static Library instance;
  return instance;
}

}  // namespace

void* device_handle(int ordinal) {
  Library& n = library();
  if (!n.ok || n.by_pci == nullptr) return nullptr;
  char bus_id[32] = {};
  if (cudaDeviceGetPCIBusId(bus_id, sizeof bus_id, ordinal) != cudaSuccess) return nullptr;
  void* handle = nullptr;
  return n.by_pci(bus_id, &handle) == 0 ? handle : nullptr;
}

void* first_device_handle() {
  Library& n = library();
  if (!n.ok || n.by_index == nullptr) return nullptr;
  void* handle = nullptr;
  return n.by_index(0, &handle) == 0 ? handle : nullptr;
}

std::optional<std::string> name(void* handle) {
  Library& n = library();
  if (handle == nullptr || n.name == nullptr) return std::nullopt;
  char text[96] = {};
  if (n.name(handle, text, sizeof text) != 0) return std::nullopt;
  return std::string(text);
}

std::optional<unsigned> sm_clock_mhz(void* handle) {
  Library& n = library();
  constexpr int kNvmlClockSm = 1;
  unsigned mhz = 0;
  if (handle == nullptr || n.clock == nullptr || n.clock(handle, kNvmlClockSm, &mhz) != 0)
    return std::nullopt;
  return mhz;
}

std::optional<std::uint64_t> total_energy_mj(void* handle) {
  Library& n = library();
  unsigned long long mj = 0;
  if (handle == nullptr || n.energy == nullptr || n.energy(handle, &mj) != 0) return std::nullopt;
  return mj;
}

std::optional<unsigned> temperature_c(void* handle) {
  Library& n = library();
  constexpr int kGpuSensor = 0;  // NVML_TEMPERATURE_GPU: the die
  unsigned celsius = 0;
  if (handle == nullptr || n.temperature == nullptr ||
      n.temperature(handle, kGpuSensor, &celsius) != 0)
    return std::nullopt;
  return celsius;
}

std::optional<double> enforced_power_limit_watts(void* handle) {
  Library& n = library();
  unsigned milliwatts = 0;
  if (handle == nullptr || n.power_limit == nullptr || n.power_limit(handle, &milliwatts) != 0 ||
      milliwatts == 0)
    return std::nullopt;
  return milliwatts / 1000.0;
}

std::optional<std::uint64_t> clock_event_reasons(void* handle) {
  Library& n = library();
  unsigned long long bits = 0;
  if (handle == nullptr || n.reasons == nullptr || n.reasons(handle, &bits) != 0)
    return std::nullopt;
  return bits;
}

}  // namespace roofline::gpu::nvml
