// The energy pass of a sweep (`run --energy`): each ok point launched back to back for about a
// second and a half while a thread reads the board's energy counter (energy_window.hpp); the
// row gets the mean power and the energy per launch (Row::energy, domain/energy.hpp).
#pragma once

#include "lib/gpu/point_launcher.hpp"
#include "lib/gpu/runner.hpp"

namespace roofline::gpu {

// Measures every ok row of `result` (one per point of `launcher`) on the NVML device `nvml`,
// and appends what it did to result.counters. Without NVML or its energy counter no row gets
// energy and the provenance says why.
void collect_energy(RunResult& result, PointLauncher& launcher, const RunOptions& options,
                    void* nvml);

}  // namespace roofline::gpu
