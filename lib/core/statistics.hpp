// Statistics for comparing measurements: pure functions on samples, no report types.
#pragma once

#include <cstddef>
#include <vector>

namespace roofline {

// Median; NaN for an empty sample.
double median(std::vector<double> values);

struct MannWhitneyResult {
  double u = 0;        // U of the first sample: pairs (a, b) with a > b, ties counting 1/2
  double z = 0;        // standardised, continuity-corrected; sign: positive when a tends larger
  double p_value = 1;  // two-sided
};

// Two-sided Mann–Whitney U test (Wilcoxon rank-sum) with the normal approximation:
//   ranks of the pooled samples, ties given their average rank;
//   U = R_a − n(n+1)/2;  mean n·m/2;
//   variance n·m/12 · ((N+1) − Σ(t³ − t) / (N(N−1))), N = n+m, t = size of each tie group;
//   z = (|U − mean| − 1/2) / sd (continuity correction, not below 0);  p = erfc(z / √2).
// p = 1 when either sample is empty or every value is tied. Adequate from about 8 samples a
// side.
MannWhitneyResult mann_whitney_u(const std::vector<double>& a, const std::vector<double>& b);

// Probability that n and m samples of one continuous distribution have disjoint [min, max]
// ranges: 2 / C(n+m, n). 1 when either side is empty.
double disjoint_ranges_p_value(std::size_t n, std::size_t m);

}  // namespace roofline
