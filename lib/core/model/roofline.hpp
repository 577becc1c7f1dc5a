// Roofline math: pure functions, units in the names. FLOP/s and bytes/s are plain SI
// (1 TFLOP/s = 1e12 FLOP/s, 1 GB/s = 1e9 B/s).
#pragma once

#include <string>

namespace roofline {

// FLOPs per byte moved at one memory level. NaN when bytes <= 0.
double arithmetic_intensity(double flops, double bytes);

// FLOP/byte at which the bandwidth slope meets the compute ceiling.
double ridge_point(double peak_flops_per_second, double bandwidth_bytes_per_second);

// min(peak, intensity × bandwidth): the roof above a point.
double attainable_flops_per_second(double intensity, double bandwidth_bytes_per_second,
                                   double peak_flops_per_second);

// intensity / ridge: < 1 memory-bound (the point lies that factor left of the ridge),
// > 1 compute-bound.
double ridge_factor(double intensity, double ridge);

// "7.6× below", "2.1× above", "at ridge" (within 5%).
std::string describe_ridge_factor(double factor);

// Time floor of one level or ceiling: work / rate.
double seconds_at(double work, double rate_per_second);

// Peak scaled from the clock it was quoted at to another clock (same per-cycle rate).
double peak_at_clock(double peak_flops_per_second, double spec_clock_hz, double clock_hz);

}  // namespace roofline
