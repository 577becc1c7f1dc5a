// `run --devices`: one worker process per GPU, one report (run_devices.cpp).
#pragma once

#include <cstddef>
#include <vector>

#include "app/commands.hpp"
#include "app/run_options.hpp"
#include "lib/gpu/runner.hpp"

namespace roofline::app {

// Measures `selected` points of `sweep` on the GPUs of --devices (see run_devices.cpp) and
// writes the report; returns the exit code.
int run_devices(const RunCommandOptions& options, const GlobalOptions& global,
                const SpecRegistry& registry, const std::vector<gpu::SweepPoint>& sweep,
                const std::vector<std::size_t>& selected);

}  // namespace roofline::app
