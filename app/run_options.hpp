// The options of `run`, shared by its single-process path (cmd_run.cpp) and its fan-out over
// GPUs (run_devices.cpp).
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "app/common.hpp"
#include "lib/core/domain/stalls.hpp"

namespace roofline::app {

struct RunCommandOptions {
  std::string gpu;
  SweepOptions sweep;
  OutputOptions output;
  CeilingOptions ceilings;
  int device = 0;
  int sms = 0;  // --sms: every launch in a green context of this many SMs; 0: the whole GPU
  int reps = 20;
  int rounds = 5;
  int counter_repeats = 3;
  int warmup = 3;
  double settle = 0;  // --settle: seconds of the point's own load before each timing round
  std::vector<std::string> test_slowdown;  // KERNEL=PCT
  std::vector<std::string> test_extra_bytes;
  bool verify = false;
  bool no_counters = false;
  bool counters = false;
  bool energy = false;  // --energy: joules per launch per point
  bool stalls = false;  // --stalls (and --counter-set full): warp samples per point
  // --stall-samples: the samples each sampled launch aims for (kStallTargetSamples).
  int stall_samples = static_cast<int>(kStallTargetSamples);
  std::uint64_t seed = 20240607;
  std::string save_counter_data;
  std::string counter_set = "roofline";
  std::string devices;               // --devices: fan out over these GPUs
  std::string shard;                 // --shard I/N
  std::string points;                // --points (internal: a --devices worker's share of the sweep)
  std::string counters_after_round;  // --counters-after-round (internal: a worker's turn)
};

// Kernel launches per point, for the cost estimates that split a sweep: warm-ups (all in the
// first round, one in each later round), timed repetitions, counted ranges.
inline int launches_per_point(const RunCommandOptions& options) {
  const int rounds = std::max(1, std::min(options.rounds, options.reps));
  const int warmups = options.warmup + (rounds - 1) * std::min(options.warmup, 1);
  return warmups + options.reps + (options.no_counters ? 0 : options.counter_repeats);
}

}  // namespace roofline::app
