// The noise model of `compare`: how much each compared quantity of one row varies between runs
// of unchanged code, so that a change counts only beyond it.
//
// Time. A run times the sweep in rounds (Timing::rounds): every point once per round,
// interleaved, so the rounds of one report span the drift of its own run. A side's time is the
// mean of the logarithms of its round medians, with the between-round variance of that mean
// (rounds − 1 degrees of freedom). What rounds of one process cannot show (its clocks, its
// memory placement) is `process_noise`: a relative standard deviation per report, measured with
// independent processes of unchanged code (scripts/gate_check.sh) and added to both sides.
// Reports timed in one round fall back to their samples, which show only within-run noise.
//
// Counted quantities (QuantityDef): by what they are —
//   exact       FLOPs per pipe and shared-memory bytes: instruction counts; any spread seen is
//               the report's own and is used as such;
//   cache       DRAM-read, L2 and L1 bytes: depend on what the caches hold, which the L2 flush
//               before every range fixes only in part: the report's own spread (when a point was
//               counted several times, Row::counter_samples) plus `cache_floor` (relative) and
//               `cache_floor_bytes` (absolute);
//   residency   DRAM-write bytes: lines still dirty in L2 when the range ends are not counted,
//               so the count depends on what the next work evicts; listed, never gated.
// A gated quantity regresses when it grows by more than the tolerance plus both reports' noise
// (quantity_margin).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "lib/core/base/statistics.hpp"
#include "lib/core/report/report.hpp"

namespace roofline {

// Defaults, from the A/A recordings of scripts/gate_check.sh on the H200 (docs/ci.md; rates in
// docs/results/).
inline constexpr double kDefaultProcessNoise = 0.005;
inline constexpr double kDefaultCacheFloor = 0.01;
inline constexpr double kDefaultCacheFloorBytes = 1e6;
// A profiled launch runs once: its time varies from one process to the next by more than a
// timed sweep's (launch_groups.hpp). From A/A pairs of `profile` reports on the H200.
inline constexpr double kDefaultLaunchNoise = 0.03;
inline constexpr double kDefaultLaunchFloorSeconds = 0.25e-6;
// A profiled launch is counted once: a GEMM's L2 bytes moved by up to 4.8% between processes.
inline constexpr double kDefaultLaunchCacheFloor = 0.025;

struct NoiseModel {
  double process_noise = kDefaultProcessNoise;         // relative SD of a report's time, per side
  double cache_floor = kDefaultCacheFloor;             // relative, per side
  double cache_floor_bytes = kDefaultCacheFloorBytes;  // absolute, per side
  // Groups of profiled launches (launch_groups.hpp): each launch's relative SD between
  // processes, and an absolute floor under it (seconds), both per launch and side.
  double launch_noise = kDefaultLaunchNoise;
  double launch_floor_seconds = kDefaultLaunchFloorSeconds;
  // Their cache quantities (relative, per side), in place of cache_floor where larger.
  double launch_cache_floor = kDefaultLaunchCacheFloor;
};

enum class QuantityKind { kExact, kCache, kResidency };
std::string_view to_string(QuantityKind kind);  // "exact", "cache", "residency"

struct QuantityDef {
  std::string id;     // "dram_read_bytes", "l2_bytes", "tensor_flops", ...
  std::string label;  // "DRAM-read bytes"
  std::string unit;   // "bytes", "flops"
  QuantityKind kind;
  bool flops;  // a FLOP count of one pipe (work may move between pipes)
  // The counter keys summed into this quantity (tensor FLOPs: mma.sync + wgmma).
  std::vector<std::string> keys;

  bool gated() const { return kind != QuantityKind::kResidency; }
};

// Every quantity compare looks at, in display order.
const std::vector<QuantityDef>& quantity_defs();

// One report's value of a quantity and its own spread.
struct QuantityValue {
  double value = 0;        // NaN when the row did not count it
  std::size_t counts = 0;  // ranges behind it (1 without counter_samples)
  double spread = 0;       // (max − min) / value over those ranges; 0 for one
};
QuantityValue quantity_value(const QuantityDef& def, const Row& row);

// The relative growth beyond which a gated quantity counts as more: the tolerance, plus each
// side's noise (its spread, and for cache quantities the floors; the absolute floor relative to
// the base value).
double quantity_margin(const QuantityDef& def, const QuantityValue& base, const QuantityValue& head,
                       double tolerance, const NoiseModel& model);

// One report's time for one row.
struct TimeSide {
  std::size_t samples = 0;
  std::size_t rounds = 0;  // round medians behind `log_center`; 0 when the fallback was used
  double median_seconds = 0;
  double min_seconds = 0;
  double max_seconds = 0;
  double relative_spread = 0;  // Timing::relative_spread
  // Mean of log(round median), its variance and degrees of freedom; with fewer than two rounds,
  // mean of log(sample) over the samples (within-run noise only).
  Estimate log_center;
};
TimeSide time_side(const Timing& timing);

}  // namespace roofline
