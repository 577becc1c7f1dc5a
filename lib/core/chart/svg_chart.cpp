#include "lib/core/chart/svg_chart.hpp"

#include <sstream>

#include "lib/core/chart/svg_bandwidth.hpp"
#include "lib/core/chart/svg_panel.hpp"

namespace roofline {

std::string render_svg(const std::vector<Report>& reports) {
  return render_svg(reports, {});
}

std::string render_svg(const std::vector<Report>& reports, const PlotOptions& options) {
  std::vector<JudgedReport> judged;
  for (const Report& report : reports) judged.emplace_back(report);
  return render_svg(judged, options);
}

std::string render_svg(std::span<const JudgedReport> reports, const PlotOptions& options) {
  const Chart chart = build_chart(reports, options);
  // Each panel's roofline, and below it the bandwidth chart of its rows without FLOPs.
  // A panel is taller than kPanelHeight when its legend needs it (many roofs, kernels or
  // shares), up to kMaxPanelHeight, where the legend's list of kernels stops and counts the rest.
  std::vector<double> offsets, heights;
  double height = 0;
  for (const ChartPanel& panel : chart.panels) {
    std::ostringstream scratch;
    heights.push_back(svg::Panel(chart, panel, 0, svg::kMaxPanelHeight, scratch).legend_height());
    offsets.push_back(height);
    height += heights.back() + (panel.bandwidth_points.empty() ? 0 : kBandwidthPanelHeight);
  }
  if (chart.panels.empty()) height = svg::kPanelHeight;
  std::ostringstream out;
  out << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << svg::kSvgWidth << "\" height=\""
      << height << "\" viewBox=\"0 0 " << svg::kSvgWidth << " " << height
      << "\" font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\" data-panels=\""
      << chart.panels.size() << "\">\n"
      << "<title>cuflash-roofline roofline chart</title>\n"
      << "<defs><marker id=\"arrowhead\" viewBox=\"0 0 10 10\" refX=\"8\" refY=\"5\" "
         "markerWidth=\"5\" markerHeight=\"5\" orient=\"auto\"><path d=\"M0,0 L10,5 L0,10 Z\" "
         "fill=\"#4a4a4a\"/></marker></defs>\n"
      << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  if (chart.panels.empty())
    out << "<text x=\"" << svg::kSvgWidth / 2 << "\" y=\"" << svg::kPanelHeight / 2
        << "\" text-anchor=\"middle\" font-size=\"16\">no rows to plot</text>\n";
  for (std::size_t i = 0; i < chart.panels.size(); ++i) {
    svg::Panel(chart, chart.panels[i], offsets[i], heights[i], out).draw();
    if (!chart.panels[i].bandwidth_points.empty())
      draw_bandwidth_panel(chart, chart.panels[i], offsets[i] + heights[i], out);
  }
  out << "</svg>\n";
  return out.str();
}

}  // namespace roofline
