// Where a row stands on its spec's roofline: derived from the row's raw quantities only.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "lib/core/model/tail_effect.hpp"
#include "lib/core/report/report.hpp"
#include "lib/core/report/row_note.hpp"
#include "lib/core/verdict/analysis_energy.hpp"
#include "lib/core/verdict/analysis_exp.hpp"

namespace roofline {

struct LevelAnalysis {
  MemoryLevel level;
  double bytes = 0;
  Source bytes_source = Source::kModel;
  double intensity = 0;                        // FLOP/byte (roofline FLOPs over these bytes)
  double peak_bandwidth_bytes_per_second = 0;  // from the spec; NaN when it has none
  double achieved_bytes_per_second = 0;        // bytes / time
  double bandwidth_utilisation = 0;            // achieved / peak
  double ridge = 0;                            // FLOP/byte where this slope meets the ceiling
  double ridge_factor = 0;                     // intensity / ridge
  double attainable_flops_per_second = 0;      // min(peak, intensity × bandwidth)
  double time_floor_seconds = 0;               // bytes / peak bandwidth
  // The bytes miss part of the level's traffic (L1 of a wgmma kernel: its operand reads from
  // shared memory and TMA copies bypass the counted accesses), so intensity and attainable
  // rate are upper bounds, not a verdict: such a level never decides the regime.
  bool partial = false;
};

struct RowAnalysis {
  bool has_verdict = false;  // false for incorrect / too_large / error rows
  // A profiled launch with no FLOPs counted (the default set counts FP16 tensor FLOPs only):
  // judged on its bytes alone. No FLOP ceiling, intensity or FLOP rate; the binding level is
  // the one with the longest time floor, and the regime says how much of its bandwidth the
  // launch used ("memory-bound: DRAM at 78% of 4800 GB/s").
  bool bandwidth_only = false;
  const ComputeCeiling* ceiling = nullptr;  // the path the kernel used; null if spec lacks it
  std::string path_note;  // how the path was chosen ("counters: 97% of FLOPs on mma.sync")

  double flops = 0;  // FLOPs on the binding path (counted, or the model's)
  Source flops_source = Source::kModel;
  double algorithmic_flops = 0;    // FlashAttention convention
  double total_counted_flops = 0;  // every pipe, when measured (NaN otherwise)

  double time_seconds = 0;  // median measured time, or the model's time floor
  Source time_source = Source::kModel;
  double flops_per_second = 0;              // flops / time
  double algorithmic_flops_per_second = 0;  // algorithmic / time (compare with PyTorch)

  double peak_flops_per_second = 0;   // at the spec's clock
  double measured_clock_hz = 0;       // NaN when unknown
  double peak_at_measured_clock = 0;  // NaN when unknown
  double compute_utilisation = 0;     // flops/s ÷ peak (spec clock)
  double compute_utilisation_measured_clock = 0;

  std::vector<LevelAnalysis> levels;  // levels with bytes, DRAM first
  // The DRAM level (every analysed row has one); null before the levels are filled in.
  const LevelAnalysis* dram() const { return levels.empty() ? nullptr : &levels.front(); }

  // The exponential unit as a roof in FLOP units (analysis_exp.hpp); it binds when lowest.
  ExpRoofAnalysis exp;
  bool exp_bound = false;

  bool compute_bound = false;
  std::string binding;  // "DRAM", "L2", "XU", "tail", or the ceiling label
  // "memory-bound (DRAM)", "compute-bound (tensor FP16 (mma_sync))", "exp-bound (XU)",
  // "tail-bound: 64 CTAs on 132 SMs, 48% busy"
  std::string regime;
  double ridge_factor = 0;  // at the DRAM level
  // The tail effect of the launch's grid (tail_effect.hpp), when the grid is known: a bundled
  // flash kernel's, or a profiled launch's. Its roof is the compute ceiling × efficiency (NaN
  // without a grid or a ceiling); it enters the bound below, and names the binding roof
  // ("tail") when it is the lowest and the efficiency is below kTailBindsBelow.
  std::optional<TailEffect> tail;
  double tail_roof_flops_per_second = 0;
  bool tail_bound = false;
  double attainable_flops_per_second = 0;  // the bound it could reach: min over roofs
  double time_floor_seconds = 0;  // max(flops/peak, bytes_L/bandwidth_L, exponentials/XU rate)
  double fraction_of_bound = 0;   // time floor ÷ time

  // Measured beside the model (NaN when not measured).
  double flops_vs_model = 0;       // counted total / model FLOPs
  double dram_bytes_vs_model = 0;  // counted DRAM / model DRAM bytes
  double dram_bytes_vs_compulsory = 0;

  std::vector<RowNote> warnings;
  // Fixed properties of the kernel or the counter set that qualify the row without being a
  // problem (an L1 level that wgmma's operand reads bypass; FLOPs the set does not count):
  // footnotes of a table, not warnings.
  std::vector<RowNote> footnotes;

  // Projection (analyze(row, report) on a report measured on another GPU): time, rates and
  // re-estimated DRAM bytes are `projected`; the note says how.
  bool projected = false;
  std::string projection_note;
  // Onto a share of its GPU's SMs, its time read from its share run (Row::share_run); or,
  // without one, a row that filled its level on all the SMs, whose time there is the longest it
  // may take (sm_share.hpp: past_share_knee).
  bool from_share_run = false;
  bool share_time_at_most = false;

  // The energy verdict (analysis_energy.hpp): only by analyze(row, report), for a row with
  // counters and a time on a GPU with energy coefficients.
  std::optional<EnergyAnalysis> energy;
};

// `projection`: measured on another GPU than `spec` describes; a point above a roof is then
// expected and not warned about.
RowAnalysis analyze(const Row& row, const GpuSpec& spec, bool projection = false);

// The row judged against its spec in `report`. When the report is a projection that names the
// spec of the GPU it was measured on (context.measured_spec), a timed row is projected:
//   - FLOPs per pipe as counted; L2 and L1 bytes as counted (same kernel, same tiles);
//   - DRAM bytes × (cache-aware model on the target ÷ on the measured GPU): the target's L2;
//   - time = the target's roofline floor ÷ the fraction of the bound reached when measured
//     (at most 1). The gap to the roof (latency, occupancy, instruction overhead) belongs to
//     the kernel's code and tiles, which both GPUs run; the roofs are what differ. So no
//     utilisation of the target can exceed 100%, and a compute-bound kernel projects to the
//     measured FLOP/s × the ratio of the two pipes' peaks;
//   - a pipe the target lacks (wgmma on an A100) falls back to the target's ceiling for the
//     path, and the note says which and at what cost.
RowAnalysis analyze(const Row& row, const Report& report);

// How many times analyze(row, report) has run in this process: a test holds a command to one
// verdict per row (JudgedReport).
std::size_t verdicts_made();

}  // namespace roofline
