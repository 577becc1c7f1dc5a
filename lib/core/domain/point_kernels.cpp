#include "lib/core/domain/point_kernels.hpp"

#include <algorithm>
#include <utility>

namespace roofline {
namespace {

using Interval = std::pair<double, double>;

// The length of the union of `intervals` (sorted here).
double union_seconds(std::vector<Interval> intervals) {
  std::sort(intervals.begin(), intervals.end());
  double total = 0, end = -1e300;
  for (const auto& [from, to] : intervals) {
    const double start = std::max(from, end);
    if (to > start) total += to - start;
    end = std::max(end, to);
  }
  return total;
}

Interval interval(const PointKernel& k) {
  return {k.start_seconds, k.start_seconds + std::max(0.0, k.seconds)};
}

}  // namespace

double kernels_seconds(const std::vector<PointKernel>& kernels) {
  double sum = 0;
  for (const PointKernel& k : kernels) sum += k.seconds;
  return sum;
}

double kernels_busy_seconds(const std::vector<PointKernel>& kernels) {
  std::vector<Interval> intervals;
  for (const PointKernel& k : kernels) intervals.push_back(interval(k));
  return union_seconds(std::move(intervals));
}

double overlap_with_earlier_seconds(const std::vector<PointKernel>& kernels, std::size_t k) {
  if (k == 0 || k >= kernels.size()) return 0;
  // |earlier ∩ k| = |earlier| + |k| - |earlier ∪ k|.
  std::vector<Interval> earlier;
  for (std::size_t i = 0; i < k; ++i) earlier.push_back(interval(kernels[i]));
  const double before = union_seconds(earlier);
  earlier.push_back(interval(kernels[k]));
  const double mine = interval(kernels[k]).second - interval(kernels[k]).first;
  return std::max(0.0, before + mine - union_seconds(std::move(earlier)));
}

}  // namespace roofline
