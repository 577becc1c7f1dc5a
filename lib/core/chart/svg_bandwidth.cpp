#include "lib/core/chart/svg_bandwidth.hpp"

#include <algorithm>
#include <cmath>
#include <set>

#include "lib/core/base/text.hpp"
#include "lib/core/chart/chart_labels.hpp"
#include "lib/core/chart/svg_draw.hpp"
#include "lib/core/chart/svg_labels.hpp"

namespace roofline {
namespace {

constexpr double kLeft = 84;
constexpr double kTop = 70;  // below the panel's offset
constexpr double kWidth = 620;
constexpr double kHeight = 330;
constexpr double kLegendLeft = kLeft + kWidth + 28;
constexpr double kMarkerRadius = 6.5;  // marker_svg's shapes and their strokes

class BandwidthPanel {
 public:
  BandwidthPanel(const Chart& chart, const ChartPanel& panel, double offset_y, std::ostream& out)
      : chart_(chart), panel_(panel), offset_y_(offset_y), top_(offset_y + kTop), out_(out) {}

  double x(double bytes) const {
    return kLeft + kWidth * (std::log10(bytes) - panel_.bx0) / (panel_.bx1 - panel_.bx0);
  }
  double y(double rate) const {
    return top_ + kHeight * (panel_.by1 - std::log10(rate)) / (panel_.by1 - panel_.by0);
  }

  void draw() {
    std::set<std::pair<std::size_t, std::size_t>> rows;
    for (const BandwidthPoint& p : panel_.bandwidth_points) rows.insert({p.report, p.row});
    out_ << "<g class=\"bandwidth-panel\" data-spec=\"" << xml_escape(panel_.spec->key)
         << "\" data-launches=\"" << rows.size() << "\">\n";
    text(kLeft, offset_y_ + 26,
         "Bandwidth: " + std::to_string(rows.size()) +
             " launches without counted FLOPs, judged on bytes alone",
         15, "font-weight=\"bold\"");
    text(kLeft, offset_y_ + 46,
         "x: bytes moved at each level; y: those bytes ÷ the launch's time; dotted: equal time", 12,
         "fill=\"#555555\"");
    draw_axes();
    draw_roofs();
    draw_points();
    draw_legend();
    out_ << "</g>\n";
  }

 private:
  void text(double tx, double ty, const std::string& content, double size,
            const std::string& extra = "", Anchor anchor = Anchor::kStart) {
    out_ << svg_text(tx, ty, content, size, anchor, extra);
  }

  void line(double x1, double y1, double x2, double y2, const std::string& paint) {
    out_ << "<line x1=\"" << px(x1) << "\" y1=\"" << px(y1) << "\" x2=\"" << px(x2) << "\" y2=\""
         << px(y2) << "\"" << paint << "/>\n";
  }

  void draw_axes() {
    const double bottom = top_ + kHeight;
    out_ << "<g class=\"axes\" font-size=\"12\" fill=\"#222222\">\n";
    for (int e = static_cast<int>(panel_.bx0); e <= static_cast<int>(panel_.bx1); ++e) {
      const double gx = x(std::pow(10.0, e));
      line(gx, top_, gx, bottom, " stroke=\"#e2e2e2\"");
      text(gx, bottom + 18, decade_text(e - 6), 12, "", Anchor::kMiddle);  // MB
    }
    for (int e = static_cast<int>(panel_.by0); e <= static_cast<int>(panel_.by1); ++e) {
      const double gy = y(std::pow(10.0, e));
      line(kLeft, gy, kLeft + kWidth, gy, " stroke=\"#e2e2e2\"");
      text(kLeft - 8, gy + 4, decade_text(e - 9), 12, "", Anchor::kEnd);  // GB/s
    }
    out_ << "<rect x=\"" << px(kLeft) << "\" y=\"" << px(top_) << "\" width=\"" << px(kWidth)
         << "\" height=\"" << px(kHeight) << "\" fill=\"none\" stroke=\"#444444\"/>\n";
    text(kLeft + kWidth / 2, bottom + 40, "bytes moved (MB)", 13, "", Anchor::kMiddle);
    const double ty = top_ + kHeight / 2;
    text(kLeft - 58, ty, "bandwidth (GB/s)", 13,
         "transform=\"rotate(-90 " + px(kLeft - 58) + " " + px(ty) + ")\"", Anchor::kMiddle);
    out_ << "</g>\n";
  }

  void draw_roofs() {
    out_ << "<g class=\"roofs\" font-size=\"11\">\n";
    // The roofs' labels first, then each line of equal time's where no label is yet: at the
    // line's upper end, else further down the line, else none (the line alone still says it).
    LabelPlacer labels(Box{kLeft, top_, kLeft + kWidth, top_ + kHeight});
    for (const MemoryRoof& roof : panel_.memory) {
      const double gy = y(roof.bandwidth_bytes_per_second);
      out_ << "<line class=\"roof memory\" data-level=\"" << to_string(roof.level) << "\" x1=\""
           << px(kLeft) << "\" y1=\"" << px(gy) << "\" x2=\"" << px(kLeft + kWidth) << "\" y2=\""
           << px(gy) << "\"" << memory_stroke(roof) << "/>\n";
      const std::string label = std::string(display_name(roof.level)) + " " +
                                bandwidth_text(roof.bandwidth_bytes_per_second) +
                                (roof.twin.empty() ? "" : " (" + roof.twin + ")");
      text(kLeft + kWidth - 4, gy - 4, label, 11, "fill=\"#333333\"", Anchor::kEnd);
      labels.take(text_box(kLeft + kWidth - 4, gy - 4, label, 11, Anchor::kEnd));
    }
    // The markers (drawn later, over the lines) are taken too: a label under one is unread.
    for (const BandwidthPoint& p : panel_.bandwidth_points) {
      const double mx = x(p.bytes), my = y(p.bytes_per_second);
      labels.take(
          Box{mx - kMarkerRadius, my - kMarkerRadius, mx + kMarkerRadius, my + kMarkerRadius});
    }
    // Lines of equal time: y = bytes / t, one per decade of t that crosses the plot.
    for (int e = -7; e <= 1; ++e) {
      const double t = std::pow(10.0, e);
      const double b0 = std::pow(10.0, panel_.bx0), b1 = std::pow(10.0, panel_.bx1);
      const double r0 = std::pow(10.0, panel_.by0), r1 = std::pow(10.0, panel_.by1);
      // Clip the segment of bytes = rate · t to the plot.
      const double lo = std::max(b0, r0 * t), hi = std::min(b1, r1 * t);
      if (!(lo < hi)) continue;
      line(x(lo), y(lo / t), x(hi), y(hi / t),
           " class=\"iso-time\" stroke=\"#b0b0b0\" stroke-dasharray=\"1 3\"");
      const std::string label = t < 1e-6   ? number_text(t * 1e9, 3) + " ns"
                                : t < 1e-3 ? number_text(t * 1e6, 3) + " µs"
                                : t < 1    ? number_text(t * 1e3, 3) + " ms"
                                           : number_text(t, 3) + " s";
      // Candidates from the upper end down the line, a tenth of the segment (in log) apart.
      for (int step = 0; step <= 5; ++step) {
        const double at = std::pow(10.0, std::log10(hi) - 0.1 * step * std::log10(hi / lo));
        const Box box = text_box(x(at) - 4, y(at / t) + 12, label, 10, Anchor::kEnd);
        if (box.x0 < kLeft || box.y1 > top_ + kHeight || !labels.is_free(box)) continue;
        text(x(at) - 4, y(at / t) + 12, label, 10, "fill=\"#8a8a8a\"", Anchor::kEnd);
        labels.take(box);
        break;
      }
    }
    out_ << "</g>\n";
  }

  void draw_points() {
    out_ << "<g class=\"points\">\n";
    for (const BandwidthPoint& p : panel_.bandwidth_points) {
      const char* colour = kernel_colour(p.kernel);
      out_ << "<g class=\"point\" data-report=\"" << p.report << "\" data-row=\"" << p.row
           << "\" data-kernel=\"" << xml_escape(p.kernel_name) << "\" data-level=\""
           << to_string(p.level) << "\" data-bytes=\"" << si(p.bytes) << "\" data-bytes-per-s=\""
           << si(p.bytes_per_second) << "\" transform=\"translate(" << px(x(p.bytes)) << ","
           << px(y(p.bytes_per_second)) << ")\"><title>"
           << xml_escape(p.kernel_name + " " + p.row_text + ": " +
                         std::string(display_name(p.level)) + " " + number_text(p.bytes / 1e6, 4) +
                         " MB at " + bandwidth_text(p.bytes_per_second) + "; " + p.regime)
           << "</title>" << marker_svg(p.level, colour, colour) << "</g>\n";
    }
    out_ << "</g>\n";
  }

  void draw_legend() {
    double ly = top_ + 4;
    out_ << "<g class=\"legend\" font-size=\"11.5\" fill=\"#1f1f1f\">\n";
    text(kLegendLeft, ly + 4, "Kernels", 12, "font-weight=\"bold\"");
    ly += 22;
    std::vector<std::size_t> kernels;
    std::set<MemoryLevel> levels;
    for (const BandwidthPoint& p : panel_.bandwidth_points) {
      if (std::find(kernels.begin(), kernels.end(), p.kernel) == kernels.end())
        kernels.push_back(p.kernel);
      levels.insert(p.level);
    }
    std::sort(kernels.begin(), kernels.end());
    // As many kernels as the plot's height holds, full names wrapped; the rest are counted.
    constexpr std::size_t kLegendChars = 40;
    const double last = top_ + kHeight - 3 * 18 - 24;  // room left for the levels' entries
    std::size_t more = 0;
    for (std::size_t i = 0; i < kernels.size(); ++i) {
      const std::vector<std::string> lines = wrap_text(chart_.kernels[kernels[i]], kLegendChars);
      if (ly + 15.0 * static_cast<double>(lines.size()) > last) {
        more = kernels.size() - i;
        break;
      }
      out_ << "<circle cx=\"" << px(kLegendLeft + 13) << "\" cy=\"" << px(ly)
           << "\" r=\"5\" fill=\"" << kernel_colour(kernels[i]) << "\"/>\n";
      for (const std::string& line : lines) {
        text(kLegendLeft + 34, ly + 4, line, 11.5);
        ly += 15;
      }
      ly += 3;
    }
    if (more > 0) {
      text(kLegendLeft + 34, ly + 4, "and " + std::to_string(more) + " more kernels", 11.5,
           "fill=\"#555555\"");
      ly += 18;
    }
    ly += 6;
    for (MemoryLevel level : kAllMemoryLevels) {
      if (levels.count(level) == 0) continue;
      out_ << "<g transform=\"translate(" << px(kLegendLeft + 13) << "," << px(ly) << ")\">"
           << marker_svg(level, "#555555", "#555555") << "</g>\n";
      text(kLegendLeft + 34, ly + 4, std::string(display_name(level)) + " bytes", 11.5);
      ly += 18;
    }
    out_ << "</g>\n";
  }

  const Chart& chart_;
  const ChartPanel& panel_;
  double offset_y_;
  double top_;
  std::ostream& out_;
};

}  // namespace

void draw_bandwidth_panel(const Chart& chart, const ChartPanel& panel, double offset_y,
                          std::ostream& out) {
  BandwidthPanel(chart, panel, offset_y, out).draw();
}

}  // namespace roofline
