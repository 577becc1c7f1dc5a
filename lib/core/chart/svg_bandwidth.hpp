// The bandwidth chart of a roofline panel: the rows judged on bytes alone (profiled launches
// without counted FLOPs), which a roofline cannot place. Log-log: x is the bytes a launch moved
// at a memory level, y the rate it moved them at (bytes ÷ the launch's time); each level's peak
// bandwidth is a horizontal roof, and dotted diagonals are lines of equal time.
#pragma once

#include <ostream>

#include "lib/core/chart/chart.hpp"

namespace roofline {

inline constexpr double kBandwidthPanelHeight = 470;

// Draws `panel`'s bandwidth chart (it has bandwidth_points) at `offset_y` of the SVG.
void draw_bandwidth_panel(const Chart& chart, const ChartPanel& panel, double offset_y,
                          std::ostream& out);

}  // namespace roofline
