// The kernel pass of a sweep: which kernels one launch of each point runs, and for how long each
// (Row::kernels, domain/point_kernels.hpp). Every point timed (with or without counters) is
// launched a few times as it is timed (the L2 flushed before each launch), each launch alone on the
// GPU, under CUPTI's kernel activity records (cupti/kernel_records.hpp); per kernel, in launch
// order, the medians of its time and of its start after the launch's first kernel.
#pragma once

#include "lib/gpu/point_launcher.hpp"
#include "lib/gpu/runner.hpp"

namespace roofline::gpu {

// Launches per point: three, one where the point takes longer than kKernelPassLongSeconds.
inline constexpr int kKernelPassLaunches = 3;
inline constexpr double kKernelPassLongSeconds = 10e-3;

// Records the kernels of every timed row (ok or counters_unavailable) of `result` (one per point of
// `launcher`) and appends what it did to result.counters. Where CUPTI's activity records cannot be
// enabled (another profiler attached), no row gets kernels and the provenance says why.
void collect_kernels(RunResult& result, PointLauncher& launcher, const RunOptions& options);

}  // namespace roofline::gpu
