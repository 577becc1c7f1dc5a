#include "lib/core/model/exp_roof.hpp"

#include <limits>

namespace roofline {
namespace {
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
}

double exp_rate_per_second(double per_clock_per_sm, int sm_count, double clock_hz) {
  if (!(per_clock_per_sm > 0) || sm_count <= 0 || !(clock_hz > 0)) return 0;
  return per_clock_per_sm * sm_count * clock_hz;
}

double flops_per_exponential(double flops, double exponentials) {
  return exponentials > 0 ? flops / exponentials : kNaN;
}

double exp_roof_flops_per_second(double flops, double exponentials, double exp_per_second) {
  if (!(flops > 0) || !(exponentials > 0) || !(exp_per_second > 0)) return kNaN;
  return exp_per_second * flops / exponentials;
}

double exp_time_floor_seconds(double exponentials, double exp_per_second) {
  return exp_per_second > 0 ? exponentials / exp_per_second : kNaN;
}

}  // namespace roofline
