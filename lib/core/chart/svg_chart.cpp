#include "lib/core/chart/svg_chart.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <optional>
#include <set>
#include <sstream>

#include "lib/core/base/text.hpp"
#include "lib/core/chart/chart_labels.hpp"
#include "lib/core/chart/svg_bandwidth.hpp"
#include "lib/core/chart/svg_draw.hpp"
#include "lib/core/chart/svg_labels.hpp"

namespace roofline {
namespace {

constexpr double kSvgWidth = 1040;
constexpr double kPanelHeight = 600;      // a roofline panel, unless its legend needs more
constexpr double kMaxPanelHeight = 1200;  // the most a legend may stretch it to
constexpr double kPlotLeft = 84;
constexpr double kPlotTop = 76;
constexpr double kPlotWidth = 620;
constexpr double kPlotHeight = 450;
constexpr double kLegendLeft = kPlotLeft + kPlotWidth + 28;
constexpr double kFaded = 0.4;
constexpr double kArrowLabelMin = 0.01;       // smaller changes get an arrow but no label
constexpr int kMaxTicks = 12;                 // labelled decades per axis, at most (plus one)
constexpr std::size_t kMaxPointLabels = 400;  // sequence-length labels per panel, at most
constexpr std::size_t kShareKeys = 5;         // the largest shares of time, numbered and keyed
constexpr std::size_t kSubtitleChars = 140;   // a line of the notes above the plot, at most
constexpr std::size_t kLegendChars = 40;      // a legend line's text, at most, before it wraps

class SvgPanel {
 public:
  // `height`: the panel's, which its legend fits within (legend_height() says how much it needs).
  SvgPanel(const Chart& chart, const ChartPanel& panel, double offset_y, double height,
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

  void draw() {
    const GpuSpec& spec = *panel_.spec;
    // Panel ids stay unique when one spec has a panel per device (merged reports).
    const std::size_t index = static_cast<std::size_t>(&panel_ - chart_.panels.data());
    out_ << "<g class=\"panel\" id=\"panel-" << xml_escape(spec.key)
         << (panel_.device.empty() ? std::string() : "-" + std::to_string(index + 1))
         << "\" data-spec=\"" << xml_escape(spec.key) << "\"";
    if (!panel_.device.empty()) out_ << " data-device=\"" << xml_escape(panel_.device) << "\"";
    out_ << " data-x-min=\"" << si(std::pow(10.0, panel_.lx0)) << "\" data-x-max=\""
         << si(std::pow(10.0, panel_.lx1)) << "\" data-y-min=\"" << si(std::pow(10.0, panel_.ly0))
         << "\" data-y-max=\"" << si(std::pow(10.0, panel_.ly1)) << "\" data-plot-left=\""
         << px(kPlotLeft) << "\" data-plot-top=\"" << px(top_) << "\" data-plot-width=\""
         << px(kPlotWidth) << "\" data-plot-height=\"" << px(kPlotHeight) << "\">\n";
    out_ << "<text class=\"title\" x=\"" << px(kPlotLeft) << "\" y=\"" << px(offset_y_ + 30)
         << "\" font-size=\"17\" font-weight=\"bold\">Roofline: " << xml_escape(spec.name) << " ["
         << xml_escape(spec.key) << "]"
         << (panel_.device.empty() ? "" : ", measured on " + xml_escape(panel_.device))
         << "</text>\n";
    // The notes in at most two lines above the plot (the whole text in the tooltip).
    const std::string notes = join(panel_.notes, "; ");
    std::vector<std::string> lines = wrap_text(notes, kSubtitleChars);
    if (lines.size() > 2) {
      lines.resize(2);
      lines[1] += " …";
    }
    for (std::size_t i = 0; i < lines.size(); ++i)
      out_ << "<text class=\"subtitle\" x=\"" << px(kPlotLeft) << "\" y=\""
           << px(offset_y_ + 50 + 14 * static_cast<double>(i))
           << "\" font-size=\"12\" fill=\"#555555\"><title>" << xml_escape(notes) << "</title>"
           << xml_escape(lines[i]) << "</text>\n";
    prepare();
    draw_grid_and_axes();
    reserve_markers();
    draw_roofs();
    draw_arrows();
    draw_points();
    draw_legend();
    out_ << "</g>\n";
  }

  // The height the panel needs for its legend (at least kPanelHeight, at most its own height):
  // the legend drawn into this panel's stream, which the caller throws away.
  double legend_height() {
    prepare();
    draw_legend();
    return std::clamp(legend_bottom_ - offset_y_ + 12, kPanelHeight, height_);
  }

  void prepare() {
    label_points_ = labelled_point_count() <= kMaxPointLabels;
    choose_share_keys();
  }

 private:
  void text(double tx, double ty, const std::string& content, double size, Anchor anchor,
            const std::string& extra = "") {
    out_ << svg_text(tx, ty, content, size, anchor, extra);
  }

  void draw_grid_and_axes() {
    const double left = kPlotLeft, right = kPlotLeft + kPlotWidth;
    const double top = top_, bottom = top_ + kPlotHeight;
    // Ticks every `step` decades (1 on ordinary charts); minor lines (2..9) only when step is 1.
    const int x0 = static_cast<int>(panel_.lx0), x1 = static_cast<int>(panel_.lx1);
    const int y0 = static_cast<int>(panel_.ly0), y1 = static_cast<int>(panel_.ly1);
    const int x_step = decade_step(panel_.lx0, panel_.lx1, kMaxTicks);
    const int y_step = decade_step(panel_.ly0, panel_.ly1, kMaxTicks);
    out_ << "<g class=\"grid\" stroke-width=\"1\">\n";
    if (x_step == 1)
      for (int e = x0; e < x1; ++e)
        for (int m = 2; m <= 9; ++m) {
          const double gx = x(m * std::pow(10.0, e));
          out_ << "<line x1=\"" << px(gx) << "\" y1=\"" << px(top) << "\" x2=\"" << px(gx)
               << "\" y2=\"" << px(bottom) << "\" stroke=\"#f0f0f0\"/>\n";
        }
    if (y_step == 1)
      for (int e = y0; e < y1; ++e)
        for (int m = 2; m <= 9; ++m) {
          const double gy = y(m * std::pow(10.0, e));
          out_ << "<line x1=\"" << px(left) << "\" y1=\"" << px(gy) << "\" x2=\"" << px(right)
               << "\" y2=\"" << px(gy) << "\" stroke=\"#f0f0f0\"/>\n";
        }
    for (int e = x0; e <= x1; e += x_step) {
      const double gx = x(std::pow(10.0, e));
      out_ << "<line x1=\"" << px(gx) << "\" y1=\"" << px(top) << "\" x2=\"" << px(gx) << "\" y2=\""
           << px(bottom) << "\" stroke=\"#d6d6d6\"/>\n";
    }
    for (int e = y0; e <= y1; e += y_step) {
      const double gy = y(std::pow(10.0, e));
      out_ << "<line x1=\"" << px(left) << "\" y1=\"" << px(gy) << "\" x2=\"" << px(right)
           << "\" y2=\"" << px(gy) << "\" stroke=\"#d6d6d6\"/>\n";
    }
    out_ << "</g>\n<g class=\"axes\" font-size=\"12\" fill=\"#222222\">\n";
    out_ << "<rect x=\"" << px(left) << "\" y=\"" << px(top) << "\" width=\"" << px(kPlotWidth)
         << "\" height=\"" << px(kPlotHeight) << "\" fill=\"none\" stroke=\"#444444\"/>\n";
    for (int e = x0; e <= x1; e += x_step) {
      const double gx = x(std::pow(10.0, e));
      out_ << "<line x1=\"" << px(gx) << "\" y1=\"" << px(bottom) << "\" x2=\"" << px(gx)
           << "\" y2=\"" << px(bottom + 5) << "\" stroke=\"#444444\"/>\n";
      out_ << "<text class=\"tick x\" data-value=\"" << si(std::pow(10.0, e)) << "\" x=\"" << px(gx)
           << "\" y=\"" << px(bottom + 19) << "\" text-anchor=\"middle\">" << decade_text(e)
           << "</text>\n";
    }
    for (int e = y0; e <= y1; e += y_step) {
      const double gy = y(std::pow(10.0, e));
      out_ << "<line x1=\"" << px(left - 5) << "\" y1=\"" << px(gy) << "\" x2=\"" << px(left)
           << "\" y2=\"" << px(gy) << "\" stroke=\"#444444\"/>\n";
      out_ << "<text class=\"tick y\" data-value=\"" << si(std::pow(10.0, e)) << "\" x=\""
           << px(left - 8) << "\" y=\"" << px(gy + 4) << "\" text-anchor=\"end\">"
           << decade_text(e - 12) << "</text>\n";
    }
    out_ << "<text class=\"axis-title\" x=\"" << px(left + kPlotWidth / 2) << "\" y=\""
         << px(bottom + 42) << "\" text-anchor=\"middle\" font-size=\"13\">"
         << "arithmetic intensity (FLOP/byte)</text>\n";
    const double ty = top + kPlotHeight / 2;
    out_ << "<text class=\"axis-title\" x=\"" << px(left - 58) << "\" y=\"" << px(ty)
         << "\" text-anchor=\"middle\" font-size=\"13\" transform=\"rotate(-90 " << px(left - 58)
         << " " << px(ty) << ")\">performance (TFLOP/s)</text>\n";
    out_ << "</g>\n";
  }

  void reserve_markers() {
    for (const ChartPoint& p : panel_.points)
      placer_.take({x(p.ai) - 7, y(p.flops) - 7, x(p.ai) + 7, y(p.flops) + 7});
  }

  double top_roof() const {
    double top = 0;
    for (const ComputeRoof& roof : panel_.compute) top = std::max(top, roof.peak_flops_per_second);
    return top;
  }

  void draw_roofs() {
    const double x_min = std::pow(10.0, panel_.lx0), x_max = std::pow(10.0, panel_.lx1);
    const double y_min = std::pow(10.0, panel_.ly0), y_max = std::pow(10.0, panel_.ly1);
    const double top = top_roof() > 0 ? top_roof() : y_max;
    const double fastest =
        panel_.memory.empty() ? 0 : panel_.memory.back().bandwidth_bytes_per_second;
    out_ << "<g class=\"roofs\" fill=\"none\">\n";
    // Memory slopes, from the bottom or left edge up to the highest compute roof.
    struct SlopeLabel {
      double x0, y0, x1, y1;
      std::string text;
    };
    std::vector<SlopeLabel> slope_labels;
    for (const MemoryRoof& roof : panel_.memory) {
      const double bw = roof.bandwidth_bytes_per_second;
      const double start = std::max(x_min, y_min / bw);
      const double end = std::min(x_max, top / bw);
      if (!(start < end)) continue;
      const bool twin = !roof.twin.empty();
      out_ << "<line class=\"roof memory\" data-level=\"" << to_string(roof.level)
           << "\" data-role=\"" << (twin ? "context" : "judged") << "\" data-bandwidth=\"" << si(bw)
           << "\" x1=\"" << px(x(start)) << "\" y1=\"" << px(y(start * bw)) << "\" x2=\""
           << px(x(end)) << "\" y2=\"" << px(y(end * bw)) << "\"" << memory_stroke(roof) << "/>\n";
      slope_labels.push_back({x(start), y(start * bw), x(end), y(end * bw),
                              std::string(display_name(roof.level)) + " " + bandwidth_text(bw) +
                                  (twin ? " (" + roof.twin + ")" : "")});
    }
    // Compute roofs, from where they meet the fastest memory slope to the right edge.
    struct RoofLabel {
      double y;
      std::string text;
      bool judged;
    };
    std::vector<RoofLabel> roof_labels;
    for (std::size_t roof_index = 0; roof_index < panel_.compute.size(); ++roof_index) {
      const ComputeRoof& roof = panel_.compute[roof_index];
      const double peak = roof.peak_flops_per_second;
      const double start = fastest > 0 ? std::max(x_min, peak / fastest) : x_min;
      out_ << "<line class=\"roof compute\" data-ceiling=\"" << xml_escape(roof.id)
           << "\" data-role=\"" << (roof.judged ? "judged" : "context") << "\" data-peak=\""
           << si(peak) << "\" x1=\"" << px(x(start)) << "\" y1=\"" << px(y(peak)) << "\" x2=\""
           << px(x(x_max)) << "\" y2=\"" << px(y(peak)) << "\""
           << compute_stroke(roof_index, roof.judged) << "/>\n";
      roof_labels.push_back({y(peak), roof.label + "  " + peak_text(peak), roof.judged});
      placer_.take({x(start), y(peak) - 1.5, x(x_max), y(peak) + 1.5});
    }
    // Labels keep off the slopes too.
    for (const SlopeLabel& slope : slope_labels) {
      const double length = std::hypot(slope.x1 - slope.x0, slope.y1 - slope.y0);
      for (double along = 0; along <= length; along += 4) {
        const double t = along / length;
        const double sx = slope.x0 + t * (slope.x1 - slope.x0);
        const double sy = slope.y0 + t * (slope.y1 - slope.y0);
        placer_.take({sx - 1.5, sy - 1.5, sx + 1.5, sy + 1.5});
      }
    }
    // Ridge points, and a drop line from the DRAM ridge of each judged roof to the axis.
    for (const RidgeMark& ridge : panel_.ridges) {
      const MemoryRoof& memory = panel_.memory[ridge.memory];
      const bool dram = memory.level == MemoryLevel::kDram;
      const double rx = x(ridge.ai), ry = y(ridge.flops);
      if (dram)
        out_ << "<line class=\"ridge-drop\" x1=\"" << px(rx) << "\" y1=\"" << px(ry) << "\" x2=\""
             << px(rx) << "\" y2=\"" << px(top_ + kPlotHeight)
             << "\" stroke=\"#9a9a9a\" stroke-width=\"1\" stroke-dasharray=\"3 3\"/>\n";
      out_ << "<circle class=\"ridge\" data-ceiling=\""
           << xml_escape(panel_.compute[ridge.compute].id) << "\" data-level=\""
           << to_string(memory.level) << "\" data-ai=\"" << si(ridge.ai) << "\" data-flops=\""
           << si(ridge.flops) << "\" cx=\"" << px(rx) << "\" cy=\"" << px(ry)
           << "\" r=\"4\" fill=\"white\" stroke=\"#1f1f1f\" stroke-width=\"1.6\"><title>ridge: "
           << xml_escape(panel_.compute[ridge.compute].label) << " meets "
           << display_name(memory.level) << " at " << number_text(ridge.ai, 3)
           << " FLOP/byte</title></circle>\n";
      placer_.take({rx - 5, ry - 5, rx + 5, ry + 5});
    }
    out_ << "</g>\n<g class=\"roof-labels\" font-size=\"11.5\" fill=\"#1f1f1f\">\n";
    for (const RidgeMark& ridge : panel_.ridges) {
      if (panel_.memory[ridge.memory].level != MemoryLevel::kDram) continue;
      const std::string label = "ridge " + number_text(ridge.ai, 3) + " FLOP/B";
      const double rx = x(ridge.ai);
      bool placed = false;
      for (double base : {top_ + kPlotHeight - 6, top_ + kPlotHeight - 20, top_ + kPlotHeight - 34})
        for (const auto& [dx, anchor] :
             {std::pair{4.0, Anchor::kStart}, std::pair{-4.0, Anchor::kEnd}}) {
          const Box box = text_box(rx + dx, base, label, 10.5, anchor);
          if (placed || !placer_.is_free(box)) continue;
          placer_.take(box);
          text(rx + dx, base, label, 10.5, anchor, "class=\"ridge-label\" fill=\"#666666\"");
          placed = true;
        }
    }
    // Roof labels at the right end, all on one side of their lines: above, unless the highest
    // roof is the top edge of the plot; then below.
    const double right = kPlotLeft + kPlotWidth - 6;
    bool above = true;
    for (const RoofLabel& label : roof_labels)
      if (label.y - 5 - 12 < top_) above = false;
    const std::vector<double> offsets = above ? std::vector<double>{-5.0, 14.0, -17.0, 26.0}
                                              : std::vector<double>{14.0, -5.0, 26.0, -17.0};
    for (const RoofLabel& label : roof_labels) {
      std::optional<Box> chosen;
      double chosen_y = 0;
      for (double dy : offsets) {
        for (double shift : {0.0, 120.0, 240.0}) {
          const Box box = text_box(right - shift, label.y + dy, label.text, 11.5, Anchor::kEnd);
          if (placer_.is_free(box)) {
            chosen = box;
            chosen_y = label.y + dy;
            text(right - shift, chosen_y, label.text, 11.5, Anchor::kEnd,
                 std::string("class=\"roof-label\"") + (label.judged ? "" : " fill=\"#6a6a6a\""));
            break;
          }
        }
        if (chosen) break;
      }
      if (chosen)
        placer_.take(*chosen);
      else
        text(right, label.y - 5, label.text, 11.5, Anchor::kEnd, "class=\"roof-label\"");
    }
    // Slope labels, rotated along the line, above it (else below) near its lower end, at the
    // first place where they collide with nothing.
    for (const SlopeLabel& label : slope_labels) {
      const double angle = std::atan2(label.y1 - label.y0, label.x1 - label.x0);
      const double length = std::hypot(label.x1 - label.x0, label.y1 - label.y0);
      const double w = text_width(label.text, 11.5);
      if (length < w + 20) continue;
      const double cx = std::cos(angle), cy = std::sin(angle);
      struct Spot {
        double x, y, baseline;
        std::vector<Box> boxes;
      };
      std::optional<Spot> spot;
      for (double baseline : {-5.0, 14.0}) {
        for (double t = 0.06; !spot && t <= 0.9 && t * length + w + 10 <= length; t += 0.06) {
          const double lx = label.x0 + t * (label.x1 - label.x0);
          const double ly = label.y0 + t * (label.y1 - label.y0);
          // The rotated text as small boxes along its baseline (centre 5 px from it).
          const double offset = baseline - 5;
          std::vector<Box> boxes;
          for (double along = 0; along < w; along += 8) {
            const double bx = lx + (along + 4) * cx - offset * cy;
            const double by = ly + (along + 4) * cy + offset * cx;
            boxes.push_back({bx - 5, by - 6, bx + 5, by + 6});
          }
          if (std::all_of(boxes.begin(), boxes.end(),
                          [&](const Box& box) { return placer_.is_free(box); }))
            spot = Spot{lx, ly, baseline, std::move(boxes)};
        }
        if (spot) break;
      }
      if (!spot) {
        // Crowded line: level text beside where the line enters the plot, else only the legend.
        for (const auto& [dx, dy] :
             {std::pair{8.0, 16.0}, std::pair{10.0, 4.0}, std::pair{8.0, -8.0}}) {
          const Box box = text_box(label.x0 + dx, label.y0 + dy, label.text, 11.5, Anchor::kStart);
          if (!placer_.is_free(box)) continue;
          placer_.take(box);
          text(label.x0 + dx, label.y0 + dy, label.text, 11.5, Anchor::kStart,
               "class=\"slope-label\"");
          break;
        }
        continue;
      }
      for (const Box& box : spot->boxes) placer_.take(box);
      out_ << "<text class=\"slope-label\" transform=\"translate(" << px(spot->x) << ","
           << px(spot->y) << ") rotate(" << format_fixed(angle * 180 / std::numbers::pi, 2)
           << ")\" x=\"0\" y=\"" << format_fixed(spot->baseline, 0) << "\" font-size=\"11.5\">"
           << xml_escape(label.text) << "</text>\n";
    }
    out_ << "</g>\n";
  }

  // Sequence-length labels only on panels with few enough points to read them; every point is
  // drawn either way.
  std::size_t labelled_point_count() const {
    std::size_t n = 0;
    for (const ChartPoint& p : panel_.points)
      if (p.level == MemoryLevel::kDram && !faded(p)) ++n;
    return n;
  }

  bool faded(const ChartPoint& p) const {
    return chart_.report_count > 1 && !chart_.kernel_pair && p.report + 1 < chart_.report_count;
  }

  void draw_arrows() {
    if (panel_.arrows.empty()) return;
    out_ << "<g class=\"arrows\">\n";
    for (const ChartArrow& arrow : panel_.arrows) {
      const ChartPoint& a = panel_.points[arrow.from];
      const ChartPoint& b = panel_.points[arrow.to];
      const double x0 = x(a.ai), y0 = y(a.flops), x1 = x(b.ai), y1 = y(b.flops);
      const double length = std::hypot(x1 - x0, y1 - y0);
      // compare's verdict decides the label: a row it calls `same` shows no change.
      const bool same = arrow.verdict == Verdict::kSame;
      const bool ambiguous = arrow.verdict == Verdict::kAmbiguous;
      const std::string label =
          same ? "same" : change_text(arrow.change) + (ambiguous ? " (ambiguous)" : "");
      const bool labelled = std::fabs(arrow.change) >= kArrowLabelMin;
      out_ << "<g class=\"arrow\" data-from-ai=\"" << si(a.ai) << "\" data-from-flops=\""
           << si(a.flops) << "\" data-to-ai=\"" << si(b.ai) << "\" data-to-flops=\"" << si(b.flops)
           << "\" data-change=\"" << si(arrow.change) << "\" data-verdict=\""
           << (arrow.verdict ? std::string(to_string(*arrow.verdict)) : std::string("none"))
           << "\">\n";
      out_ << "<title>"
           << xml_escape(a.kernel_name + " " + a.row_text + " → " + b.kernel_name + ": " +
                         change_text(arrow.change) + " FLOP/s" +
                         (arrow.verdict ? ", compare: " + std::string(to_string(*arrow.verdict))
                                        : std::string()))
           << "</title>\n";
      if (length > 13) {  // shorter moves: the two markers touch, the label says it
        const double ux = (x1 - x0) / length, uy = (y1 - y0) / length;
        out_ << "<line x1=\"" << px(x0 + 5 * ux) << "\" y1=\"" << px(y0 + 5 * uy) << "\" x2=\""
             << px(x1 - 6 * ux) << "\" y2=\"" << px(y1 - 6 * uy)
             << "\" stroke=\"#4a4a4a\" stroke-width=\"1.3\" marker-end=\"url(#arrowhead)\"/>\n";
      }
      if (!labelled) {
        out_ << "</g>\n";
        continue;
      }
      // The label beside the middle of the arrow, else beside the head point.
      const double mx = (x0 + x1) / 2, my = (y0 + y1) / 2;
      const double nx = length > 0 ? -(y1 - y0) / length : 0,
                   ny = length > 0 ? (x1 - x0) / length : -1;
      // Green and red for compare's faster and slower, grey where it sees no change it can
      // stand behind; by the direction of the move where it could not judge.
      const bool up = arrow.verdict ? arrow.verdict == Verdict::kFaster : arrow.change >= 0;
      const bool down =
          arrow.verdict ? (arrow.verdict == Verdict::kSlower || arrow.verdict == Verdict::kFailed)
                        : arrow.change < 0;
      const char* colour = up ? "#1a7f37" : down ? "#c62828" : "#6e6e6e";
      std::vector<std::pair<double, double>> candidates = {
          {mx + 9 * nx, my + 9 * ny}, {mx - 9 * nx, my - 9 * ny}, {x1 + 9, y1 - 8},
          {x1 + 9, y1 + 16},          {x1 - 9, y1 - 8},           {x1 - 9, y1 + 16}};
      Anchor anchor = Anchor::kMiddle;
      std::pair<double, double> at = {x1 + 9, y1 - 8};
      for (std::size_t i = 0; i < candidates.size(); ++i) {
        const Anchor candidate_anchor =
            i < 2 ? Anchor::kMiddle : (i < 4 ? Anchor::kStart : Anchor::kEnd);
        const Box box = text_box(candidates[i].first, candidates[i].second + 4, label, 10.5,
                                 candidate_anchor, true);
        if (placer_.is_free(box)) {
          placer_.take(box);
          at = candidates[i];
          anchor = candidate_anchor;
          break;
        }
        if (i + 1 == candidates.size()) anchor = Anchor::kStart;
      }
      text(at.first, at.second + 4, label, 10.5, anchor,
           std::string("class=\"arrow-label\" font-weight=\"bold\" fill=\"") + colour +
               "\" stroke=\"white\" stroke-width=\"3\" paint-order=\"stroke\"");
      out_ << "</g>\n";
    }
    out_ << "</g>\n";
  }

  // The rows with the largest shares of the newest report's time (DRAM points, one per row),
  // numbered on the chart and named in the legend; and how many timed rows each report has.
  void choose_share_keys() {
    timed_rows_.assign(chart_.report_count, 0);
    std::vector<std::size_t> candidates;
    for (std::size_t i = 0; i < panel_.points.size(); ++i) {
      const ChartPoint& p = panel_.points[i];
      if (p.level != MemoryLevel::kDram || !(p.time_share > 0)) continue;
      ++timed_rows_[p.report];
      if (!faded(p)) candidates.push_back(i);
    }
    std::stable_sort(candidates.begin(), candidates.end(), [&](std::size_t a, std::size_t b) {
      return panel_.points[a].time_share > panel_.points[b].time_share;
    });
    if (candidates.size() > kShareKeys) candidates.resize(kShareKeys);
    share_keys_ = candidates;
  }

  // Marker area in proportion to the row's share of the time (Intel Advisor's convention): the
  // average row of its report keeps the plain size.
  double marker_scale(const ChartPoint& p) const {
    if (!(p.time_share > 0) || timed_rows_.empty() || timed_rows_[p.report] == 0) return 1;
    const double relative = p.time_share * static_cast<double>(timed_rows_[p.report]);
    return std::clamp(std::sqrt(relative), 0.55, 3.2);
  }

  void marker_shape(MemoryLevel level, const std::string& fill, const std::string& stroke) {
    out_ << marker_svg(level, fill, stroke);
  }

  void draw_points() {
    out_ << "<g class=\"points\">\n";
    // Earlier reports first, so the head's points sit on top.
    std::vector<std::size_t> order(panel_.points.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
      return faded(panel_.points[a]) && !faded(panel_.points[b]);
    });
    for (std::size_t index : order) {
      const ChartPoint& p = panel_.points[index];
      const std::string colour = kernel_colour(p.kernel);
      out_ << "<g class=\"point\" data-report=\"" << p.report << "\" data-row=\"" << p.row
           << "\" data-kernel=\"" << xml_escape(p.kernel_name) << "\" data-level=\""
           << to_string(p.level) << "\" data-causal=\"" << (p.workload.causal ? "true" : "false")
           << "\" data-seq-len=\"" << p.workload.seq_len << "\" data-ai=\"" << si(p.ai)
           << "\" data-flops=\"" << si(p.flops) << "\" data-regime=\"" << xml_escape(p.regime)
           << "\" transform=\"translate(" << px(x(p.ai)) << "," << px(y(p.flops)) << ")\""
           << (faded(p) ? " opacity=\"" + format_fixed(kFaded, 2) + "\"" : "") << ">";
      out_ << "<title>"
           << xml_escape(p.kernel_name + " " + p.row_text + " [" + chart_.report_labels[p.report] +
                         "]: " + std::string(display_name(p.level)) + " " + number_text(p.ai, 4) +
                         " FLOP/byte (" + std::string(to_string(p.bytes_source)) + "), " +
                         format_fixed(p.flops / 1e12, 1) + " TFLOP/s; " + p.regime)
           << "</title>";
      const double scale = marker_scale(p);
      if (scale != 1) out_ << "<g transform=\"scale(" << format_fixed(scale, 3) << ")\">";
      marker_shape(p.level, p.workload.causal ? "white" : colour, colour);
      if (scale != 1) out_ << "</g>";
      out_ << "</g>\n";
    }
    out_ << "</g>\n";
    // The largest shares of time, numbered beside their points (named in the legend).
    out_ << "<g class=\"share-keys\" font-size=\"11\" font-weight=\"bold\" fill=\"#1f1f1f\">\n";
    for (std::size_t k = 0; k < share_keys_.size(); ++k) {
      const ChartPoint& p = panel_.points[share_keys_[k]];
      const double r = 6 * marker_scale(p);
      const std::string key = std::to_string(k + 1);
      const double px0 = x(p.ai), py0 = y(p.flops);
      const std::pair<double, double> offsets[] = {
          {r + 3, -r}, {-r - 3, -r}, {r + 3, r + 9}, {-r - 3, r + 9}};
      const Anchor anchors[] = {Anchor::kStart, Anchor::kEnd, Anchor::kStart, Anchor::kEnd};
      std::size_t at = 0;
      for (std::size_t i = 0; i < 4; ++i) {
        const Box box =
            text_box(px0 + offsets[i].first, py0 + offsets[i].second, key, 11, anchors[i]);
        if (placer_.is_free(box)) {
          placer_.take(box);
          at = i;
          break;
        }
      }
      text(px0 + offsets[at].first, py0 + offsets[at].second, key, 11, anchors[at],
           "class=\"share-key\" stroke=\"white\" stroke-width=\"3\" paint-order=\"stroke\"");
    }
    out_ << "</g>\n";
    // Sequence-length labels beside the DRAM points of the newest report (or of every report
    // when arrows join two kernels), where they do not collide.
    out_ << "<g class=\"point-labels\" font-size=\"10\" fill=\"#333333\">\n";
    for (const ChartPoint& p : panel_.points) {
      if (p.level != MemoryLevel::kDram || faded(p) || !label_points_) continue;
      const std::string label = p.point_text;
      const double px0 = x(p.ai), py0 = y(p.flops);
      const std::pair<double, double> offsets[] = {{8, 4}, {-8, 4}, {0, -9}, {0, 16}};
      const Anchor anchors[] = {Anchor::kStart, Anchor::kEnd, Anchor::kMiddle, Anchor::kMiddle};
      for (std::size_t i = 0; i < 4; ++i) {
        const Box box =
            text_box(px0 + offsets[i].first, py0 + offsets[i].second, label, 10, anchors[i]);
        if (!placer_.is_free(box)) continue;
        placer_.take(box);
        text(px0 + offsets[i].first, py0 + offsets[i].second, label, 10, anchors[i],
             "class=\"point-label\"");
        break;
      }
    }
    out_ << "</g>\n";
  }

  void draw_legend() {
    double ly = top_ + 4;
    const double lx = kLegendLeft;
    out_ << "<g class=\"legend\" font-size=\"11.5\" fill=\"#1f1f1f\">\n";
    auto heading = [&](const std::string& title) {
      ly += 6;
      text(lx, ly + 4, title, 12, Anchor::kStart, "font-weight=\"bold\"");
      ly += 18;
    };
    auto entry_text = [&](const std::string& label) {
      for (const std::string& line : wrap_text(label, kLegendChars)) {
        text(lx + 34, ly + 4, line, 11.5, Anchor::kStart);
        ly += 15;
      }
      ly += 3;
    };
    heading("Roofs");
    for (const MemoryRoof& roof : panel_.memory) {
      out_ << "<line x1=\"" << px(lx) << "\" y1=\"" << px(ly) << "\" x2=\"" << px(lx + 26)
           << "\" y2=\"" << px(ly) << "\"" << memory_stroke(roof) << "/>\n";
      entry_text(std::string(display_name(roof.level)) + " " +
                 bandwidth_text(roof.bandwidth_bytes_per_second) +
                 (roof.twin.empty() ? "" : " (" + roof.twin + ")"));
    }
    for (std::size_t i = 0; i < panel_.compute.size(); ++i) {
      const ComputeRoof& roof = panel_.compute[i];
      out_ << "<line x1=\"" << px(lx) << "\" y1=\"" << px(ly) << "\" x2=\"" << px(lx + 26)
           << "\" y2=\"" << px(ly) << "\"" << compute_stroke(i, roof.judged) << "/>\n";
      entry_text(roof.label + " " + peak_text(roof.peak_flops_per_second) +
                 (roof.judged ? "" : " (context)"));
    }
    if (!panel_.ridges.empty()) {
      out_ << "<circle cx=\"" << px(lx + 13) << "\" cy=\"" << px(ly) << "\" r=\"4\" "
           << "fill=\"white\" stroke=\"#1f1f1f\" stroke-width=\"1.6\"/>\n";
      entry_text("ridge point (slope meets roof)");
    }
    std::vector<std::size_t> kernels;
    std::set<MemoryLevel> levels;
    bool any_causal = false, any_full = false;
    for (const ChartPoint& p : panel_.points) {
      if (std::find(kernels.begin(), kernels.end(), p.kernel) == kernels.end())
        kernels.push_back(p.kernel);
      levels.insert(p.level);
      (p.workload.causal ? any_causal : any_full) = true;
    }
    std::sort(kernels.begin(), kernels.end());
    // What follows the kernels' names: the points' levels, the largest shares, the reports
    // and the axes' meaning.
    auto rest = [&] {
      if (!kernels.empty()) {
        heading("Intensity at");
        for (MemoryLevel level : kAllMemoryLevels) {
          if (levels.count(level) == 0) continue;
          out_ << "<g transform=\"translate(" << px(lx + 13) << "," << px(ly) << ")\">";
          marker_shape(level, "#555555", "#555555");
          out_ << "</g>\n";
          entry_text(std::string(display_name(level)) + " bytes");
        }
        if (!label_points_)
          entry_text("(" + std::to_string(labelled_point_count()) + " points: no N labels)");
        if (any_causal && any_full) {
          out_ << "<g transform=\"translate(" << px(lx + 13) << "," << px(ly) << ")\">";
          marker_shape(MemoryLevel::kDram, "white", "#555555");
          out_ << "</g>\n";
          entry_text("hollow: causal");
        }
      }
      if (!share_keys_.empty()) {
        heading("Largest shares of time");
        for (std::size_t k = 0; k < share_keys_.size(); ++k) {
          const ChartPoint& p = panel_.points[share_keys_[k]];
          text(lx + 13, ly + 4, std::to_string(k + 1), 11.5, Anchor::kMiddle,
               "font-weight=\"bold\"");
          entry_text(p.kernel_name + " " + p.row_text + ": " + format_fixed(100 * p.time_share, 1) +
                     "%");
        }
        entry_text("marker area: share of the time");
      }
      if (!panel_.arrows.empty() || (chart_.report_count > 1 && !chart_.kernel_pair)) {
        heading(chart_.kernel_pair ? "Kernels compared" : "Reports");
        if (!chart_.kernel_pair)
          for (std::size_t r = 0; r < chart_.report_count; ++r) {
            out_ << "<circle cx=\"" << px(lx + 13) << "\" cy=\"" << px(ly)
                 << "\" r=\"5\" fill=\"#555555\""
                 << (r + 1 < chart_.report_count ? " opacity=\"" + format_fixed(kFaded, 2) + "\""
                                                 : "")
                 << "/>\n";
            entry_text(chart_.report_labels[r]);
          }
        out_ << "<line x1=\"" << px(lx) << "\" y1=\"" << px(ly) << "\" x2=\"" << px(lx + 24)
             << "\" y2=\"" << px(ly)
             << "\" stroke=\"#4a4a4a\" stroke-width=\"1.3\" marker-end=\"url(#arrowhead)\"/>\n";
        entry_text(chart_.kernel_pair ? chart_.kernel_base + " → " + chart_.kernel_head
                                      : "change in FLOP/s");
        entry_text("label: compare's verdict (same: no change)");
        if (!chart_.arrow_note.empty()) entry_text(chart_.arrow_note);
      }
      ly += 8;
      for (const std::string& line : {std::string(chart_.flops == FlopConvention::kPipe
                                                      ? "x: FLOPs on the kernel's pipe ÷ bytes"
                                                      : "x: FlashAttention FLOPs ÷ bytes"),
                                      std::string("y: those FLOPs ÷ median time")}) {
        text(lx, ly, line, 10.5, Anchor::kStart, "fill=\"#666666\"");
        ly += 15;
      }
    };
    // Its height, measured by drawing it into a buffer thrown away: the list of kernels stops
    // where the panel would run out (a profile can name hundreds of kernels).
    std::stringbuf scratch;
    std::ostream& stream = out_;
    std::streambuf* kept = stream.rdbuf(&scratch);
    const double from = ly;
    rest();
    const double below = ly - from;
    ly = from;
    stream.rdbuf(kept);
    const double bottom = offset_y_ + height_ - 4;
    if (!kernels.empty()) {
      heading("Kernels");
      for (std::size_t i = 0; i < kernels.size(); ++i) {
        const std::string& name = chart_.kernels[kernels[i]];
        const bool last = i + 1 == kernels.size();
        const double lines = static_cast<double>(wrap_text(name, kLegendChars).size());
        if (ly + 15 * lines + 3 + (last ? 0 : 18) + below > bottom) {
          entry_text("… and " + std::to_string(kernels.size() - i) +
                     " more kernels (the table names them)");
          break;
        }
        out_ << "<circle cx=\"" << px(lx + 13) << "\" cy=\"" << px(ly) << "\" r=\"5\" fill=\""
             << kernel_colour(kernels[i]) << "\"/>\n";
        entry_text(name);
      }
    }
    rest();
    legend_bottom_ = ly;
    out_ << "</g>\n";
  }

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

}  // namespace

std::string render_svg(const std::vector<Report>& reports) {
  return render_svg(reports, {});
}

std::string render_svg(const std::vector<Report>& reports, const PlotOptions& options) {
  const Chart chart = build_chart(reports, options);
  // Each panel's roofline, and below it the bandwidth chart of its rows without FLOPs.
  // A panel is taller than kPanelHeight when its legend needs it (many roofs, kernels or
  // shares), up to kMaxPanelHeight, where the legend's list of kernels stops and counts the rest.
  std::vector<double> offsets, heights;
  double height = 0;
  for (const ChartPanel& panel : chart.panels) {
    std::ostringstream scratch;
    heights.push_back(SvgPanel(chart, panel, 0, kMaxPanelHeight, scratch).legend_height());
    offsets.push_back(height);
    height += heights.back() + (panel.bandwidth_points.empty() ? 0 : kBandwidthPanelHeight);
  }
  if (chart.panels.empty()) height = kPanelHeight;
  std::ostringstream out;
  out << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << kSvgWidth << "\" height=\""
      << height << "\" viewBox=\"0 0 " << kSvgWidth << " " << height
      << "\" font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\" data-panels=\""
      << chart.panels.size() << "\">\n"
      << "<title>cuflash-roofline roofline chart</title>\n"
      << "<defs><marker id=\"arrowhead\" viewBox=\"0 0 10 10\" refX=\"8\" refY=\"5\" "
         "markerWidth=\"5\" markerHeight=\"5\" orient=\"auto\"><path d=\"M0,0 L10,5 L0,10 Z\" "
         "fill=\"#4a4a4a\"/></marker></defs>\n"
      << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  if (chart.panels.empty())
    out << "<text x=\"" << kSvgWidth / 2 << "\" y=\"" << kPanelHeight / 2
        << "\" text-anchor=\"middle\" font-size=\"16\">no rows to plot</text>\n";
  for (std::size_t i = 0; i < chart.panels.size(); ++i) {
    SvgPanel(chart, chart.panels[i], offsets[i], heights[i], out).draw();
    if (!chart.panels[i].bandwidth_points.empty())
      draw_bandwidth_panel(chart, chart.panels[i], offsets[i] + heights[i], out);
  }
  out << "</svg>\n";
  return out.str();
}

}  // namespace roofline
