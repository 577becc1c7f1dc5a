// One roofline panel of the SVG chart (svg_chart.hpp): its plot, roofs, points, arrows and legend,
// drawn into the chart's stream. The chart's layout constants are here too, shared with
// render_svg, which stacks the panels. Internal to lib/core/chart.
#pragma once

#include <cmath>
#include <cstddef>
#include <sstream>
#include <string>
#include <vector>

#include "lib/core/chart/chart.hpp"
#include "lib/core/chart/svg_draw.hpp"
#include "lib/core/chart/svg_labels.hpp"

namespace roofline::svg {

inline constexpr double kSvgWidth = 1040;
inline constexpr double kPanelHeight = 600;      // a roofline panel, unless its legend needs more
inline constexpr double kMaxPanelHeight = 1200;  // the most a legend may stretch it to
inline constexpr double kPlotLeft = 84;
inline constexpr double kPlotTop = 76;
inline constexpr double kPlotWidth = 620;
inline constexpr double kPlotHeight = 450;
inline constexpr double kLegendLeft = kPlotLeft + kPlotWidth + 28;
inline constexpr double kFaded = 0.4;
inline constexpr double kArrowLabelMin = 0.01;  // smaller changes get an arrow but no label
inline constexpr int kMaxTicks = 12;            // labelled decades per axis, at most (plus one)
inline constexpr std::size_t kMaxPointLabels = 400;  // sequence-length labels per panel, at most
inline constexpr std::size_t kShareKeys = 5;  // the largest shares of time, numbered and keyed
inline constexpr std::size_t kSubtitleChars = 140;  // a line of the notes above the plot, at most
inline constexpr std::size_t kLegendChars = 40;  // a legend line's text, at most, before it wraps

class Panel {
 public:
  // `height`: the panel's, which its legend fits within (legend_height() says how much it needs).
  Panel(const Chart& chart, const ChartPanel& panel, double offset_y, double height,
        std::ostringstream& out)
      : chart_(chart),
        panel_(panel),
        offset_y_(offset_y),
        height_(height),
        top_(offset_y + kPlotTop),
        out_(out),
        placer_({kPlotLeft + 2, top_ + 2, kPlotLeft + kPlotWidth - 2, top_ + kPlotHeight - 2}) {}

  double x(double ai) const {
    return kPlotLeft + kPlotWidth * (std::log10(ai) - panel_.lx0) / (panel_.lx1 - panel_.lx0);
  }
  double y(double flops) const {
    return top_ + kPlotHeight * (panel_.ly1 - std::log10(flops)) / (panel_.ly1 - panel_.ly0);
  }

  void draw();

  // The height the panel needs for its legend (at least kPanelHeight, at most its own height):
  // the legend drawn into this panel's stream, which the caller throws away.
  double legend_height();

  void prepare();

 private:
  void text(double tx, double ty, const std::string& content, double size, Anchor anchor,
            const std::string& extra = "");

  void draw_grid_and_axes();

  void reserve_markers();
  // A tail-bound row's DRAM point whose tail roof lies inside the plot: drawn as a tick.
  bool tail_tick(const ChartPoint& p) const;

  double top_roof() const;

  void draw_roofs();

  // Sequence-length labels only on panels with few enough points to read them; every point is
  // drawn either way.
  std::size_t labelled_point_count() const;

  bool faded(const ChartPoint& p) const;

  void draw_arrows();

  // The rows with the largest shares of the newest report's time (DRAM points, one per row),
  // numbered on the chart and named in the legend; and how many timed rows each report has.
  void choose_share_keys();

  // Marker area in proportion to the row's share of the time (Intel Advisor's convention): the
  // average row of its report keeps the plain size.
  double marker_scale(const ChartPoint& p) const;

  void marker_shape(MemoryLevel level, const std::string& fill, const std::string& stroke);

  void draw_points();

  void draw_legend();

  const Chart& chart_;
  const ChartPanel& panel_;
  double offset_y_;  // of the panel within the SVG
  double height_;    // of the panel
  double legend_bottom_ = 0;
  double top_;  // of the plot area
  std::ostringstream& out_;
  LabelPlacer placer_;
  bool label_points_ = true;             // sequence-length labels beside the points
  std::vector<std::size_t> timed_rows_;  // per report: its rows with a measured time here
  std::vector<std::size_t> share_keys_;  // points numbered by share of time, largest first
};

}  // namespace roofline::svg
