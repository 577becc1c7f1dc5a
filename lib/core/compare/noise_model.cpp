#include "lib/core/compare/noise_model.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "lib/core/domain/metric_catalog.hpp"

namespace roofline {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

}  // namespace

std::string_view to_string(QuantityKind kind) {
  switch (kind) {
    case QuantityKind::kExact:
      return "exact";
    case QuantityKind::kCache:
      return "cache";
    case QuantityKind::kResidency:
      return "residency";
  }
  return "?";
}

const std::vector<QuantityDef>& quantity_defs() {
  static const std::vector<QuantityDef> kDefs = {
      {"dram_read_bytes",
       "DRAM-read bytes",
       "bytes",
       QuantityKind::kCache,
       false,
       {quantity::kDramRead}},
      {"dram_write_bytes",
       "DRAM-write bytes",
       "bytes",
       QuantityKind::kResidency,
       false,
       {quantity::kDramWrite}},
      {"l2_bytes", "L2 bytes", "bytes", QuantityKind::kCache, false, {quantity::kL2}},
      {"l1_bytes", "L1 bytes", "bytes", QuantityKind::kCache, false, {quantity::kL1}},
      {"shared_bytes", "shared bytes", "bytes", QuantityKind::kExact, false, {quantity::kShared}},
      {"tensor_flops",
       "tensor FLOPs",
       "flops",
       QuantityKind::kExact,
       true,
       {quantity::kTensorMmaSync, quantity::kTensorWgmma}},
      {"fp16_flops", "FP16 FLOPs", "flops", QuantityKind::kExact, true, {quantity::kFp16Flops}},
      {"fp32_flops", "FP32 FLOPs", "flops", QuantityKind::kExact, true, {quantity::kFp32Flops}},
  };
  return kDefs;
}

QuantityValue quantity_value(const QuantityDef& def, const Row& row) {
  QuantityValue out;
  bool any = false;
  double sum = 0;
  for (const std::string& key : def.keys) {
    auto it = row.counters.find(key);
    if (it == row.counters.end() || std::isnan(it->second)) continue;
    any = true;
    sum += it->second;
  }
  out.value = any ? sum : kNaN;
  if (!any) return out;
  out.counts = 1;
  // Per-range totals, when every summed key has the same number of ranges.
  std::vector<double> totals;
  for (const std::string& key : def.keys) {
    auto it = row.counter_samples.find(key);
    if (it == row.counter_samples.end()) {
      if (row.counters.count(key) != 0) return out;  // counted once only
      continue;
    }
    if (totals.empty()) totals.assign(it->second.size(), 0);
    if (it->second.size() != totals.size()) return out;
    for (std::size_t k = 0; k < totals.size(); ++k) totals[k] += it->second[k];
  }
  if (totals.size() < 2) return out;
  out.counts = totals.size();
  const auto [low, high] = std::minmax_element(totals.begin(), totals.end());
  out.spread = out.value > 0 ? (*high - *low) / out.value : 0;
  return out;
}

double quantity_margin(const QuantityDef& def, const QuantityValue& base, const QuantityValue& head,
                       double tolerance, const NoiseModel& model) {
  double margin = tolerance + base.spread + head.spread;
  if (def.kind == QuantityKind::kCache) {
    margin += 2 * model.cache_floor;
    if (base.value > 0) margin += 2 * model.cache_floor_bytes / base.value;
  }
  return margin;
}

TimeSide time_side(const Timing& timing) {
  TimeSide side;
  side.samples = timing.samples_seconds.size();
  side.median_seconds = timing.median_seconds();
  side.min_seconds = timing.min_seconds();
  side.max_seconds = timing.max_seconds();
  side.relative_spread = timing.relative_spread();
  std::vector<double> logs;
  const auto rounds = timing.round_samples();
  if (rounds.size() >= 2) {
    for (const std::vector<double>& round : rounds) logs.push_back(std::log(median(round)));
    side.rounds = rounds.size();
  } else {
    for (double seconds : timing.samples_seconds) logs.push_back(std::log(seconds));
  }
  side.log_center = mean_estimate(logs);
  return side;
}

}  // namespace roofline
