#include "lib/core/plot.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <numbers>
#include <optional>
#include <set>
#include <sstream>

#include "lib/core/analysis.hpp"
#include "lib/core/compare.hpp"
#include "lib/core/errors.hpp"
#include "lib/core/text.hpp"

namespace roofline {
namespace {

// ---- the chart, independent of how it is drawn ------------------------------------------------

struct MemoryRoof {
  MemoryLevel level;
  double bandwidth_bytes_per_second;
};

struct ComputeRoof {
  std::string id;  // "tensor_fp16.mma_sync"
  std::string label;
  double peak_flops_per_second;
  bool judged;  // a row is judged against it (else drawn for context)
};

struct RidgeMark {
  std::size_t compute;  // index into Panel::compute
  std::size_t memory;   // index into Panel::memory
  double ai;            // FLOP/byte
  double flops;         // FLOP/s
};

struct Point {
  std::size_t report;
  std::size_t row;
  std::size_t kernel;  // index into Chart::kernels
  std::string kernel_name;
  Workload workload;
  MemoryLevel level;
  Source bytes_source;
  double ai;     // FLOP/byte at this level
  double flops;  // FLOP/s on the row's own pipe
  std::string regime;
};

struct Arrow {
  std::size_t from;  // indices into Panel::points (DRAM level)
  std::size_t to;
  double change;  // head FLOP/s ÷ base FLOP/s − 1
};

struct Panel {
  const GpuSpec* spec = nullptr;
  std::vector<MemoryRoof> memory;    // ascending bandwidth
  std::vector<ComputeRoof> compute;  // judged first, then context; descending peak within each
  std::vector<RidgeMark> ridges;
  std::vector<Point> points;
  std::vector<Arrow> arrows;
  std::vector<std::string> notes;  // where the points came from
  double lx0 = 0, lx1 = 1;         // log10 of the x range, FLOP/byte
  double ly0 = 0, ly1 = 1;         // log10 of the y range, FLOP/s
};

struct Chart {
  std::vector<Panel> panels;
  std::vector<std::string> kernels;
  std::vector<std::string> report_labels;
  std::size_t report_count = 0;
  bool kernel_pair = false;
  std::string kernel_base, kernel_head;
};

bool positive(double value) {
  return std::isfinite(value) && value > 0;
}

const GpuSpec* find_spec(const Report& report, const std::string& key) {
  for (const GpuSpec& spec : report.specs)
    if (spec.key == key) return &spec;
  return nullptr;
}

std::string describe_source(const Report& report) {
  const ReportContext& c = report.context;
  if (!c.device) return "analytic model: each point is the roofline time floor";
  std::string out = "measured on " + c.device->name;
  if (c.projection) out += ", projected onto this spec";
  return out;
}

// Whole decades covering `values`, at least `min_decades` wide.
// Widening starts at the low end when `grow_high_first` is false.
std::pair<double, double> decade_range(const std::vector<double>& logs, double margin_low,
                                       double margin_high, int min_decades, bool grow_high_first) {
  double lo = *std::min_element(logs.begin(), logs.end());
  double hi = *std::max_element(logs.begin(), logs.end());
  lo = std::floor(lo - margin_low);
  hi = std::ceil(hi + margin_high);
  bool grow_high = grow_high_first;
  while (hi - lo < min_decades) {
    (grow_high ? hi : lo) += grow_high ? 1 : -1;
    grow_high = !grow_high;
  }
  return {lo, hi};
}

Chart build_chart(const std::vector<Report>& reports, const PlotOptions& options) {
  Chart chart;
  chart.report_count = reports.size();
  chart.kernel_pair = !options.kernel_base.empty() || !options.kernel_head.empty();
  chart.kernel_base = options.kernel_base.empty() ? options.kernel_head : options.kernel_base;
  chart.kernel_head = options.kernel_head.empty() ? options.kernel_base : options.kernel_head;
  chart.report_labels = options.report_labels;
  for (std::size_t r = chart.report_labels.size(); r < reports.size(); ++r)
    chart.report_labels.push_back(reports.size() == 2 ? (r == 0 ? "base" : "head")
                                                      : "report " + std::to_string(r + 1));
  auto label_of = [&](std::size_t r) { return chart.report_labels[r]; };

  // Which panel (spec) each row is drawn in: its own spec, or, when it is matched with a row of
  // the previous report, that row's panel, so that arrows stay within one chart.
  std::map<std::string, std::size_t> panel_of_key;
  std::vector<std::vector<std::size_t>> panel_of(reports.size());
  std::vector<std::vector<const GpuSpec*>> spec_of(reports.size());
  for (std::size_t r = 0; r < reports.size(); ++r) {
    const Report& report = reports[r];
    spec_of[r].assign(report.rows.size(), nullptr);
    panel_of[r].assign(report.rows.size(), 0);
    std::vector<std::optional<std::size_t>> inherited(report.rows.size());
    if (r > 0 && !chart.kernel_pair && !reports[r - 1].rows.empty() && !report.rows.empty())
      for (const RowMatch& m :
           match_rows(reports[r - 1], report, {}, label_of(r - 1), label_of(r)).matched)
        inherited[m.head_index] = panel_of[r - 1][m.base_index];
    for (std::size_t i = 0; i < report.rows.size(); ++i) {
      if (inherited[i]) {
        panel_of[r][i] = *inherited[i];
        continue;
      }
      const std::string& key = report.rows[i].spec_key;
      auto it = panel_of_key.find(key);
      if (it == panel_of_key.end()) {
        Panel panel;
        panel.spec = find_spec(report, key);
        if (panel.spec == nullptr) report.spec_for(report.rows[i]);  // throws, naming the row
        it = panel_of_key.emplace(key, chart.panels.size()).first;
        chart.panels.push_back(std::move(panel));
      }
      panel_of[r][i] = it->second;
    }
  }

  // Points: one per row with a verdict and memory level with bytes.
  std::vector<std::vector<std::optional<std::size_t>>> dram_point(reports.size());
  std::vector<std::set<std::string>> judged_ids(chart.panels.size());
  for (std::size_t r = 0; r < reports.size(); ++r) {
    const Report& report = reports[r];
    dram_point[r].assign(report.rows.size(), std::nullopt);
    for (std::size_t i = 0; i < report.rows.size(); ++i) {
      const Row& row = report.rows[i];
      Panel& panel = chart.panels[panel_of[r][i]];
      const std::string note = describe_source(report);
      if (std::find(panel.notes.begin(), panel.notes.end(), note) == panel.notes.end())
        panel.notes.push_back(note);
      const RowAnalysis a = analyze(row, *panel.spec, report.context.projection);
      if (!a.has_verdict) continue;
      if (a.ceiling != nullptr && judged_ids[panel_of[r][i]].insert(a.ceiling->id()).second)
        panel.compute.push_back(
            {a.ceiling->id(), a.ceiling->label(), a.ceiling->peak_tflops * 1e12, true});
      auto kernel_it = std::find(chart.kernels.begin(), chart.kernels.end(), row.kernel);
      if (kernel_it == chart.kernels.end())
        kernel_it = chart.kernels.insert(chart.kernels.end(), row.kernel);
      for (const LevelAnalysis& level : a.levels) {
        if (!positive(level.intensity) || !positive(a.flops_per_second)) continue;
        if (level.level == MemoryLevel::kDram) dram_point[r][i] = panel.points.size();
        panel.points.push_back({r, i, static_cast<std::size_t>(kernel_it - chart.kernels.begin()),
                                row.kernel, row.workload, level.level, level.bytes_source,
                                level.intensity, a.flops_per_second, a.regime});
      }
    }
  }

  // Arrows: between consecutive reports, or between two kernels of each report.
  auto add_arrows = [&](std::size_t rb, std::size_t rh, const RowMatching& matching) {
    for (const RowMatch& m : matching.matched) {
      const auto& from = dram_point[rb][m.base_index];
      const auto& to = dram_point[rh][m.head_index];
      if (!from || !to || panel_of[rb][m.base_index] != panel_of[rh][m.head_index]) continue;
      Panel& panel = chart.panels[panel_of[rb][m.base_index]];
      panel.arrows.push_back({*from, *to, panel.points[*to].flops / panel.points[*from].flops - 1});
    }
  };
  if (chart.kernel_pair) {
    CompareOptions pair;
    pair.kernel_base = options.kernel_base;
    pair.kernel_head = options.kernel_head;
    for (std::size_t r = 0; r < reports.size(); ++r)
      if (!reports[r].rows.empty())
        add_arrows(r, r, match_rows(reports[r], reports[r], pair, label_of(r), label_of(r)));
  } else {
    for (std::size_t r = 1; r < reports.size(); ++r)
      if (!reports[r - 1].rows.empty() && !reports[r].rows.empty())
        add_arrows(r - 1, r,
                   match_rows(reports[r - 1], reports[r], {}, label_of(r - 1), label_of(r)));
  }

  // Roofs, ridges and ranges.
  for (Panel& panel : chart.panels) {
    const GpuSpec& spec = *panel.spec;
    for (const MemoryLevelSpec& level : spec.memory)
      panel.memory.push_back({level.level, level.bandwidth_gbps * 1e9});
    std::sort(panel.memory.begin(), panel.memory.end(),
              [](const MemoryRoof& a, const MemoryRoof& b) {
                return a.bandwidth_bytes_per_second < b.bandwidth_bytes_per_second;
              });
    std::sort(panel.compute.begin(), panel.compute.end(),
              [](const ComputeRoof& a, const ComputeRoof& b) {
                return a.peak_flops_per_second > b.peak_flops_per_second;
              });
    // Context: FP32 (CUDA cores), or the best tensor FP16 ceiling when no row was judged.
    auto add_context = [&](const ComputeCeiling* c) {
      if (c == nullptr) return;
      for (const ComputeRoof& roof : panel.compute)
        if (roof.id == c->id()) return;
      panel.compute.push_back({c->id(), c->label(), c->peak_tflops * 1e12, false});
    };
    if (panel.compute.empty()) add_context(spec.ceiling(ComputePath::kTensorFp16));
    add_context(spec.ceiling(ComputePath::kFp32));
    for (std::size_t c = 0; c < panel.compute.size(); ++c) {
      if (!panel.compute[c].judged) continue;
      for (std::size_t m = 0; m < panel.memory.size(); ++m) {
        const double peak = panel.compute[c].peak_flops_per_second;
        panel.ridges.push_back({c, m, peak / panel.memory[m].bandwidth_bytes_per_second, peak});
      }
    }
    std::vector<double> xs, ys;
    for (const Point& p : panel.points) {
      xs.push_back(std::log10(p.ai));
      ys.push_back(std::log10(p.flops));
    }
    for (const RidgeMark& ridge : panel.ridges) xs.push_back(std::log10(ridge.ai));
    for (const ComputeRoof& roof : panel.compute) {
      ys.push_back(std::log10(roof.peak_flops_per_second));
      if (!panel.memory.empty())
        xs.push_back(std::log10(roof.peak_flops_per_second /
                                panel.memory.front().bandwidth_bytes_per_second));
    }
    if (xs.empty()) xs = {0, 2};
    if (ys.empty()) ys = {12, 15};
    // Whole decades; the top decade ends at the highest roof (its label goes below the line).
    std::tie(panel.lx0, panel.lx1) = decade_range(xs, 0.05, 0.05, 3, true);
    std::tie(panel.ly0, panel.ly1) = decade_range(ys, 0.15, 0.0, 2, false);
  }
  return chart;
}

// ---- text helpers ------------------------------------------------------------------------------

std::string number_text(double value, int significant) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.*g", significant, value);
  return buffer;
}

// A decade's tick label: "0.001" ... "100000", else "1e-5", "1e6".
std::string decade_text(int exponent) {
  if (exponent >= 0 && exponent <= 5)
    return "1" + std::string(static_cast<std::size_t>(exponent), '0');
  if (exponent < 0 && exponent >= -3)
    return "0." + std::string(static_cast<std::size_t>(-exponent - 1), '0') + "1";
  return "1e" + std::to_string(exponent);
}

std::string bandwidth_text(double bytes_per_second) {
  if (bytes_per_second >= 1e12) return number_text(bytes_per_second / 1e12, 3) + " TB/s";
  return format_fixed(bytes_per_second / 1e9, 0) + " GB/s";
}

std::string peak_text(double flops_per_second) {
  return format_fixed(flops_per_second / 1e12, 1) + " TFLOP/s";
}

std::string seq_text(int n) {
  if (n >= 1024 && n % 1024 == 0) return std::to_string(n / 1024) + "k";
  return std::to_string(n);
}

std::string change_text(double change) {
  const double pct = 100 * change;
  const std::string digits = format_fixed(std::fabs(pct), std::fabs(pct) >= 10 ? 0 : 1);
  if (digits.find_first_not_of("0.") == std::string::npos) return digits + "%";
  return (pct > 0 ? "+" : "-") + digits + "%";
}

std::size_t code_points(const std::string& text) {
  std::size_t n = 0;
  for (unsigned char c : text)
    if ((c & 0xC0) != 0x80) ++n;
  return n;
}

std::string xml_escape(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&apos;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string px(double value) {
  return format_fixed(value, 2);
}
std::string si(double value) {
  return number_text(value, 10);
}

// ---- SVG ---------------------------------------------------------------------------------------

constexpr const char* kPalette[] = {"#0072B2", "#D55E00", "#009E73", "#CC79A7",
                                    "#E69F00", "#56B4E9", "#000000"};  // Okabe–Ito
constexpr double kSvgWidth = 1040;
constexpr double kPanelHeight = 600;
constexpr double kPlotLeft = 84;
constexpr double kPlotTop = 76;
constexpr double kPlotWidth = 620;
constexpr double kPlotHeight = 450;
constexpr double kLegendLeft = kPlotLeft + kPlotWidth + 28;
constexpr double kFaded = 0.4;
constexpr double kArrowLabelMin = 0.01;  // smaller changes get an arrow but no label

const char* kernel_colour(std::size_t kernel) {
  return kPalette[kernel % (sizeof kPalette / sizeof kPalette[0])];
}

const char* memory_dash(MemoryLevel level) {
  switch (level) {
    case MemoryLevel::kDram:
      return "";
    case MemoryLevel::kL2:
      return "7 4";
    case MemoryLevel::kL1:
      return "2 3";
  }
  return "";
}

struct Box {
  double x0, y0, x1, y1;
};

bool overlaps(const Box& a, const Box& b) {
  return a.x0 < b.x1 && b.x0 < a.x1 && a.y0 < b.y1 && b.y0 < a.y1;
}

// Keeps labels from landing on each other or on markers: first free candidate wins.
class LabelPlacer {
 public:
  explicit LabelPlacer(Box bounds) : bounds_(bounds) {}
  bool is_free(const Box& box) const {
    if (box.x0 < bounds_.x0 || box.x1 > bounds_.x1 || box.y0 < bounds_.y0 || box.y1 > bounds_.y1)
      return false;
    return std::none_of(taken_.begin(), taken_.end(),
                        [&](const Box& other) { return overlaps(box, other); });
  }
  void take(const Box& box) { taken_.push_back(box); }

 private:
  Box bounds_;
  std::vector<Box> taken_;
};

// Width of `text` in DejaVu Sans / Helvetica, generously estimated (digits are 0.64 em).
double text_width(const std::string& text, double size, bool bold = false) {
  return (bold ? 0.7 : 0.62) * size * static_cast<double>(code_points(text));
}

enum class Anchor { kStart, kMiddle, kEnd };

Box text_box(double x, double baseline, const std::string& text, double size, Anchor anchor,
             bool bold = false) {
  const double w = text_width(text, size, bold);
  const double x0 = anchor == Anchor::kStart ? x : anchor == Anchor::kMiddle ? x - w / 2 : x - w;
  return {x0 - 1, baseline - 0.82 * size, x0 + w + 1, baseline + 0.25 * size};
}

class SvgPanel {
 public:
  SvgPanel(const Chart& chart, const Panel& panel, double offset_y, std::ostringstream& out)
      : chart_(chart),
        panel_(panel),
        offset_y_(offset_y),
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
    out_ << "<g class=\"panel\" id=\"panel-" << xml_escape(spec.key) << "\" data-spec=\""
         << xml_escape(spec.key) << "\" data-x-min=\"" << si(std::pow(10.0, panel_.lx0))
         << "\" data-x-max=\"" << si(std::pow(10.0, panel_.lx1)) << "\" data-y-min=\""
         << si(std::pow(10.0, panel_.ly0)) << "\" data-y-max=\"" << si(std::pow(10.0, panel_.ly1))
         << "\" data-plot-left=\"" << px(kPlotLeft) << "\" data-plot-top=\"" << px(top_)
         << "\" data-plot-width=\"" << px(kPlotWidth) << "\" data-plot-height=\"" << px(kPlotHeight)
         << "\">\n";
    out_ << "<text class=\"title\" x=\"" << px(kPlotLeft) << "\" y=\"" << px(offset_y_ + 30)
         << "\" font-size=\"17\" font-weight=\"bold\">Roofline: " << xml_escape(spec.name) << " ["
         << xml_escape(spec.key) << "]</text>\n";
    out_ << "<text class=\"subtitle\" x=\"" << px(kPlotLeft) << "\" y=\"" << px(offset_y_ + 52)
         << "\" font-size=\"12\" fill=\"#555555\">" << xml_escape(join(panel_.notes, "; "))
         << "</text>\n";
    draw_grid_and_axes();
    reserve_markers();
    draw_roofs();
    draw_arrows();
    draw_points();
    draw_legend();
    out_ << "</g>\n";
  }

 private:
  void text(double tx, double ty, const std::string& content, double size, Anchor anchor,
            const std::string& extra = "") {
    out_ << "<text x=\"" << px(tx) << "\" y=\"" << px(ty) << "\" font-size=\"" << size << "\"";
    if (anchor == Anchor::kMiddle) out_ << " text-anchor=\"middle\"";
    if (anchor == Anchor::kEnd) out_ << " text-anchor=\"end\"";
    if (!extra.empty()) out_ << " " << extra;
    out_ << ">" << xml_escape(content) << "</text>\n";
  }

  void draw_grid_and_axes() {
    const double left = kPlotLeft, right = kPlotLeft + kPlotWidth;
    const double top = top_, bottom = top_ + kPlotHeight;
    out_ << "<g class=\"grid\" stroke-width=\"1\">\n";
    for (int e = static_cast<int>(panel_.lx0); e < static_cast<int>(panel_.lx1); ++e)
      for (int m = 2; m <= 9; ++m) {
        const double gx = x(m * std::pow(10.0, e));
        out_ << "<line x1=\"" << px(gx) << "\" y1=\"" << px(top) << "\" x2=\"" << px(gx)
             << "\" y2=\"" << px(bottom) << "\" stroke=\"#f0f0f0\"/>\n";
      }
    for (int e = static_cast<int>(panel_.ly0); e < static_cast<int>(panel_.ly1); ++e)
      for (int m = 2; m <= 9; ++m) {
        const double gy = y(m * std::pow(10.0, e));
        out_ << "<line x1=\"" << px(left) << "\" y1=\"" << px(gy) << "\" x2=\"" << px(right)
             << "\" y2=\"" << px(gy) << "\" stroke=\"#f0f0f0\"/>\n";
      }
    for (int e = static_cast<int>(panel_.lx0); e <= static_cast<int>(panel_.lx1); ++e) {
      const double gx = x(std::pow(10.0, e));
      out_ << "<line x1=\"" << px(gx) << "\" y1=\"" << px(top) << "\" x2=\"" << px(gx) << "\" y2=\""
           << px(bottom) << "\" stroke=\"#d6d6d6\"/>\n";
    }
    for (int e = static_cast<int>(panel_.ly0); e <= static_cast<int>(panel_.ly1); ++e) {
      const double gy = y(std::pow(10.0, e));
      out_ << "<line x1=\"" << px(left) << "\" y1=\"" << px(gy) << "\" x2=\"" << px(right)
           << "\" y2=\"" << px(gy) << "\" stroke=\"#d6d6d6\"/>\n";
    }
    out_ << "</g>\n<g class=\"axes\" font-size=\"12\" fill=\"#222222\">\n";
    out_ << "<rect x=\"" << px(left) << "\" y=\"" << px(top) << "\" width=\"" << px(kPlotWidth)
         << "\" height=\"" << px(kPlotHeight) << "\" fill=\"none\" stroke=\"#444444\"/>\n";
    for (int e = static_cast<int>(panel_.lx0); e <= static_cast<int>(panel_.lx1); ++e) {
      const double gx = x(std::pow(10.0, e));
      out_ << "<line x1=\"" << px(gx) << "\" y1=\"" << px(bottom) << "\" x2=\"" << px(gx)
           << "\" y2=\"" << px(bottom + 5) << "\" stroke=\"#444444\"/>\n";
      out_ << "<text class=\"tick x\" data-value=\"" << si(std::pow(10.0, e)) << "\" x=\"" << px(gx)
           << "\" y=\"" << px(bottom + 19) << "\" text-anchor=\"middle\">" << decade_text(e)
           << "</text>\n";
    }
    for (int e = static_cast<int>(panel_.ly0); e <= static_cast<int>(panel_.ly1); ++e) {
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
    for (const Point& p : panel_.points)
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
      const bool dram = roof.level == MemoryLevel::kDram;
      out_ << "<line class=\"roof memory\" data-level=\"" << to_string(roof.level)
           << "\" data-bandwidth=\"" << si(bw) << "\" x1=\"" << px(x(start)) << "\" y1=\""
           << px(y(start * bw)) << "\" x2=\"" << px(x(end)) << "\" y2=\"" << px(y(end * bw))
           << "\" stroke=\"" << (dram ? "#1f1f1f" : "#555555") << "\" stroke-width=\""
           << (dram ? 2.2 : 1.6) << "\"";
      if (*memory_dash(roof.level))
        out_ << " stroke-dasharray=\"" << memory_dash(roof.level) << "\"";
      out_ << "/>\n";
      slope_labels.push_back({x(start), y(start * bw), x(end), y(end * bw),
                              std::string(display_name(roof.level)) + " " + bandwidth_text(bw)});
    }
    // Compute roofs, from where they meet the fastest memory slope to the right edge.
    struct RoofLabel {
      double y;
      std::string text;
      bool judged;
    };
    std::vector<RoofLabel> roof_labels;
    for (const ComputeRoof& roof : panel_.compute) {
      const double peak = roof.peak_flops_per_second;
      const double start = fastest > 0 ? std::max(x_min, peak / fastest) : x_min;
      out_ << "<line class=\"roof compute\" data-ceiling=\"" << xml_escape(roof.id)
           << "\" data-role=\"" << (roof.judged ? "judged" : "context") << "\" data-peak=\""
           << si(peak) << "\" x1=\"" << px(x(start)) << "\" y1=\"" << px(y(peak)) << "\" x2=\""
           << px(x(x_max)) << "\" y2=\"" << px(y(peak)) << "\" stroke=\""
           << (roof.judged ? "#1f1f1f" : "#8a8a8a") << "\" stroke-width=\""
           << (roof.judged ? 2.2 : 1.4) << "\"" << (roof.judged ? "" : " stroke-dasharray=\"5 4\"")
           << "/>\n";
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

  bool faded(const Point& p) const {
    return chart_.report_count > 1 && !chart_.kernel_pair && p.report + 1 < chart_.report_count;
  }

  void draw_arrows() {
    if (panel_.arrows.empty()) return;
    out_ << "<g class=\"arrows\">\n";
    for (const Arrow& arrow : panel_.arrows) {
      const Point& a = panel_.points[arrow.from];
      const Point& b = panel_.points[arrow.to];
      const double x0 = x(a.ai), y0 = y(a.flops), x1 = x(b.ai), y1 = y(b.flops);
      const double length = std::hypot(x1 - x0, y1 - y0);
      const std::string label = change_text(arrow.change);
      const bool labelled = std::fabs(arrow.change) >= kArrowLabelMin;
      out_ << "<g class=\"arrow\" data-from-ai=\"" << si(a.ai) << "\" data-from-flops=\""
           << si(a.flops) << "\" data-to-ai=\"" << si(b.ai) << "\" data-to-flops=\"" << si(b.flops)
           << "\" data-change=\"" << si(arrow.change) << "\">\n";
      out_ << "<title>"
           << xml_escape(a.kernel_name + " " + a.workload.label() + " → " + b.kernel_name + ": " +
                         label + " FLOP/s")
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
      const char* colour = arrow.change >= 0 ? "#1a7f37" : "#c62828";
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

  void marker_shape(MemoryLevel level, const std::string& fill, const std::string& stroke) {
    const std::string paint =
        "fill=\"" + fill + "\" stroke=\"" + stroke + "\" stroke-width=\"1.6\"";
    switch (level) {
      case MemoryLevel::kDram:
        out_ << "<circle r=\"5\" " << paint << "/>";
        break;
      case MemoryLevel::kL2:
        out_ << "<rect x=\"-4.5\" y=\"-4.5\" width=\"9\" height=\"9\" " << paint << "/>";
        break;
      case MemoryLevel::kL1:
        out_ << "<path d=\"M0,-6 L5.4,4 L-5.4,4 Z\" " << paint << "/>";
        break;
    }
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
      const Point& p = panel_.points[index];
      const std::string colour = kernel_colour(p.kernel);
      out_ << "<g class=\"point\" data-report=\"" << p.report << "\" data-row=\"" << p.row
           << "\" data-kernel=\"" << xml_escape(p.kernel_name) << "\" data-level=\""
           << to_string(p.level) << "\" data-causal=\"" << (p.workload.causal ? "true" : "false")
           << "\" data-seq-len=\"" << p.workload.seq_len << "\" data-ai=\"" << si(p.ai)
           << "\" data-flops=\"" << si(p.flops) << "\" data-regime=\"" << xml_escape(p.regime)
           << "\" transform=\"translate(" << px(x(p.ai)) << "," << px(y(p.flops)) << ")\""
           << (faded(p) ? " opacity=\"" + format_fixed(kFaded, 2) + "\"" : "") << ">";
      out_ << "<title>"
           << xml_escape(p.kernel_name + " " + p.workload.label() + " [" +
                         chart_.report_labels[p.report] +
                         "]: " + std::string(display_name(p.level)) + " " + number_text(p.ai, 4) +
                         " FLOP/byte (" + std::string(to_string(p.bytes_source)) + "), " +
                         format_fixed(p.flops / 1e12, 1) + " TFLOP/s; " + p.regime)
           << "</title>";
      marker_shape(p.level, p.workload.causal ? "white" : colour, colour);
      out_ << "</g>\n";
    }
    out_ << "</g>\n";
    // Sequence-length labels beside the DRAM points of the newest report (or of every report
    // when arrows join two kernels), where they do not collide.
    out_ << "<g class=\"point-labels\" font-size=\"10\" fill=\"#333333\">\n";
    for (const Point& p : panel_.points) {
      if (p.level != MemoryLevel::kDram || faded(p)) continue;
      const std::string label = seq_text(p.workload.seq_len);
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
      text(lx + 34, ly + 4, label, 11.5, Anchor::kStart);
      ly += 18;
    };
    heading("Roofs");
    for (const MemoryRoof& roof : panel_.memory) {
      const bool dram = roof.level == MemoryLevel::kDram;
      out_ << "<line x1=\"" << px(lx) << "\" y1=\"" << px(ly) << "\" x2=\"" << px(lx + 26)
           << "\" y2=\"" << px(ly) << "\" stroke=\"" << (dram ? "#1f1f1f" : "#555555")
           << "\" stroke-width=\"" << (dram ? 2.2 : 1.6) << "\"";
      if (*memory_dash(roof.level))
        out_ << " stroke-dasharray=\"" << memory_dash(roof.level) << "\"";
      out_ << "/>\n";
      entry_text(std::string(display_name(roof.level)) + " " +
                 bandwidth_text(roof.bandwidth_bytes_per_second));
    }
    for (const ComputeRoof& roof : panel_.compute) {
      out_ << "<line x1=\"" << px(lx) << "\" y1=\"" << px(ly) << "\" x2=\"" << px(lx + 26)
           << "\" y2=\"" << px(ly) << "\" stroke=\"" << (roof.judged ? "#1f1f1f" : "#8a8a8a")
           << "\" stroke-width=\"" << (roof.judged ? 2.2 : 1.4) << "\""
           << (roof.judged ? "" : " stroke-dasharray=\"5 4\"") << "/>\n";
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
    for (const Point& p : panel_.points) {
      if (std::find(kernels.begin(), kernels.end(), p.kernel) == kernels.end())
        kernels.push_back(p.kernel);
      levels.insert(p.level);
      (p.workload.causal ? any_causal : any_full) = true;
    }
    if (!kernels.empty()) {
      std::sort(kernels.begin(), kernels.end());
      heading("Kernels");
      for (std::size_t k : kernels) {
        out_ << "<circle cx=\"" << px(lx + 13) << "\" cy=\"" << px(ly) << "\" r=\"5\" fill=\""
             << kernel_colour(k) << "\"/>\n";
        entry_text(chart_.kernels[k]);
      }
      heading("Intensity at");
      for (MemoryLevel level : kAllMemoryLevels) {
        if (levels.count(level) == 0) continue;
        out_ << "<g transform=\"translate(" << px(lx + 13) << "," << px(ly) << ")\">";
        marker_shape(level, "#555555", "#555555");
        out_ << "</g>\n";
        entry_text(std::string(display_name(level)) + " bytes");
      }
      if (any_causal && any_full) {
        out_ << "<g transform=\"translate(" << px(lx + 13) << "," << px(ly) << ")\">";
        marker_shape(MemoryLevel::kDram, "white", "#555555");
        out_ << "</g>\n";
        entry_text("hollow: causal");
      }
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
    }
    ly += 8;
    for (const std::string& line : {std::string("x: FLOPs on the kernel's pipe ÷ bytes"),
                                    std::string("y: those FLOPs ÷ median time")}) {
      text(lx, ly, line, 10.5, Anchor::kStart, "fill=\"#666666\"");
      ly += 15;
    }
    out_ << "</g>\n";
  }

  const Chart& chart_;
  const Panel& panel_;
  double offset_y_;  // of the panel within the SVG
  double top_;       // of the plot area
  std::ostringstream& out_;
  LabelPlacer placer_;
};

// ---- Unicode chart ------------------------------------------------------------------------------

class AsciiCanvas {
 public:
  AsciiCanvas(int width, int height)
      : width_(width),
        height_(height),
        cells_(static_cast<std::size_t>(width * height), std::string(" ")) {}
  bool inside(int col, int row) const {
    return col >= 0 && col < width_ && row >= 0 && row < height_;
  }
  std::string& at(int col, int row) { return cells_[static_cast<std::size_t>(row * width_ + col)]; }
  std::string line(int row) const {
    std::string out;
    for (int col = 0; col < width_; ++col)
      out += cells_[static_cast<std::size_t>(row * width_ + col)];
    return out;
  }
  int width() const { return width_; }
  int height() const { return height_; }

 private:
  int width_, height_;
  std::vector<std::string> cells_;
};

constexpr const char* kJudgedRoof = "─";
constexpr const char* kContextRoof = "·";
constexpr const char* kSlope = "/";
constexpr const char* kRidge = "+";

std::string point_symbol(std::size_t kernel, MemoryLevel level) {
  if (kernel >= 26) return "?";
  const char k = static_cast<char>(kernel);
  switch (level) {
    case MemoryLevel::kDram:
      return std::string(1, static_cast<char>('A' + k));
    case MemoryLevel::kL2:
      return std::string(1, static_cast<char>('a' + k));
    case MemoryLevel::kL1:
      return kernel < 9 ? std::string(1, static_cast<char>('1' + k)) : "?";
  }
  return "?";
}

std::string ascii_panel(const Chart& chart, const Panel& panel, int width, int height) {
  AsciiCanvas canvas(width, height);
  auto col = [&](double lx) {
    return static_cast<int>(std::lround((lx - panel.lx0) / (panel.lx1 - panel.lx0) * (width - 1)));
  };
  auto row = [&](double ly) {
    return static_cast<int>(std::lround((panel.ly1 - ly) / (panel.ly1 - panel.ly0) * (height - 1)));
  };
  auto col_log = [&](double c) { return panel.lx0 + c / (width - 1) * (panel.lx1 - panel.lx0); };

  double top = 0;
  for (const ComputeRoof& roof : panel.compute) top = std::max(top, roof.peak_flops_per_second);
  const double log_top = top > 0 ? std::log10(top) : panel.ly1;
  const double fastest = panel.memory.empty() ? 0 : panel.memory.back().bandwidth_bytes_per_second;

  // Slopes: each column covers [c − ½, c + ½]; fill every row the line crosses there.
  struct SlopeStart {
    int col, row;
    std::string name;
  };
  std::vector<SlopeStart> slope_starts;
  for (const MemoryRoof& roof : panel.memory) {
    const double lbw = std::log10(roof.bandwidth_bytes_per_second);
    std::optional<SlopeStart> start;
    for (int c = 0; c < width; ++c) {
      double lo = col_log(c - 0.5) + lbw, hi = col_log(c + 0.5) + lbw;
      lo = std::max(lo, panel.ly0);
      hi = std::min(hi, std::min(log_top, panel.ly1));
      if (lo > hi) continue;
      for (int r = row(hi); r <= row(lo); ++r)
        if (canvas.inside(c, r) && canvas.at(c, r) == " ") canvas.at(c, r) = kSlope;
      if (!start) start = SlopeStart{c, row(lo), std::string(display_name(roof.level))};
    }
    if (start) slope_starts.push_back(*start);
  }
  // Compute roofs: context first, so a judged roof wins a shared row.
  std::vector<const ComputeRoof*> roofs;
  for (const ComputeRoof& roof : panel.compute)
    if (!roof.judged) roofs.push_back(&roof);
  for (const ComputeRoof& roof : panel.compute)
    if (roof.judged) roofs.push_back(&roof);
  std::set<int> labelled_rows;
  for (const ComputeRoof* roof : roofs) {
    const double peak = roof->peak_flops_per_second;
    const int r = row(std::log10(peak));
    const int c0 = std::max(0, fastest > 0 ? col(std::log10(peak / fastest)) : 0);
    if (r < 0 || r >= height) continue;
    for (int c = c0; c < width; ++c) canvas.at(c, r) = roof->judged ? kJudgedRoof : kContextRoof;
  }
  for (const RidgeMark& ridge : panel.ridges)
    if (panel.memory[ridge.memory].level == MemoryLevel::kDram) {
      const int c = col(std::log10(ridge.ai)), r = row(std::log10(ridge.flops));
      if (canvas.inside(c, r)) canvas.at(c, r) = kRidge;
    }
  // Roof names written into their line, right-aligned.
  for (auto it = roofs.rbegin(); it != roofs.rend(); ++it) {
    const ComputeRoof* roof = *it;
    const int r = row(std::log10(roof->peak_flops_per_second));
    if (r < 0 || r >= height || labelled_rows.count(r)) continue;
    // The rightmost stretch of plain line that holds the label (ridge marks stay visible); the
    // name shortened when the full one does not fit. The key below has them in full.
    const std::string peak = format_fixed(roof->peak_flops_per_second / 1e12, 0);
    std::string short_name = roof->label;
    if (short_name.rfind("tensor ", 0) == 0) short_name.erase(0, 7);
    for (const std::string& label : {" " + roof->label + " " + peak + " ",
                                     " " + short_name + " " + peak + " ", " " + peak + " "}) {
      const int length = static_cast<int>(label.size());
      for (int c0 = width - 3 - length; c0 >= 0 && !labelled_rows.count(r); --c0) {
        bool clear = true;
        for (int c = c0; clear && c < c0 + length; ++c)
          clear = canvas.at(c, r) == kJudgedRoof || canvas.at(c, r) == kContextRoof;
        if (!clear) continue;
        for (int i = 0; i < length; ++i)
          canvas.at(c0 + i, r) = std::string(1, label[static_cast<std::size_t>(i)]);
        labelled_rows.insert(r);
      }
    }
  }
  // Slope names beside their lowest cell.
  for (const SlopeStart& start : slope_starts) {
    const std::string label = " " + start.name;
    int c0 = start.col;
    while (c0 < width && canvas.at(c0, start.row) == kSlope) ++c0;
    bool clear = c0 + static_cast<int>(label.size()) <= width;
    for (std::size_t i = 0; clear && i < label.size(); ++i)
      clear = canvas.at(c0 + static_cast<int>(i), start.row) == " ";
    if (!clear) continue;
    for (std::size_t i = 0; i < label.size(); ++i)
      canvas.at(c0 + static_cast<int>(i), start.row) = std::string(1, label[i]);
  }
  // Points last; two different points in one cell show as '*'.
  std::set<std::pair<int, int>> occupied;
  for (const Point& p : panel.points) {
    const int c = col(std::log10(p.ai)), r = row(std::log10(p.flops));
    if (!canvas.inside(c, r)) continue;
    const std::string symbol = point_symbol(p.kernel, p.level);
    std::string& cell = canvas.at(c, r);
    if (occupied.count({c, r}) && cell != symbol)
      cell = "*";
    else
      cell = symbol;
    occupied.insert({c, r});
  }

  // Frame: y labels (TFLOP/s) on decade rows, x ticks on decade columns.
  std::ostringstream out;
  out << "Roofline: " << panel.spec->name << " [" << panel.spec->key << "], log-log\n";
  if (!panel.notes.empty()) out << join(panel.notes, "; ") << "\n";
  constexpr int kLabelWidth = 8;
  std::map<int, std::string> y_labels;
  for (int e = static_cast<int>(panel.ly0); e <= static_cast<int>(panel.ly1); ++e)
    y_labels[row(e)] = decade_text(e - 12);
  out << std::string(kLabelWidth - 7, ' ') << "TFLOP/s\n";
  for (int r = 0; r < height; ++r) {
    auto it = y_labels.find(r);
    std::string label = it == y_labels.end() ? "" : it->second;
    out << std::string(static_cast<std::size_t>(
                           std::max(0, kLabelWidth - 1 - static_cast<int>(label.size()))),
                       ' ')
        << label << (it == y_labels.end() ? "│" : "┤");
    std::string line = canvas.line(r);
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out << line << "\n";
  }
  std::map<int, std::string> x_labels;
  for (int e = static_cast<int>(panel.lx0); e <= static_cast<int>(panel.lx1); ++e)
    x_labels[col(e)] = decade_text(e);
  out << std::string(kLabelWidth - 1, ' ') << "└";
  for (int c = 0; c < width; ++c) out << (x_labels.count(c) ? "┬" : "─");
  out << "\n";
  std::string tick_line(static_cast<std::size_t>(kLabelWidth + width + 12), ' ');
  int free_from = 0;
  for (const auto& [c, label] : x_labels) {
    int start = kLabelWidth + c - static_cast<int>(label.size()) / 2;
    start = std::max(start, free_from);
    if (start + static_cast<int>(label.size()) > static_cast<int>(tick_line.size())) break;
    tick_line.replace(static_cast<std::size_t>(start), label.size(), label);
    free_from = start + static_cast<int>(label.size()) + 1;
  }
  tick_line.replace(std::min(tick_line.size() - 9, static_cast<std::size_t>(std::max(
                                                       free_from + 1, kLabelWidth + width - 8))),
                    9, "FLOP/byte");
  while (!tick_line.empty() && tick_line.back() == ' ') tick_line.pop_back();
  out << tick_line << "\n";

  // Key.
  std::vector<std::string> roof_keys;
  for (const ComputeRoof& roof : panel.compute)
    roof_keys.push_back(std::string(roof.judged ? kJudgedRoof : kContextRoof) + " " + roof.label +
                        " " + peak_text(roof.peak_flops_per_second) +
                        (roof.judged ? "" : " (context)"));
  if (!roof_keys.empty()) out << "roofs:  " << join(roof_keys, "   ") << "\n";
  std::vector<std::string> slope_keys, ridge_keys;
  for (const MemoryRoof& roof : panel.memory)
    slope_keys.push_back(std::string(display_name(roof.level)) + " " +
                         bandwidth_text(roof.bandwidth_bytes_per_second));
  for (const RidgeMark& ridge : panel.ridges)
    if (panel.memory[ridge.memory].level == MemoryLevel::kDram)
      ridge_keys.push_back(number_text(ridge.ai, 3) + " FLOP/byte (" +
                           panel.compute[ridge.compute].label + ")");
  if (!slope_keys.empty()) out << "slopes: / " << join(slope_keys, ", ") << "\n";
  if (!ridge_keys.empty()) out << "ridge:  + " << join(ridge_keys, ", ") << "\n";
  std::vector<std::size_t> kernels;
  std::set<MemoryLevel> levels;
  for (const Point& p : panel.points) {
    if (std::find(kernels.begin(), kernels.end(), p.kernel) == kernels.end())
      kernels.push_back(p.kernel);
    levels.insert(p.level);
  }
  std::sort(kernels.begin(), kernels.end());
  if (!kernels.empty()) {
    std::vector<std::string> keys;
    for (std::size_t k : kernels) {
      std::string symbols;
      for (MemoryLevel level : kAllMemoryLevels)
        if (levels.count(level)) symbols += point_symbol(k, level);
      keys.push_back(symbols + " " + chart.kernels[k]);
    }
    std::vector<std::string> level_names;
    for (MemoryLevel level : kAllMemoryLevels)
      if (levels.count(level)) level_names.push_back(std::string(display_name(level)));
    out << "points: " << join(keys, ", ") << "  (symbols: intensity at " << join(level_names, ", ")
        << "; * several points)\n";
  }
  return out.str();
}

}  // namespace

std::string render_svg(const std::vector<Report>& reports) {
  return render_svg(reports, {});
}

std::string render_svg(const std::vector<Report>& reports, const PlotOptions& options) {
  const Chart chart = build_chart(reports, options);
  const std::size_t panels = std::max<std::size_t>(1, chart.panels.size());
  const double height = kPanelHeight * static_cast<double>(panels);
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
    const double offset = kPanelHeight * static_cast<double>(i);
    SvgPanel(chart, chart.panels[i], offset, out).draw();
  }
  out << "</svg>\n";
  return out.str();
}

std::string render_ascii_plot(const Report& report, int width, int height) {
  if (width < 20 || height < 8)
    throw InputError("the terminal chart needs at least 20 × 8 cells (got " +
                     std::to_string(width) + " × " + std::to_string(height) + ")");
  const std::vector<Report> reports = {report};  // the chart points into these
  const Chart chart = build_chart(reports, {});
  if (chart.panels.empty()) return "no rows to plot\n";
  std::string out;
  for (std::size_t i = 0; i < chart.panels.size(); ++i) {
    if (i > 0) out += "\n";
    out += ascii_panel(chart, chart.panels[i], width, height);
  }
  return out;
}

}  // namespace roofline
