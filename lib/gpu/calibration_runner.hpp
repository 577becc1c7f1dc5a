// `calibrate`: runs the micro-kernels of kernels/calibration.hpp on one device, at whatever
// clock it runs (clocks are never changed), and returns the overlay of
// lib/core/report/calibration.hpp.
#pragma once

#include <functional>
#include <string>

#include "lib/core/report/calibration.hpp"
#include "lib/core/report/report.hpp"

namespace roofline::gpu {

struct CalibrateOptions {
  int device = 0;
  int reps = 10;                 // timed launches per micro-kernel (the median is kept)
  double sample_seconds = 0.02;  // each launch is sized to run about this long
  // `--energy`: also each micro-kernel back to back while NVML's energy counter is read, and
  // the active idle power, for the energy coefficients (calibration_energy.hpp).
  bool energy = false;
  // `--power-cap` (implied by energy): each compute micro-kernel also back to back for the same
  // window while NVML samples the SM clock: the rate sustained at the power cap and its clock.
  bool power_cap = false;
  std::function<void(const std::string&)> progress;  // one line per micro-kernel; may be empty
};

// Measures every roof the device has a micro-kernel for (wgmma only on compute capability 9.0
// with sm_90a code), and the DRAM and L2 read kernels and the DRAM copy on shares of the SMs
// (green contexts of 8 to 96 SMs: the levels' share curves, and the copy's beside them; without
// green contexts a warning, and none), and derives
// the ceilings; with options.power_cap or options.energy, also each
// compute kernel's rate and NVML's SM clock back to back (the power-capped roofs; without NVML:
// a warning, and none); with options.energy, also each kernel's power and the active idle
// power (a compute kernel that drew the power limit also on half, a quarter, an eighth of the
// SMs until one runs below the cap at the full clock: its FLOP's price there), and derives the
// energy coefficients (without NVML's energy counter: a warning, and no energies). `spec_key` names
// the spec the result calibrates. Throws GpuUnavailableError without a device, gpu::CudaError when
// a CUDA call fails.
CalibrationOverlay calibrate(const CalibrateOptions& options, const DeviceInfo& device,
                             const std::string& spec_key);

}  // namespace roofline::gpu
