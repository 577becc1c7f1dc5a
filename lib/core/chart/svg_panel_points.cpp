// The panel's rows: arrows between reports, markers and their labels, and the legend.
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

std::size_t Panel::labelled_point_count() const {
  std::size_t n = 0;
  for (const ChartPoint& p : panel_.points)
    if (p.level == MemoryLevel::kDram && !faded(p)) ++n;
  return n;
}

bool Panel::faded(const ChartPoint& p) const {
  return chart_.report_count > 1 && !chart_.kernel_pair && p.report + 1 < chart_.report_count;
}

void Panel::draw_arrows() {
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
    const bool down = arrow.verdict
                          ? (arrow.verdict == Verdict::kSlower || arrow.verdict == Verdict::kFailed)
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

void Panel::choose_share_keys() {
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

double Panel::marker_scale(const ChartPoint& p) const {
  if (!(p.time_share > 0) || timed_rows_.empty() || timed_rows_[p.report] == 0) return 1;
  const double relative = p.time_share * static_cast<double>(timed_rows_[p.report]);
  return std::clamp(std::sqrt(relative), 0.55, 3.2);
}

void Panel::marker_shape(MemoryLevel level, const std::string& fill, const std::string& stroke) {
  out_ << marker_svg(level, fill, stroke);
}

void Panel::draw_points() {
  // The tail roof of each tail-bound row, a short dashed tick above its DRAM point.
  out_ << "<g class=\"tail-roofs\" stroke=\"#6e6e6e\" stroke-width=\"1.4\" "
          "stroke-dasharray=\"3 2\">\n";
  for (const ChartPoint& p : panel_.points) {
    if (!tail_tick(p)) continue;
    const double tx = x(p.ai), ty = y(p.tail_roof);
    out_ << "<line class=\"tail-roof\" data-row=\"" << p.row << "\" data-flops=\""
         << format_fixed(p.tail_roof / 1e12, 3) << "e12\" x1=\"" << format_fixed(tx - 12, 2)
         << "\" y1=\"" << format_fixed(ty, 2) << "\" x2=\"" << format_fixed(tx + 12, 2)
         << "\" y2=\"" << format_fixed(ty, 2) << "\"><title>tail roof of "
         << xml_escape(p.kernel_name + " " + p.row_text) << ": "
         << format_fixed(p.tail_roof / 1e12, 1) << " TFLOP/s</title></line>\n";
  }
  out_ << "</g>\n";
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
    // Beside the point, else farther out in rings of 8 px, joined to it by a leader line: a key
    // the legend names is always drawn, and never on another label.
    double kx = px0 + r + 3, ky = py0 - r;
    Anchor anchor = Anchor::kStart;
    bool placed = false;
    for (int ring = 0; ring < 6 && !placed; ++ring) {
      const double d = 8.0 * ring;
      const std::pair<double, double> offsets[] = {{r + 3 + d, -r - d},
                                                   {-r - 3 - d, -r - d},
                                                   {r + 3 + d, r + 9 + d},
                                                   {-r - 3 - d, r + 9 + d}};
      const Anchor anchors[] = {Anchor::kStart, Anchor::kEnd, Anchor::kStart, Anchor::kEnd};
      for (std::size_t i = 0; i < 4 && !placed; ++i) {
        const Box box =
            text_box(px0 + offsets[i].first, py0 + offsets[i].second, key, 11, anchors[i]);
        if (!placer_.is_free(box)) continue;
        placer_.take(box);
        kx = px0 + offsets[i].first;
        ky = py0 + offsets[i].second;
        anchor = anchors[i];
        placed = true;
        if (ring > 0)
          out_ << "<line class=\"share-key-leader\" x1=\"" << format_fixed(px0, 2) << "\" y1=\""
               << format_fixed(py0, 2) << "\" x2=\"" << format_fixed(kx, 2) << "\" y2=\""
               << format_fixed(ky - 4, 2) << "\" stroke=\"#1f1f1f\" stroke-width=\"0.6\"/>";
      }
    }
    if (!placed) placer_.take(text_box(kx, ky, key, 11, anchor));
    text(kx, ky, key, 11, anchor,
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

void Panel::draw_legend() {
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
        text(lx + 13, ly + 4, std::to_string(k + 1), 11.5, Anchor::kMiddle, "font-weight=\"bold\"");
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

}  // namespace roofline::svg
