#include "lib/core/verdict/partition.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <numeric>
#include <optional>

#include "lib/core/base/errors.hpp"
#include "lib/core/model/model.hpp"
#include "lib/core/report/report.hpp"
#include "lib/core/verdict/analysis.hpp"

namespace roofline {
namespace {

// A decimal number of at most 9 digits (no sign, no spaces); nullopt otherwise.
std::optional<int> parse_count(std::string_view text) {
  if (text.empty() || text.size() > 9) return std::nullopt;
  for (char c : text)
    if (c < '0' || c > '9') return std::nullopt;
  int value = 0;
  std::from_chars(text.data(), text.data() + text.size(), value);
  return value;
}

}  // namespace

Shard parse_shard(std::string_view text) {
  const std::string shown(text.substr(0, 40));
  const std::size_t slash = text.find('/');
  const auto index =
      slash == std::string_view::npos ? std::nullopt : parse_count(text.substr(0, slash));
  const auto count =
      slash == std::string_view::npos ? std::nullopt : parse_count(text.substr(slash + 1));
  if (!index || !count)
    throw InputError("--shard must be I/N with whole numbers, 0 <= I < N (got \"" + shown + "\")");
  if (*count < 1 || *count > kMaxShards)
    throw InputError("--shard " + shown + ": N must be between 1 and " +
                     std::to_string(kMaxShards));
  if (*index >= *count)
    throw InputError("--shard " + shown + ": I must be below N (shards are numbered from 0)");
  return {*index, *count};
}

std::vector<std::size_t> balance_costs(const std::vector<double>& costs, std::size_t bins) {
  if (bins == 0) throw InputError("cannot split work into 0 parts");
  for (double cost : costs)
    if (!std::isfinite(cost) || cost < 0)
      throw InputError("a point's cost estimate is not a finite, non-negative number");
  std::vector<std::size_t> order(costs.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return costs[a] > costs[b]; });
  std::vector<double> load(bins, 0.0);
  std::vector<std::size_t> bin_of(costs.size(), 0);
  for (std::size_t item : order) {
    const auto lightest = std::min_element(load.begin(), load.end());  // first of equals
    bin_of[item] = static_cast<std::size_t>(lightest - load.begin());
    *lightest += costs[item];
  }
  return bin_of;
}

double typical_share_of_floor(const std::string& kernel) {
  if (kernel == "standard") return 0.80;
  if (kernel == "flash-v1") return 0.43;
  if (kernel == "flash-v2") return 0.33;
  if (kernel == "flash-v3") return 0.37;
  return 0.5;
}

double estimated_point_seconds(const std::string& kernel, const Workload& workload,
                               const GpuSpec& spec, int launches) {
  Row row;
  row.kernel = kernel;
  row.workload = workload;
  row.spec_key = spec.key;
  row.prediction = predict(find_kernel_model(kernel), workload, spec);
  const RowAnalysis a = analyze(row, spec);
  const double floor = std::isfinite(a.time_floor_seconds) ? a.time_floor_seconds : 0.0;
  const double launch = floor / typical_share_of_floor(kernel) + kLaunchOverheadSeconds;
  return std::max(launches, 1) * launch + kPointSetupSeconds;
}

const GpuSpec& devices_cost_spec(const SpecRegistry& registry,
                                 const std::optional<std::string>& host_gpu,
                                 const std::string& requested) {
  if (const GpuSpec* own = host_gpu ? registry.find_for_device(*host_gpu) : nullptr) return *own;
  return registry.find(requested.empty() ? kShardCostSpec : requested);
}

}  // namespace roofline
