#include "lib/core/statistics.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace roofline {

double median(std::vector<double> values) {
  if (values.empty()) return std::numeric_limits<double>::quiet_NaN();
  std::sort(values.begin(), values.end());
  const std::size_t mid = values.size() / 2;
  return values.size() % 2 == 1 ? values[mid] : (values[mid - 1] + values[mid]) / 2;
}

MannWhitneyResult mann_whitney_u(const std::vector<double>& a, const std::vector<double>& b) {
  MannWhitneyResult result;
  const double n = static_cast<double>(a.size());
  const double m = static_cast<double>(b.size());
  if (a.empty() || b.empty()) return result;
  struct Item {
    double value;
    bool from_a;
  };
  std::vector<Item> pooled;
  pooled.reserve(a.size() + b.size());
  for (double v : a) pooled.push_back({v, true});
  for (double v : b) pooled.push_back({v, false});
  std::sort(pooled.begin(), pooled.end(),
            [](const Item& x, const Item& y) { return x.value < y.value; });
  double rank_sum_a = 0;
  double tie_term = 0;  // Σ (t³ − t)
  for (std::size_t i = 0; i < pooled.size();) {
    std::size_t j = i;
    while (j < pooled.size() && pooled[j].value == pooled[i].value) ++j;
    const double t = static_cast<double>(j - i);
    const double average_rank = (static_cast<double>(i + 1) + static_cast<double>(j)) / 2;
    for (std::size_t k = i; k < j; ++k)
      if (pooled[k].from_a) rank_sum_a += average_rank;
    tie_term += t * t * t - t;
    i = j;
  }
  const double total = n + m;
  result.u = rank_sum_a - n * (n + 1) / 2;
  const double mean = n * m / 2;
  const double variance = n * m / 12 * ((total + 1) - tie_term / (total * (total - 1)));
  if (!(variance > 0)) return result;  // every value tied: no evidence either way
  const double deviation = std::max(0.0, std::fabs(result.u - mean) - 0.5);
  const double z = deviation / std::sqrt(variance);
  result.z = result.u >= mean ? z : -z;
  result.p_value = std::min(1.0, std::erfc(z / std::sqrt(2.0)));
  return result;
}

double disjoint_ranges_p_value(std::size_t n, std::size_t m) {
  if (n == 0 || m == 0) return 1.0;
  // 2 / C(n+m, n), as a product to stay finite for large n and m.
  double inverse_binomial = 1.0;
  const std::size_t k = std::min(n, m);
  for (std::size_t i = 1; i <= k; ++i)
    inverse_binomial *= static_cast<double>(i) / static_cast<double>(n + m - k + i);
  return std::min(1.0, 2 * inverse_binomial);
}

}  // namespace roofline
