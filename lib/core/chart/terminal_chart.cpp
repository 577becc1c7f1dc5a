#include "lib/core/chart/terminal_chart.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <sstream>

#include "lib/core/base/errors.hpp"
#include "lib/core/base/text.hpp"
#include "lib/core/chart/chart.hpp"
#include "lib/core/chart/chart_labels.hpp"

namespace roofline {
namespace {

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

constexpr int kLabelWidth = 8;  // the y axis's labels and its line

std::string ascii_panel(const Chart& chart, const ChartPanel& panel, int width, int height,
                        std::size_t max_width) {
  // Text lines (titles, keys) wrap at the terminal's width; 0: never.
  auto say = [&](const std::string& text) { return wrap_words(text, max_width); };
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
  // Where the points will go: no name is written under one (a point drawn over a name garbles
  // both).
  std::set<std::pair<int, int>> point_cells;
  for (const ChartPoint& p : panel.points)
    point_cells.insert({col(std::log10(p.ai)), row(std::log10(p.flops))});
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
          clear = (canvas.at(c, r) == kJudgedRoof || canvas.at(c, r) == kContextRoof) &&
                  point_cells.count({c, r}) == 0;
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
      clear = canvas.at(c0 + static_cast<int>(i), start.row) == " " &&
              point_cells.count({c0 + static_cast<int>(i), start.row}) == 0;
    if (!clear) continue;
    for (std::size_t i = 0; i < label.size(); ++i)
      canvas.at(c0 + static_cast<int>(i), start.row) = std::string(1, label[i]);
  }
  // Points last; two different points in one cell show as '*'.
  std::set<std::pair<int, int>> occupied;
  for (const ChartPoint& p : panel.points) {
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
  out << say("Roofline: " + one_line(panel.spec->name) + " [" + one_line(panel.spec->key) + "]" +
             (panel.device.empty() ? "" : ", measured on " + panel.device) + ", log-log");
  if (!panel.notes.empty()) out << say(join(panel.notes, "; "));
  std::map<int, std::string> y_labels;
  const int y_step = decade_step(panel.ly0, panel.ly1, std::max(1, height / 2));
  for (int e = static_cast<int>(panel.ly0); e <= static_cast<int>(panel.ly1); e += y_step)
    y_labels[row(e)] = decade_text(e - 12);
  out << say(std::string(kLabelWidth - 7, ' ') + "TFLOP/s" +
             (chart.flops == FlopConvention::kPipe ? " (FLOPs on the kernel's pipe)"
                                                   : " (FlashAttention FLOPs)"));
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
  const int x_step = decade_step(panel.lx0, panel.lx1, std::max(1, width / 8));
  for (int e = static_cast<int>(panel.lx0); e <= static_cast<int>(panel.lx1); e += x_step)
    x_labels[col(e)] = decade_text(e);
  out << std::string(kLabelWidth - 1, ' ') << "└";
  for (int c = 0; c < width; ++c) out << (x_labels.count(c) ? "┬" : "─");
  out << "\n";
  // Room for the last tick's label and the axis name, within the terminal's width.
  std::size_t tick_width = static_cast<std::size_t>(kLabelWidth + width + 12);
  if (max_width > 0) tick_width = std::max<std::size_t>(std::min(tick_width, max_width), 9);
  std::string tick_line(tick_width, ' ');
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
  if (!roof_keys.empty()) out << say("roofs:  " + join(roof_keys, "   "));
  std::vector<std::string> slope_keys, ridge_keys;
  for (const MemoryRoof& roof : panel.memory)
    slope_keys.push_back(std::string(display_name(roof.level)) + " " +
                         bandwidth_text(roof.bandwidth_bytes_per_second));
  for (const RidgeMark& ridge : panel.ridges)
    if (panel.memory[ridge.memory].level == MemoryLevel::kDram)
      ridge_keys.push_back(number_text(ridge.ai, 3) + " FLOP/byte (" +
                           panel.compute[ridge.compute].label + ")");
  if (!slope_keys.empty()) out << say("slopes: / " + join(slope_keys, ", "));
  if (!ridge_keys.empty()) out << say("ridge:  + " + join(ridge_keys, ", "));
  std::vector<std::size_t> kernels;
  std::set<MemoryLevel> levels;
  for (const ChartPoint& p : panel.points) {
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
    out << say("points: " + join(keys, ", ") + "  (symbols: intensity at " +
               join(level_names, ", ") + "; * several points)");
  }
  return out.str();
}

// The chart's texts that come from reports and specs (kernel, device and ceiling names, notes)
// with control characters escaped by one_line(): a terminal would act on ESC and friends.
void escape_texts(Chart& chart) {
  for (std::string& kernel : chart.kernels) kernel = one_line(kernel);
  for (ChartPanel& panel : chart.panels) {
    panel.device = one_line(panel.device);
    for (std::string& note : panel.notes) note = one_line(note);
    for (ComputeRoof& roof : panel.compute) roof.label = one_line(roof.label);
  }
}

}  // namespace

std::string render_ascii_plot(const Report& report, int width, int height, FlopConvention flops,
                              std::size_t max_width) {
  return render_ascii_plot(JudgedReport(report), width, height, flops, max_width);
}

std::string render_ascii_plot(const JudgedReport& report, int width, int height,
                              FlopConvention flops, std::size_t max_width) {
  // The plot narrows to the terminal (its axis labels beside it), down to the 20 cells it needs.
  if (max_width > 0)
    width = std::min(width, std::max(20, static_cast<int>(max_width) - kLabelWidth - 1));
  if (width < 20 || height < 8)
    throw InputError("the terminal chart needs at least 20 × 8 cells (got " +
                     std::to_string(width) + " × " + std::to_string(height) + ")");
  PlotOptions options;
  options.flops = flops;
  Chart chart = build_chart(std::span(&report, 1), options);
  escape_texts(chart);
  if (chart.panels.empty()) return "no rows to plot\n";
  std::string out;
  for (std::size_t i = 0; i < chart.panels.size(); ++i) {
    if (i > 0) out += "\n";
    out += ascii_panel(chart, chart.panels[i], width, height, max_width);
  }
  return out;
}

}  // namespace roofline
