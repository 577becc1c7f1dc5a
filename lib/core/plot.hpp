// Roofline charts: SVG written by our own code, and a Unicode chart for the terminal.
#pragma once

#include <string>
#include <vector>

#include "lib/core/report.hpp"

namespace roofline {

// A log-log roofline (x: FLOP/byte, y: FLOP/s) of the first report's specs: the memory slopes
// (DRAM, and L2/L1 where the spec has them), the compute ceilings of the paths the rows use,
// ridge points marked, one point per row with a verdict (one per memory level when measured),
// legend and axis units. With two reports, an arrow from each base point to the matching head
// point, labelled with the change in FLOP/s.
std::string render_svg(const std::vector<Report>& reports);

// The same chart drawn with characters, `width` × `height` cells for the plot area.
std::string render_ascii_plot(const Report& report, int width, int height);

}  // namespace roofline
