// The roofline chart as SVG, written by our own code.
//
// The SVG carries its geometry for tests and tools: each panel <g class="panel"> has
// data-x-min/-x-max (FLOP/byte), data-y-min/-y-max (FLOP/s) and data-plot-left/-top/-width/
// -height (pixels); x_px = left + width·(log10 x − log10 x_min)/(log10 x_max − log10 x_min),
// y_px = top + height·(log10 y_max − log10 y)/(log10 y_max − log10 y_min). Roofs are
// <line class="roof memory|compute">, ridge points <circle class="ridge">, points
// <g class="point" transform="translate(x,y)">, arrows <g class="arrow">, each with data-*
// attributes in SI units (data-ai FLOP/byte, data-flops FLOP/s, data-bandwidth bytes/s).
#pragma once

#include <span>
#include <string>
#include <vector>

#include "lib/core/chart/chart.hpp"
#include "lib/core/report/report.hpp"

namespace roofline {

// A log-log roofline (x: FLOP/byte, y: FLOP/s), one panel per spec: the memory slopes (DRAM,
// and L2/L1 where the spec has them), the compute ceilings of the paths the rows use, ridge
// points marked, one point per row with a verdict (one per memory level when measured), legend
// and axis units. With two reports, an arrow from each base point to the matching head point,
// labelled with the change in FLOP/s.
std::string render_svg(const std::vector<Report>& reports);
// Same, with options. Throws InputError when a kernel of `options` names no rows.
std::string render_svg(const std::vector<Report>& reports, const PlotOptions& options);
// Same, from reports judged already.
std::string render_svg(std::span<const JudgedReport> reports, const PlotOptions& options);

}  // namespace roofline
