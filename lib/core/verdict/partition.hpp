// Splitting a sweep between workers: GPUs of one host (`run --devices`) and shards that external
// schedulers run (`run --shard I/N`). Pure functions: the same points and costs always give the
// same assignment, on every machine.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "lib/core/domain/gpu_spec.hpp"
#include "lib/core/domain/workload.hpp"

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

// Estimated seconds to measure one sweep point of `launches` kernel launches (warm-ups, timed
// repetitions and counted ranges): each launch takes the analytic model's roofline time floor on
// `spec` (FLOPs on the kernel's pipe ÷ its peak, or the cache-aware model's bytes per level ÷
// that level's bandwidth, the largest) divided by
// the share of that floor the kernel family typically reaches (typical_share_of_floor), plus
// kLaunchOverheadSeconds for the L2 flush and launch around it; the point adds
// kPointSetupSeconds (allocation, input fill, reference). Only the ratios between points matter,
// but they decide whether the GPUs of `run --devices` finish together.
inline constexpr double kLaunchOverheadSeconds = 40e-6;
inline constexpr double kPointSetupSeconds = 25e-3;
double estimated_point_seconds(const std::string& kernel, const Workload& workload,
                               const GpuSpec& spec, int launches = 1);

// The share of its roofline time floor a bundled kernel family reaches: Σ floors ÷ Σ measured
// times over the seed sweep fwd+bwd on the H200 (the one-GPU reports of
// scripts/fleet_check.sh, `run --pass fwd,bwd --reps 30`; floors from `model --gpu h200`),
// so that the long points, which decide the balance, weigh most: standard 0.80, flash-v1 0.43,
// flash-v2 0.33, flash-v3 0.37 (the same to 0.001 in four runs). 0.5 for any other kernel.
double typical_share_of_floor(const std::string& kernel);

// The spec whose model costs split `--shard` sweeps: fixed, so that every machine of a fleet
// computes the same partition whatever GPU it has.
inline constexpr const char* kShardCostSpec = "h100-sxm5";

// The spec whose model costs split `run --devices` over one host's GPUs (only the ratios of the
// costs matter): the spec naming the host's GPU (`host_gpu`, the driver's name for it), else
// the one asked for (--gpu), else kShardCostSpec.
const GpuSpec& devices_cost_spec(const SpecRegistry& registry,
                                 const std::optional<std::string>& host_gpu,
                                 const std::string& requested);

}  // namespace roofline
