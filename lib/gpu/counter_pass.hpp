// The counter passes of a sweep: hardware counters for every point whose row is ok, through one
// RangeProfiler for the whole sweep (user ranges, user replay, as few passes as the metric set
// needs), `counter_repeats` ranges per point back to back, each after an L2 flush. A point's
// counters are the medians of its ranges; with more than one range per point, every range's
// value is kept too (Row::counter_samples).
#pragma once

#include <cstddef>

#include "lib/gpu/point_launcher.hpp"
#include "lib/gpu/runner.hpp"

namespace roofline::gpu {

// Test aid --test-extra-bytes: the bytes each counted range of `point` also reads (that
// fraction of the model's DRAM bytes; 0 when the aid is off for its kernel).
std::size_t test_extra_bytes(const SweepPoint& point, const RunOptions& options);

// Counts the ok rows of `result` (one per point of `launcher`, in order) and fills their
// counters, and the result's provenance, metrics, passes and counter-data image. When counters
// cannot be read (compute capability below 7.5, no catalogue for the chip, any ProfilerError),
// the ok rows become counters_unavailable with a message naming why, and GpuUnavailableError is
// thrown when options.counters is kRequired. Frees the launcher's arena when done.
void collect_counters(RunResult& result, PointLauncher& launcher, const RunOptions& options);

}  // namespace roofline::gpu
