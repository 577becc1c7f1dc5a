// What to try next for one row, computed from its numbers: the roof that binds and how close
// the row is to it, the roof above that one, and the lever the counters point to, with the
// evidence and an estimated gain.
//
// The gain is an upper bound, as Nsight Compute's "Est. Speedup" is: the row's time over the
// time floor it would have with the lever pulled (the work at the best roof the lever opens,
// the bytes at their bandwidths), never a prediction that the kernel gets there. The work the
// floor counts is the least the operation needs (the FlashAttention count for bundled kernels,
// which every kernel computes at least; the counted FLOPs otherwise), so that a faster kernel
// of the same operation cannot beat the bound by doing less.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "lib/core/verdict/analysis.hpp"

namespace roofline {

enum class Lever {
  kTail,         // the grid leaves SMs idle: more CTAs (smaller tiles, split KV, persistent)
  kFusion,       // several kernels through DRAM (standard attention): one fused kernel
  kReuse,        // DRAM bytes far above the compulsory ones: tiles that reuse what they load
  kTensorCores,  // matrix work on CUDA cores: tensor cores
  kWgmma,        // mma.sync on a GPU with wgmma
  kOnChip,       // L1/shared traffic binds: fewer on-chip reads per FLOP (register reuse)
  kExp,          // the exponential unit binds: fewer MUFU exponentials per FLOP
  kBandwidth,    // memory-bound well below the level's bandwidth: access pattern, vector loads
  kOccupancy,    // DRAM-bound far below it with a grid that fills few CTA slots: split-KV
  kAtRoof,       // at its roof already: only a different roof (algorithm) helps
  kLatency,      // far from its roof and no counter points to why: latency, occupancy, stalls
};

// "more CTAs", "fusion", "reuse", "tensor cores", "wgmma", "on-chip reuse", "fewer exp",
// "bandwidth", "bytes in flight", "at roof", "latency"
const char* to_string(Lever lever);

// One lever with its evidence, what to do, the floor it leaves and the gain up to it.
struct LeverAdvice {
  Lever lever = Lever::kLatency;
  std::string evidence;
  std::string action;
  double target_time_seconds = 0;
  double estimated_speedup = 0;
};

struct Advice {
  std::string roof;            // the binding roof ("DRAM", "tensor FP16 (mma_sync)", "tail")
  double of_roof = 0;          // fraction of it reached (time floor ÷ time)
  double gain_to_roof = 0;     // time ÷ time floor: if it reached its own roof
  std::string next_roof;       // the next-lowest roof; empty when none
  double next_roof_ratio = 0;  // its attainable rate ÷ the binding one's (NaN when none)
  Lever lever = Lever::kLatency;
  std::string evidence;  // "DRAM moves 6.1× the compulsory bytes (5.2 GB against 0.86 GB)"
  double target_time_seconds = 0;  // the floor with the lever pulled
  double estimated_speedup = 0;    // time ÷ target: an upper bound (≥ 1)
  std::string action;              // what to do, one clause
  // The other levers the numbers point to (a tail-bound mma.sync kernel: wgmma too), in order
  // of priority; each gain is its own, not cumulative.
  std::vector<LeverAdvice> also;
  // "wgmma: mma.sync's roof is 713.7 TFLOP/s, wgmma's 989.4 (×1.39); up to ×2.95"
  std::string line() const;
  // "wgmma ≤×2.95"
  std::string brief() const;
};

// nullopt for rows without a verdict or without a time.
std::optional<Advice> advise(const Row& row, const RowAnalysis& a, const GpuSpec& spec);

}  // namespace roofline
