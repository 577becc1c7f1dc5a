// One energy measurement: a launch repeated back to back for a settling start and a window
// while EnergyReader reads the board's energy counter; the mean power between the counter's
// first and last update inside the window, and the energy per launch at the GPU's time per
// launch over the window (EnergyMeasurement, domain/energy.hpp); optionally the time per launch
// and NVML's SM clock over the window whatever the counter did (BackToBackRun). Used by `run
// --energy` (energy_pass.hpp) and `calibrate --energy|--power-cap` (calibration_runner.hpp).
//
// Back to back, not one at a time behind an L2 flush as timed launches run: a launch's energy
// includes its share of the gaps between launches, as a program that repeats it pays.
#pragma once

#include <functional>

#include <cuda_runtime_api.h>

#include "lib/core/domain/energy.hpp"
#include "lib/gpu/clock_sampler.hpp"

namespace roofline::gpu {

struct EnergyWindow {
  // The clock and power reach the kernel's own state within a fraction of a second.
  double settle_seconds = 0.3;
  // Long enough for about a dozen of the counter's steps (about 100 ms apart on the H200).
  double window_seconds = 1.2;
  // Work kept queued ahead of the GPU, so that it never waits for the host.
  double queued_seconds = 0.02;
  // Read the energy counter (false: the measurement has watts 0; only BackToBackRun is filled).
  bool read_energy = true;
};

// What the loop measured itself, with or without the energy counter.
struct BackToBackRun {
  double seconds_per_launch = 0;  // GPU time per launch over the window, the gaps included
  double window_seconds = 0;      // host seconds from the window's start to its last enqueue
  long long launches = 0;         // launches inside the window
  ClockSamples clocks;            // NVML's SM clock over the window (ClockSampler)
};

// Calls `launch` (which enqueues one launch on `stream`) over and over for settle + window
// seconds while reading the energy counter of NVML device `nvml`. `seconds_per_launch_hint`
// (e.g. the timed median) sizes the batches between the host's waits. The measurement has
// watts 0 when fewer than two of the counter's updates fell inside the window. With `run`, a
// ClockSampler samples NVML's SM clock from the window's start to its end (the settling start
// excluded) and `run` receives it with the window's time per launch. Throws gpu::CudaError when
// a CUDA call fails.
EnergyMeasurement measure_back_to_back(void* nvml, cudaStream_t stream,
                                       const std::function<void()>& launch,
                                       double seconds_per_launch_hint,
                                       const EnergyWindow& window = {},
                                       BackToBackRun* run = nullptr);

}  // namespace roofline::gpu
