#include "lib/core/model/cache_model.hpp"

#include <algorithm>

namespace roofline {

double l2_hit_fraction(double footprint_bytes, double l2_bytes) {
  if (!(l2_bytes > 0)) return 0;
  const double usable_low = l2_bytes / 2;
  if (footprint_bytes <= usable_low) return 1;
  if (footprint_bytes >= l2_bytes) return 0;
  return (l2_bytes - footprint_bytes) / (l2_bytes - usable_low);
}

double l2_retained_writes(double written_bytes, double traffic_bytes, double l2_bytes) {
  if (!(l2_bytes > 0) || !(written_bytes > 0)) return 0;
  constexpr double kDirtyShare = 0.4, kAllKept = 0.7, kNoneKept = 1.5;
  const double x = traffic_bytes / l2_bytes;
  const double kept = std::clamp((kNoneKept - x) / (kNoneKept - kAllKept), 0.0, 1.0);
  return std::min(written_bytes, kDirtyShare * l2_bytes) * kept;
}

double rows_reread_miss_fraction(double n, double in_flight_bytes_per_element, bool growing,
                                 double l2_bytes) {
  if (!growing) return 1 - l2_hit_fraction(in_flight_bytes_per_element * n, l2_bytes);
  // Σ over rows of length·miss(length) ÷ Σ length, by the midpoint rule over 1024 slices of
  // the lengths 0..n (the miss fraction is piecewise linear in the length).
  constexpr int kSlices = 1024;
  double weighted = 0, total = 0;
  for (int i = 0; i < kSlices; ++i) {
    const double length = n * (i + 0.5) / kSlices;
    weighted += length * (1 - l2_hit_fraction(in_flight_bytes_per_element * length, l2_bytes));
    total += length;
  }
  return total > 0 ? weighted / total : 0;
}

StreamedTraffic stream_through_l2(const StreamedOperand& op, double l2_bytes) {
  StreamedTraffic t;
  const long long per_head = std::max(1LL, op.ctas_per_head);
  const long long total = op.heads * per_head;
  const long long resident = std::max(1LL, op.resident_ctas);
  const double row_bytes = op.read_row_bytes + op.rmw_row_bytes;
  long long prev_last_head = -1;
  double prev_last_rows = 0;  // rows the previous wave streamed of its last head
  double prev_footprint = 0;
  for (long long lo = 0; lo < total; lo += resident) {
    const long long hi = std::min(total, lo + resident) - 1;
    const long long first_head = lo / per_head;
    const long long last_head = hi / per_head;
    double footprint = static_cast<double>(hi - lo + 1) * op.own_cta_bytes;
    double last_rows = 0;
    for (long long h = first_head; h <= last_head; ++h) {
      const long long first_x = h == first_head ? lo % per_head : 0;
      const double rows = op.rows(first_x);  // the longest CTA of this head in the wave
      double reused = 0;
      if (h == prev_last_head)
        reused = std::min(rows, prev_last_rows) * l2_hit_fraction(prev_footprint, l2_bytes);
      const double missed = rows - reused;
      const double first_touch = h == prev_last_head ? std::max(0.0, rows - prev_last_rows) : rows;
      // Rows seen before that missed again: reads of the whole row, and the accumulator's
      // write-back; rows touched for the first time: the accumulator misses as the caller says.
      const double again = missed - first_touch;
      t.read_bytes += missed * op.read_row_bytes + again * op.rmw_row_bytes +
                      first_touch * op.rmw_row_bytes * op.rmw_first_touch_miss;
      t.write_bytes += again * op.rmw_row_bytes;
      t.first_touch_bytes += first_touch * op.read_row_bytes;
      footprint += rows * row_bytes;
      last_rows = rows;
    }
    t.max_wave_footprint = std::max(t.max_wave_footprint, footprint);
    t.waves += 1;
    prev_last_head = last_head;
    prev_last_rows = last_rows;
    prev_footprint = footprint;
  }
  return t;
}

}  // namespace roofline
