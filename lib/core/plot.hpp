// Roofline charts: SVG written by our own code, and a Unicode chart for the terminal.
//
// Both are log-log: x is arithmetic intensity in FLOP/byte, y is performance in FLOP/s (labelled
// in TFLOP/s). Axis ranges are whole decades covering every point, every ridge point and every
// ceiling. One panel per GPU spec the rows are judged against.
//
// The SVG carries its geometry for tests and tools: each panel <g class="panel"> has
// data-x-min/-x-max (FLOP/byte), data-y-min/-y-max (FLOP/s) and data-plot-left/-top/-width/
// -height (pixels); x_px = left + width·(log10 x − log10 x_min)/(log10 x_max − log10 x_min),
// y_px = top + height·(log10 y_max − log10 y)/(log10 y_max − log10 y_min). Roofs are
// <line class="roof memory|compute">, ridge points <circle class="ridge">, points
// <g class="point" transform="translate(x,y)">, arrows <g class="arrow">, each with data-*
// attributes in SI units (data-ai FLOP/byte, data-flops FLOP/s, data-bandwidth bytes/s).
#pragma once

#include <string>
#include <vector>

#include "lib/core/report.hpp"

namespace roofline {

struct PlotOptions {
  // Arrows between two kernels of each report (base kernel → head kernel, matched by workload
  // and spec), instead of between consecutive reports. Both empty: arrows between reports.
  std::string kernel_base;
  std::string kernel_head;
  // One name per report for the legend (file names); empty: "base"/"head" for two reports,
  // "report 1", ... otherwise.
  std::vector<std::string> report_labels;
};

// A log-log roofline (x: FLOP/byte, y: FLOP/s) of the first report's specs: the memory slopes
// (DRAM, and L2/L1 where the spec has them), the compute ceilings of the paths the rows use,
// ridge points marked, one point per row with a verdict (one per memory level when measured),
// legend and axis units. With two reports, an arrow from each base point to the matching head
// point, labelled with the change in FLOP/s.
std::string render_svg(const std::vector<Report>& reports);
// Same, with options. Throws InputError when a kernel of `options` names no rows.
std::string render_svg(const std::vector<Report>& reports, const PlotOptions& options);

// The same chart drawn with characters, `width` × `height` cells for the plot area.
std::string render_ascii_plot(const Report& report, int width, int height);

}  // namespace roofline
