#include "lib/core/domain/stream_floor.hpp"

#include <cmath>
#include <limits>

namespace roofline {

double stream_floor_seconds(const MemoryLevelSpec& level, double bytes) {
  if (level.stream.empty() || !(bytes > 0) || !std::isfinite(bytes))
    return std::numeric_limits<double>::quiet_NaN();
  StreamPoint below{0, 0};
  for (const StreamPoint& point : level.stream) {
    if (bytes <= point.bytes)
      return below.seconds +
             (point.seconds - below.seconds) * (bytes - below.bytes) / (point.bytes - below.bytes);
    below = point;
  }
  return level.bandwidth_gbps > 0
             ? below.seconds + (bytes - below.bytes) / (level.bandwidth_gbps * 1e9)
             : std::numeric_limits<double>::quiet_NaN();
}

}  // namespace roofline
