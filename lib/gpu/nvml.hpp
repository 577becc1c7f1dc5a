// NVML, loaded at run time (the driver ships libnvidia-ml.so.1; the toolkit's stub is not needed
// at link time): the device handles and the few queries the tool makes. Every query answers
// nullopt (or false) where NVML, the device or the query is not available; none throws.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace roofline::gpu::nvml {

// NVML's handle of CUDA device `ordinal`, found by its PCI bus id; nullptr when NVML or the
// device is not available.
void* device_handle(int ordinal);
// The handle of NVML's device 0 (before CUDA is initialised); nullptr when not available.
void* first_device_handle();

std::optional<std::string> name(void* handle);
// The SM clock now, MHz.
std::optional<unsigned> sm_clock_mhz(void* handle);

// The board's energy since the driver loaded, millijoules (nvmlDeviceGetTotalEnergyConsumption;
// Volta and newer). On the H200 it advances in steps about every 100 ms, and one read takes a
// few milliseconds (docs/methodology.md, "Energy").
std::optional<std::uint64_t> total_energy_mj(void* handle);

// The GPU die's temperature now, °C (nvmlDeviceGetTemperature, NVML_TEMPERATURE_GPU). A board's
// power at one load rises with it (leakage), so an energy figure is tied to the temperature it
// was measured at.
std::optional<unsigned> temperature_c(void* handle);

// The power limit the board enforces now (nvmlDeviceGetEnforcedPowerLimit), watts: its average
// power over NVML's window is held at or below it, by the clocks.
std::optional<double> enforced_power_limit_watts(void* handle);

// Why the clocks are below their maximum now (nvmlClocksEventReasons bits; 0 when none).
std::optional<std::uint64_t> clock_event_reasons(void* handle);
// The bits of clock_event_reasons that mean the board held its clock down for power or heat.
inline constexpr std::uint64_t kReasonSwPowerCap = 0x4;
inline constexpr std::uint64_t kReasonHwSlowdown = 0x8;
inline constexpr std::uint64_t kReasonSwThermal = 0x20;
inline constexpr std::uint64_t kReasonHwThermal = 0x40;
inline constexpr std::uint64_t kReasonHwPowerBrake = 0x80;

}  // namespace roofline::gpu::nvml
