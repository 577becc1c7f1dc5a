// The memory levels' roofs: DRAM, L2 and L1/shared memory, each a slope of its bandwidth.
// Bytes counted where the counters have them, else the model's.
#include <cmath>
#include <limits>

#include "lib/core/domain/metric_catalog.hpp"
#include "lib/core/model/roofline.hpp"
#include "lib/core/verdict/roof.hpp"

namespace roofline {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

double counter(const Row& row, const char* id) {
  auto it = row.counters.find(id);
  return it == row.counters.end() ? kNaN : it->second;
}

class MemoryLevels final : public Roof {
 public:
  void place(const RoofInputs& in, RowAnalysis& a) const override {
    const Row& row = in.row;
    struct LevelBytes {
      MemoryLevel level;
      double bytes;
      Source source;
    };
    std::vector<LevelBytes> level_bytes;
    const double dram_read = counter(row, quantity::kDramRead);
    const double dram_write = counter(row, quantity::kDramWrite);
    if (!std::isnan(dram_read) && !std::isnan(dram_write))
      level_bytes.push_back({MemoryLevel::kDram, dram_read + dram_write, Source::kMeasured});
    else
      level_bytes.push_back({MemoryLevel::kDram, row.prediction.model_dram_bytes, Source::kModel});
    if (double l2 = counter(row, quantity::kL2); !std::isnan(l2))
      level_bytes.push_back({MemoryLevel::kL2, l2, Source::kMeasured});
    // Shared-memory wavefronts of every operation (full set) join the L1 level: L1 and shared
    // memory share one 128-byte data pipe, and wgmma's operand reads are in the count.
    const double shared_wavefronts = counter(row, quantity::kSharedWavefronts);
    const double gmma_wavefronts = counter(row, quantity::kSharedWavefrontsGmma);
    const bool shared_counted = std::isfinite(shared_wavefronts);
    if (double l1 = counter(row, quantity::kL1); !std::isnan(l1))
      level_bytes.push_back({MemoryLevel::kL1,
                             l1 + (shared_counted ? kSharedWavefrontBytes * shared_wavefronts : 0),
                             Source::kMeasured});
    else if (row.prediction.model_l1_bytes > 0)
      level_bytes.push_back({MemoryLevel::kL1, row.prediction.model_l1_bytes, Source::kModel});
    // wgmma reads its operands from shared memory and TMA fills it, past the accesses that L1's
    // counters (and the model's L1 terms) see. Without counters, only on a GPU that has wgmma
    // (elsewhere cuBLAS runs mma.sync, whose loads the model's L1 terms include).
    const bool l1_partial =
        !shared_counted && in.instruction == TensorInstruction::kWgmma &&
        (in.flops_source == Source::kMeasured ||
         (a.ceiling != nullptr && a.ceiling->instruction == TensorInstruction::kWgmma));

    for (const LevelBytes& lb : level_bytes) {
      LevelAnalysis level;
      level.level = lb.level;
      level.bytes = lb.bytes;
      level.bytes_source = lb.source;
      level.intensity = arithmetic_intensity(a.flops, lb.bytes);
      const MemoryLevelSpec* level_spec = in.spec.level(lb.level);
      level.peak_bandwidth_bytes_per_second = level_spec ? level_spec->bandwidth_gbps * 1e9 : kNaN;
      if (level_spec == nullptr && lb.level == MemoryLevel::kL1 &&
          in.spec.shared_bytes_per_second() > 0)
        level.peak_bandwidth_bytes_per_second = in.spec.shared_bytes_per_second();
      level.ridge = ridge_point(a.peak_flops_per_second, level.peak_bandwidth_bytes_per_second);
      level.ridge_factor = ridge_factor(level.intensity, level.ridge);
      level.attainable_flops_per_second = attainable_flops_per_second(
          level.intensity, level.peak_bandwidth_bytes_per_second, a.peak_flops_per_second);
      level.time_floor_seconds = seconds_at(lb.bytes, level.peak_bandwidth_bytes_per_second);
      level.partial = lb.level == MemoryLevel::kL1 && l1_partial;
      if (level.partial)
        a.footnotes.push_back(
            {NoteKind::kL1Partial, "",
             "L1 bytes leave out wgmma's operand reads from shared memory and TMA copies: the L1 "
             "intensity is an upper bound, not a verdict"});
      // A partial level's bytes are still a lower bound on its traffic, so its floor holds.
      if (!std::isnan(level.time_floor_seconds))
        a.time_floor_seconds = std::isnan(a.time_floor_seconds)
                                   ? level.time_floor_seconds
                                   : std::max(a.time_floor_seconds, level.time_floor_seconds);
      a.levels.push_back(level);
    }
    if (shared_counted && gmma_wavefronts > 0)
      a.footnotes.push_back(
          {NoteKind::kSharedWavefronts, "",
           "L1/shared bytes: L1TEX global and local accesses + 128 B per shared-memory wavefront "
           "(wgmma operand reads included; TMA writes into shared memory are not LSU wavefronts)"});
  }

  void rate(RowAnalysis& a) const override {
    for (LevelAnalysis& level : a.levels) {
      level.achieved_bytes_per_second = level.bytes / a.time_seconds;
      level.bandwidth_utilisation =
          level.achieved_bytes_per_second / level.peak_bandwidth_bytes_per_second;
    }
    a.ridge_factor = a.dram()->ridge_factor;
  }

  // The lowest slope below the compute ceiling binds (a partial level never does).
  void bind(RowAnalysis& a) const override {
    for (const LevelAnalysis& level : a.levels) {
      if (std::isnan(level.attainable_flops_per_second) || level.partial) continue;
      if (level.attainable_flops_per_second < a.attainable_flops_per_second * (1 - 1e-12)) {
        a.attainable_flops_per_second = level.attainable_flops_per_second;
        a.compute_bound = false;
        a.binding = display_name(level.level);
        a.regime = "memory-bound (" + a.binding + ")";
      }
    }
  }

  void check(const RoofInputs& in, RowAnalysis& a) const override {
    for (const LevelAnalysis& level : a.levels)
      if (in.timed && !in.projection &&
          level.achieved_bytes_per_second > level.peak_bandwidth_bytes_per_second * 1.02)
        a.warnings.push_back({NoteKind::kAboveLevelRoof, std::string(display_name(level.level)),
                              std::string("above the ") + std::string(display_name(level.level)) +
                                  " roof: bytes or bandwidth are wrong"});
  }
};

}  // namespace

std::unique_ptr<const Roof> memory_levels_roof() {
  return std::make_unique<MemoryLevels>();
}

}  // namespace roofline
