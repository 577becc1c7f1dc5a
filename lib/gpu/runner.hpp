// The Runner measures a sweep of (kernel × workload) points on one GPU: inputs random and
// seeded, outputs poisoned, optional verification against an FP32 reference, timing with CUDA
// events and an L2 flush before every timed launch, and hardware counters through the CUPTI
// range profiler in as few passes as the metric set needs, for the whole sweep at once.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "lib/core/domain/metric_catalog.hpp"
#include "lib/core/domain/stalls.hpp"
#include "lib/core/report/report.hpp"

namespace roofline::gpu {

struct SweepPoint {
  std::string kernel;
  Workload workload;
};

enum class CounterMode {
  kOff,       // --no-counters: timing and model only (so ncu can profile the same binary)
  kAuto,      // counters when permitted; rows say why not otherwise
  kRequired,  // --counters: exit 3 when nothing could be measured
};

struct RunOptions {
  int device = 0;
  // --sms: every launch of the run in a green context of at least this many SMs of the device
  // (green_context.hpp); 0: the whole GPU.
  int sms = 0;
  int warmup = 3;  // untimed launches before a point's first round; one before each later round
  int reps = 20;   // timed repetitions per point, spread over the rounds
  // The sweep is timed in this many interleaved rounds (every point once per round), so that one
  // report's samples span the drift of its own run. At most `reps`.
  int rounds = 5;
  // Seconds each point runs as timed (an L2 flush before each launch) before each of its timing
  // rounds, so that the timed launches start in the power and clock state the kernel itself
  // sets (--settle). 0: none.
  double settle_seconds = 0;
  // Ranges per point in each counter pass (back to back, an L2 flush before each): the spread of
  // a point's counts is the report's own noise for each quantity.
  int counter_repeats = 3;
  // The counter passes come after this timing round (0: right after the first, whose statuses
  // they need; -1 or past the last: after the last). `run --devices` staggers its workers, so
  // that no two GPUs profile at the same time (profiling slows when two processes do).
  int counters_after_round = -1;
  bool verify = false;
  CounterMode counters = CounterMode::kAuto;
  CounterSet counter_set = CounterSet::kRoofline;
  // Sample each ok point's warps once more after the counters (stall_pass.hpp): Row::stalls.
  bool stalls = false;
  // The samples each sampled launch aims for (the period is chosen from its measured time).
  int stall_samples = static_cast<int>(kStallTargetSamples);
  // Measure each ok point's energy per launch after that (energy_pass.hpp): Row::energy.
  bool energy = false;
  std::uint64_t seed = 20240607;
  // Wrap the first timed launch of each point in cudaProfilerStart/Stop when counters are off,
  // so `ncu --profile-from-start off` sees exactly one launch per point.
  bool profiler_api_ranges = true;
  // Test aids for checking the CI gate (scripts/gate_check.sh), by kernel name, as fractions.
  // Slowdown: each timed launch is followed, inside the timed region, by a busy-wait of that
  // fraction of the point's time (measured in this process before the first round, the launch
  // gap included). Extra bytes: each counted range also reads that fraction of the point's model
  // DRAM bytes from a buffer outside L2; the timed launches are unchanged.
  std::map<std::string, double> test_slowdown;
  std::map<std::string, double> test_extra_bytes;
  // Called with a short status line as the sweep goes ("[3/24] flash-v2 N=4096 causal fwd").
  std::function<void(const std::string&)> progress;
};

struct RunResult {
  std::vector<Row> rows;      // one per point, in order; no spec_key or prediction (add_rows)
  DeviceInfo device;          // with the chip name when counters ran
  int green_context_sms = 0;  // the SMs the green context got (RunOptions::sms); 0: none
  std::string counters;       // provenance line for the report context
  // The stall pass's part of it ("; warp stalls: ..."), kept apart until the counter pass has
  // written its own (the stall pass runs first), then appended to `counters`.
  std::string stalls;
  std::vector<std::string> metrics;
  CounterSet counter_set = CounterSet::kRoofline;
  int counter_passes = 0;
  bool counters_measured = false;  // at least one row has counters
  // Another profiler (ncu, nsys) holds CUPTI's profiling in this process: the kernel pass leaves
  // CUPTI to it.
  bool counters_held_elsewhere = false;
  // The decoded counter-data image and, per range in order, the index of its row (to record
  // test fixtures that CI evaluates offline).
  std::vector<std::uint8_t> counter_data_image;
  std::vector<std::size_t> range_rows;
};

// Measures on `device`, which detect_device(options.device) returned (the caller detects once
// and reuses it for choosing the spec). Throws GpuUnavailableError when counters were required
// but none could be measured.
RunResult run_sweep(const std::vector<SweepPoint>& points, const RunOptions& options,
                    const DeviceInfo& device);
// The same, detecting the device first: throws GpuUnavailableError when there is no usable GPU
// (before any CUPTI call).
RunResult run_sweep(const std::vector<SweepPoint>& points, const RunOptions& options);

}  // namespace roofline::gpu
