// Splitting a sweep between workers: GPUs of one host (`run --devices`) and shards that external
// schedulers run (`run --shard I/N`). Pure functions: the same points and costs always give the
// same assignment, on every machine.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "lib/core/gpu_spec.hpp"
#include "lib/core/workload.hpp"

namespace roofline {

// Shard `index` of `count` (0 <= index < count), as given by `--shard I/N`.
struct Shard {
  int index = 0;
  int count = 1;
};

inline constexpr int kMaxShards = 100000;

// "I/N" with 0 <= I < N <= kMaxShards, decimal digits only; throws InputError otherwise.
Shard parse_shard(std::string_view text);

// Each item's bin (0 .. bins−1), balancing the sum of costs per bin: longest processing time
// first (the costliest item goes to the least loaded bin; ties go to the lower item index and
// the lower bin). Every bin's total is at most the mean total plus the costliest item.
// Costs must be finite and non-negative (InputError otherwise); bins >= 1.
std::vector<std::size_t> balance_costs(const std::vector<double>& costs, std::size_t bins);

// Estimated seconds to measure one sweep point: the analytic model's roofline time floor on
// `spec` (FLOPs on the kernel's pipe ÷ its peak, or DRAM bytes ÷ bandwidth, the larger) plus
// kPointOverheadSeconds for the L2 flush and launch around every timed repetition. Only the
// ratios between points matter.
inline constexpr double kPointOverheadSeconds = 40e-6;
double estimated_point_seconds(const std::string& kernel, const Workload& workload,
                               const GpuSpec& spec);

// The spec whose model costs split `--shard` sweeps: fixed, so that every machine of a fleet
// computes the same partition whatever GPU it has.
inline constexpr const char* kShardCostSpec = "h100-sxm5";

}  // namespace roofline
