// The least time a launch takes to move N bytes through DRAM, as `run` times a launch: the DRAM
// level's stream curve (MemoryLevelSpec::stream, a pure read of each size measured by `calibrate`).
//
// Bytes ÷ bandwidth is the roof's floor, but no launch reaches it for a few hundred MB and less:
// a pure read with no compute pays its launch, its first bytes' latency and its last CTAs' drain
// beside its bytes (an H100 read 67 MB at 86% of its 1 GiB rate, 268 MB at 97%; 2026-12-07, the
// decode check's stream stage). The advice bounds a gain by this floor so that it promises none
// that a pure read of the same bytes does not reach.
#pragma once

#include "lib/core/domain/gpu_spec.hpp"

namespace roofline {

// The curve at `bytes`: linear in bytes between its points; below the first, the line from
// (0, 0) to it (under the read's time, whose time per byte falls as the size grows); past the
// last, the last point's time plus the rest at the level's bandwidth. NaN without a curve or for
// bytes that are not positive.
double stream_floor_seconds(const MemoryLevelSpec& level, double bytes);

}  // namespace roofline
