#include "lib/core/domain/point_kernels.hpp"

namespace roofline {

double kernels_seconds(const std::vector<PointKernel>& kernels) {
  double sum = 0;
  for (const PointKernel& k : kernels) sum += k.seconds;
  return sum;
}

}  // namespace roofline
