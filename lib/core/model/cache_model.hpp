// How much of a kernel's re-read traffic an L2 cache of a given capacity serves: the pieces the
// cache-aware DRAM model (model.cpp) is built from. Pure functions, bytes in and bytes out.
//
// The picture: a grid of CTAs, `ctas_per_head` per head, launched head after head (the tile
// index is blockIdx.x, the head blockIdx.y), `resident_ctas` of them on the GPU at a time. Every
// CTA of a head streams a prefix of the same per-head operand (K and V for a query-tile CTA,
// Q, dO, LSE and D for a key-tile CTA), from its first row, at about the same pace as the
// others. So the CTAs of one head that are resident together share each row while it is in
// L2: the group reads it from DRAM once. A later group of CTAs of the same head (the next
// "wave") finds the rows still in L2 only if what the whole GPU touched in between, about one
// wave's footprint, fits.
//
// L2 capacity for reuse: data read by every SM may be held in both halves of a partitioned L2
// (A100, H100, H200), so between half of it and all of it is usable. A footprint below half the
// L2 is taken to hit, one above the whole L2 to miss (LRU-like streaming evicts the oldest
// lines first), and the hit fraction falls linearly in between.
#pragma once

#include <functional>

namespace roofline {

// Fraction of re-reads served by L2 when `footprint_bytes` were touched since the last use.
double l2_hit_fraction(double footprint_bytes, double l2_bytes);

// Of the `written_bytes` a kernel leaves dirty (its distinct written lines), the bytes still in
// L2 when it ends, written back later, outside its counters, given the DRAM traffic it moves
// otherwise (reads and writes): at most 40% of the L2, all of that while the traffic stays
// under 0.7 L2, none once it passes 1.5 L2, linearly in between. Fitted, not derived: to the
// counted DRAM bytes of the 628 rows of the seed-40, holdout, fresh, fresh2 and fresh3 groups
// of scripts/model_vs_counters.py on the H200, every one then within 1.5× where more than
// 10 MB, and so for caps of 35-45% and bounds 0.5-0.9 and 1.2-2.0 alike (NOTES.md). ncu's
// per-kernel counts agree on the cap: a cuBLAS GEMM writing S, alone and with L2 flushed before
// it, wrote none of 17 MB back while it ran, 3 of 28 MB, 9 of 36 MB.
double l2_retained_writes(double written_bytes, double traffic_bytes, double l2_bytes);

// Rows re-read by a kernel that works on many rows at once: the fraction of the re-read bytes
// that miss L2 when each row is re-read while `in_flight_bytes_per_element` × its length of
// other rows' data is in flight (the resident rows, each about as long). `growing`: row i holds
// i + 1 of the `n` elements (a causal mask's valid prefix), so short rows early hit and long
// rows late miss, weighted by their bytes; else every row holds all n.
double rows_reread_miss_fraction(double n, double in_flight_bytes_per_element, bool growing,
                                 double l2_bytes);

struct StreamedOperand {
  long long heads = 1;          // B·H
  long long ctas_per_head = 1;  // grid.x
  long long resident_ctas = 1;  // SMs × CTAs per SM
  // Rows of the operand the CTA at launch position x (0-based, within its head) streams. Must
  // not increase with x (the kernels launch their longest CTAs first).
  std::function<double(long long x)> rows;
  double read_row_bytes = 0;  // read-only bytes per streamed row
  double rmw_row_bytes = 0;   // accumulator bytes per row: read, and written back when evicted
  double own_cta_bytes = 0;   // each CTA's own traffic (its tile in and out): adds to footprints
  // First touch of the accumulator: fraction that misses (it was just cleared by another
  // kernel, so it may still be in L2).
  double rmw_first_touch_miss = 1;
};

struct StreamedTraffic {
  double read_bytes = 0;
  double write_bytes = 0;
  double waves = 0;               // groups of resident CTAs
  double max_wave_footprint = 0;  // bytes, the largest of one wave
  double first_touch_bytes = 0;   // what a perfect cache would still read (each row once)
};

// DRAM traffic of the streamed operand under the picture above (waves in launch order; only the
// head a wave shares with the previous one can reuse its rows).
StreamedTraffic stream_through_l2(const StreamedOperand& operand, double l2_bytes);

}  // namespace roofline
