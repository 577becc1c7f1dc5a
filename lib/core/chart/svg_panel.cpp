// The panel itself: its frame, title and notes, grid and axes, and roofs.
#include "lib/core/chart/svg_panel.hpp"

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
namespace roofline::svg {

void Panel::draw() {
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

double Panel::legend_height() {
  prepare();
  draw_legend();
  return std::clamp(legend_bottom_ - offset_y_ + 12, kPanelHeight, height_);
}

void Panel::prepare() {
  label_points_ = labelled_point_count() <= kMaxPointLabels;
  choose_share_keys();
}

void Panel::text(double tx, double ty, const std::string& content, double size, Anchor anchor,
                 const std::string& extra) {
  out_ << svg_text(tx, ty, content, size, anchor, extra);
}

void Panel::draw_grid_and_axes() {
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

void Panel::reserve_markers() {
  for (const ChartPoint& p : panel_.points) {
    placer_.take({x(p.ai) - 7, y(p.flops) - 7, x(p.ai) + 7, y(p.flops) + 7});
    if (tail_tick(p)) {
      const double ty = y(p.tail_roof);
      placer_.take({x(p.ai) - 12, ty - 2, x(p.ai) + 12, ty + 2});
    }
  }
}

bool Panel::tail_tick(const ChartPoint& p) const {
  if (!(p.tail_roof > 0) || p.level != MemoryLevel::kDram) return false;
  const double ty = y(p.tail_roof);
  return ty >= top_ && ty <= top_ + kPlotHeight;
}

double Panel::top_roof() const {
  double top = 0;
  for (const ComputeRoof& roof : panel_.compute) top = std::max(top, roof.peak_flops_per_second);
  return top;
}

void Panel::draw_roofs() {
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
    std::string exp_ratio;  // an exponential-unit roof's FLOPs per exponential; empty otherwise
    double peak = 0;
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
    roof_labels.push_back({y(peak), roof.label + "  " + peak_text(peak), roof.judged,
                           roof.id.rfind("xu@", 0) == 0 ? roof.id.substr(3) : std::string(), peak});
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
  // Exponential-unit roofs (one per FLOPs-per-exponential ratio) closer than two lines of text
  // share one label that gives their range, on the highest of them.
  {
    std::vector<RoofLabel> folded;
    std::vector<RoofLabel> exp;
    for (RoofLabel& label : roof_labels)
      (label.exp_ratio.empty() ? folded : exp).push_back(std::move(label));
    std::sort(exp.begin(), exp.end(),
              [](const RoofLabel& a, const RoofLabel& b) { return a.y < b.y; });
    for (std::size_t i = 0; i < exp.size();) {
      std::size_t j = i + 1;
      while (j < exp.size() && exp[j].y - exp[j - 1].y < 26) ++j;
      if (j - i == 1) {
        folded.push_back(exp[i]);
      } else {
        RoofLabel group = exp[i];  // the highest roof of the group
        group.text = "XU exp2 × " + exp[j - 1].exp_ratio + "–" + exp[i].exp_ratio + " FLOP/exp  " +
                     format_fixed(exp[j - 1].peak / 1e12, 1) + "–" + peak_text(exp[i].peak) + " (" +
                     std::to_string(j - i) + " roofs)";
        folded.push_back(group);
      }
      i = j;
    }
    roof_labels = std::move(folded);
  }
  // Roof labels at the right end, all on one side of their lines: above, unless the highest
  // roof is the top edge of the plot; then below.
  const double right = kPlotLeft + kPlotWidth - 6;
  bool above = true;
  for (const RoofLabel& label : roof_labels)
    if (label.y - 5 - 12 < top_) above = false;
  const std::vector<double> offsets =
      above ? std::vector<double>{-5.0, 14.0, -17.0, 26.0, -29.0, 38.0, 50.0}
            : std::vector<double>{14.0, -5.0, 26.0, -17.0, 38.0, -29.0, 50.0};
  for (const RoofLabel& label : roof_labels) {
    std::optional<Box> chosen;
    double chosen_y = 0;
    for (double dy : offsets) {
      for (double shift : {0.0, 120.0, 240.0, 360.0}) {
        const Box box = text_box(right - shift, label.y + dy, label.text, 11.5, Anchor::kEnd);
        // Inside the plot: above its top edge are the panel's title and notes.
        if (box.y0 >= top_ && placer_.is_free(box)) {
          chosen = box;
          chosen_y = label.y + dy;
          text(right - shift, chosen_y, label.text, 11.5, Anchor::kEnd,
               std::string("class=\"roof-label\"") + (label.judged ? "" : " fill=\"#6a6a6a\""));
          break;
        }
      }
      if (chosen) break;
    }
    // No free place: the roof goes unlabelled in the plot (the legend names it) rather than
    // over another label.
    if (chosen) placer_.take(*chosen);
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

}  // namespace roofline::svg
