#include "lib/core/chart/chart.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>

#include "lib/core/base/errors.hpp"
#include "lib/core/base/text.hpp"
#include "lib/core/chart/chart_labels.hpp"
#include "lib/core/compare/compare.hpp"
#include "lib/core/compare/row_match.hpp"
#include "lib/core/report/merge.hpp"
#include "lib/core/verdict/analysis.hpp"
#include "lib/core/verdict/flop_convention.hpp"
#include "lib/core/writers/summary.hpp"

namespace roofline {
namespace {

bool positive(double value) {
  return std::isfinite(value) && value > 0;
}

// Exponential roofs per panel (one per FLOPs-per-exponential ratio): a sweep over head dims and
// passes gives a handful; more would bury the chart.
constexpr long kMaxExpRoofs = 4;

// The spec sheet of a calibrated spec, or the calibrated twin of a sheet, in the report that
// carries `spec`; nullptr when there is none.
// The judged reports a chart draws, read as reports.
class Reports {
 public:
  explicit Reports(std::span<const JudgedReport> judged) : judged_(judged) {}
  const Report& operator[](std::size_t i) const { return judged_[i].report(); }
  std::size_t size() const { return judged_.size(); }

 private:
  std::span<const JudgedReport> judged_;
};

const GpuSpec* twin_of(const Reports& reports, const GpuSpec& spec) {
  for (std::size_t r = 0; r < reports.size(); ++r) {
    const Report& report = reports[r];
    const bool holds = std::any_of(report.specs.begin(), report.specs.end(),
                                   [&](const GpuSpec& s) { return &s == &spec; });
    if (!holds) continue;
    for (const GpuSpec& other : report.specs)
      if (&other != &spec &&
          (other.key == spec.calibrated_from || other.calibrated_from == spec.key))
        return &other;
  }
  return nullptr;
}

const GpuSpec* find_spec(const Report& report, const std::string& key) {
  for (const GpuSpec& spec : report.specs)
    if (spec.key == key) return &spec;
  return nullptr;
}

std::string describe_source(const ReportContext& c) {
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

}  // namespace

int decade_step(double lo, double hi, int max_ticks) {
  const double span = std::clamp(hi - lo, 0.0, static_cast<double>(kMaxAxisDecades));
  return std::max(1, static_cast<int>(std::ceil(span / std::max(1, max_ticks))));
}

Chart build_chart(std::span<const JudgedReport> judged, const PlotOptions& options) {
  const Reports reports(judged);
  Chart chart;
  chart.report_count = reports.size();
  chart.kernel_pair = !options.kernel_base.empty() || !options.kernel_head.empty();
  chart.kernel_base = options.kernel_base.empty() ? options.kernel_head : options.kernel_base;
  chart.kernel_head = options.kernel_head.empty() ? options.kernel_base : options.kernel_head;
  chart.report_labels = options.report_labels;
  chart.flops = options.flops;
  for (std::size_t r = chart.report_labels.size(); r < reports.size(); ++r)
    chart.report_labels.push_back(reports.size() == 2 ? (r == 0 ? "base" : "head")
                                                      : "report " + std::to_string(r + 1));
  auto label_of = [&](std::size_t r) { return chart.report_labels[r]; };

  // Which panel each row is drawn in: its own spec's (and, in a merged report of several
  // devices, its device's), or, when it is matched with a row of the previous report, that
  // row's panel, so that arrows stay within one chart.
  std::map<std::pair<std::string, std::string>, std::size_t> panel_of_key;
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
      const std::string& spec_key = report.rows[i].spec_key;
      const std::string device =
          report.origins.empty() ? std::string() : device_name_of(report, report.rows[i]);
      const auto key = std::pair{spec_key, device};
      auto it = panel_of_key.find(key);
      if (it == panel_of_key.end()) {
        ChartPanel panel;
        panel.spec = find_spec(report, spec_key);
        panel.device = device;
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
    // (panel, point, measured time) of this report's points: their shares once all are known.
    struct Timed {
      std::size_t panel, point;
      double seconds;
    };
    std::vector<Timed> timed;
    double report_seconds = 0;
    for (std::size_t i = 0; i < report.rows.size(); ++i) {
      const Row& row = report.rows[i];
      ChartPanel& panel = chart.panels[panel_of[r][i]];
      const std::string note = describe_source(report.context_of(row));
      if (std::find(panel.notes.begin(), panel.notes.end(), note) == panel.notes.end())
        panel.notes.push_back(note);
      // A CUDA graph launch whose nodes have rows of their own: its time and bytes are theirs,
      // charted once, by node (as the summary counts them).
      if (is_graph_parent(row)) continue;
      const RowAnalysis& a = judged[r].at(i);
      if (!a.has_verdict) continue;
      if (a.ceiling != nullptr && positive(a.ceiling->peak_tflops * 1e12) &&
          judged_ids[panel_of[r][i]].insert(a.ceiling->id()).second)
        panel.compute.push_back(
            {a.ceiling->id(), a.ceiling->label(), a.ceiling->peak_tflops * 1e12, true});
      // The exponential unit's roof for this row's FLOPs per exponential (one line per ratio).
      if (a.exp.present && positive(a.exp.roof_flops_per_second)) {
        const std::string ratio = format_fixed(a.exp.flops_per_exponential, 0);
        const std::string id = "xu@" + ratio;
        const auto same = [&](const ComputeRoof& roof) { return roof.id == id; };
        if (std::none_of(panel.compute.begin(), panel.compute.end(), same) &&
            std::count_if(panel.compute.begin(), panel.compute.end(), [](const ComputeRoof& roof) {
              return roof.id.rfind("xu@", 0) == 0;
            }) < kMaxExpRoofs)
          panel.compute.push_back(
              {id, "XU exp2 × " + ratio + " FLOP/exp", a.exp.roof_flops_per_second, false});
      }
      auto kernel_it = std::find(chart.kernels.begin(), chart.kernels.end(), row.kernel);
      if (kernel_it == chart.kernels.end())
        kernel_it = chart.kernels.insert(chart.kernels.end(), row.kernel);
      const auto kernel_index = static_cast<std::size_t>(kernel_it - chart.kernels.begin());
      const bool measured = a.time_source == Source::kMeasured && positive(a.time_seconds);
      if (measured) report_seconds += a.time_seconds;
      if (a.bandwidth_only) {
        for (const LevelAnalysis& level : a.levels)
          if (positive(level.bytes) && positive(level.achieved_bytes_per_second))
            panel.bandwidth_points.push_back(
                {r, i, kernel_index, row.kernel, row_label(row),
                 row.launch ? "#" + std::to_string(row.launch->index) : std::string(), level.level,
                 level.bytes, level.achieved_bytes_per_second, a.regime});
        continue;
      }
      // The point where the table puts the row: its FLOPs in the chart's convention.
      const ViewFlops view = view_flops(row, a, options.flops);
      const double rate = a.flops_per_second * view.scale;
      if (options.flops == FlopConvention::kAlgorithmic && std::fabs(view.scale - 1) > 0.01) {
        const std::string scaled =
            "points count FlashAttention FLOPs, the roofs the pipe's: a kernel that executes "
            "more FLOPs than that count (standard causal: the whole square) sits below its roofs "
            "by the ratio (--flops pipe plots the pipe's)";
        if (std::find(panel.notes.begin(), panel.notes.end(), scaled) == panel.notes.end())
          panel.notes.push_back(scaled);
      }
      for (const LevelAnalysis& level : a.levels) {
        if (!positive(level.intensity * view.scale) || !positive(rate)) continue;
        if (level.level == MemoryLevel::kDram) dram_point[r][i] = panel.points.size();
        if (measured) timed.push_back({panel_of[r][i], panel.points.size(), a.time_seconds});
        panel.points.push_back({r, i, kernel_index, row.kernel, row.workload, row_label(row),
                                has_workload(row) ? seq_text(row.workload.seq_len)
                                                  : "#" + std::to_string(row.launch->index),
                                level.level, level.bytes_source, level.intensity * view.scale, rate,
                                a.regime});
        if (a.tail_bound && positive(a.tail_roof_flops_per_second))
          panel.points.back().tail_roof = a.tail_roof_flops_per_second;
      }
      if (a.tail_bound && positive(a.tail_roof_flops_per_second)) {
        const std::string tail =
            "dashed ticks: the tail roof of a tail-bound row (its pipe's roof × the share of the "
            "grid's SM time that is busy), above its point";
        if (std::find(panel.notes.begin(), panel.notes.end(), tail) == panel.notes.end())
          panel.notes.push_back(tail);
      }
    }
    for (const Timed& t : timed)
      chart.panels[t.panel].points[t.point].time_share = t.seconds / report_seconds;
  }

  // Arrows: between consecutive reports, or between two kernels of each report, with
  // compare's verdict on each pair where compare can judge the two reports.
  auto add_arrows = [&](std::size_t rb, std::size_t rh, const RowMatching& matching) {
    std::map<std::pair<std::size_t, std::size_t>, Verdict> verdicts;
    try {
      CompareOptions compare;
      compare.kernel_base = options.kernel_base;
      compare.kernel_head = options.kernel_head;
      compare.group_launches = false;  // an arrow per launch, as matched above
      for (const RowComparison& row :
           compare_reports(reports[rb], reports[rh], compare, label_of(rb), label_of(rh)).rows)
        verdicts[{row.base_index, row.head_index}] = row.verdict;
    } catch (const InputError& error) {
      if (chart.arrow_note.empty())
        chart.arrow_note = "arrows without a verdict: " + first_line(error.what());
    }
    for (const RowMatch& m : matching.matched) {
      const auto& from = dram_point[rb][m.base_index];
      const auto& to = dram_point[rh][m.head_index];
      if (!from || !to || panel_of[rb][m.base_index] != panel_of[rh][m.head_index]) continue;
      ChartPanel& panel = chart.panels[panel_of[rb][m.base_index]];
      std::optional<Verdict> verdict;
      if (auto it = verdicts.find({m.base_index, m.head_index}); it != verdicts.end())
        verdict = it->second;
      panel.arrows.push_back(
          {*from, *to, panel.points[*to].flops / panel.points[*from].flops - 1, verdict});
    }
  };
  if (chart.kernel_pair) {
    const KernelPair pair{options.kernel_base, options.kernel_head};
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
  for (ChartPanel& panel : chart.panels) {
    const GpuSpec& spec = *panel.spec;
    // Only roofs with a finite, positive value are drawn (a spec could hold 1e300 GB/s), so
    // that every logarithm below is finite and the axes span a bounded number of decades.
    for (const MemoryLevelSpec& level : spec.memory)
      if (positive(level.bandwidth_gbps * 1e9))
        panel.memory.push_back({level.level, level.bandwidth_gbps * 1e9, ""});
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
      if (c == nullptr || !positive(c->peak_tflops * 1e12)) return;
      for (const ComputeRoof& roof : panel.compute)
        if (roof.id == c->id()) return;
      panel.compute.push_back({c->id(), c->label(), c->peak_tflops * 1e12, false});
    };
    if (panel.compute.empty()) add_context(spec.ceiling(ComputePath::kTensorFp16));
    add_context(spec.ceiling(ComputePath::kFp32));
    // The twin (spec sheet beside calibrated ceilings, or the reverse): its slopes and its
    // figures for the judged ceilings, drawn for context.
    if (const GpuSpec* twin = twin_of(reports, spec)) {
      const std::string which = twin->calibrated_from.empty() ? "spec sheet" : "calibrated";
      for (const MemoryLevelSpec& level : twin->memory)
        if (positive(level.bandwidth_gbps * 1e9) &&
            (spec.level(level.level) == nullptr ||
             spec.level(level.level)->bandwidth_gbps != level.bandwidth_gbps))
          panel.memory.push_back({level.level, level.bandwidth_gbps * 1e9, which});
      std::stable_sort(panel.memory.begin(), panel.memory.end(),
                       [](const MemoryRoof& a, const MemoryRoof& b) {
                         return a.bandwidth_bytes_per_second < b.bandwidth_bytes_per_second;
                       });
      const std::size_t own = panel.compute.size();
      for (std::size_t c = 0; c < own; ++c) {
        const ComputeCeiling* mine = nullptr;
        for (const ComputeCeiling& entry : spec.compute)
          if (entry.id() == panel.compute[c].id) mine = &entry;
        const ComputeCeiling* other = mine ? twin->ceiling(mine->path, mine->instruction) : nullptr;
        if (other != nullptr && other->peak_tflops != mine->peak_tflops &&
            positive(other->peak_tflops * 1e12))
          panel.compute.push_back({other->id() + (which == "spec sheet" ? "@sheet" : "@calibrated"),
                                   other->label() + " (" + which + ")", other->peak_tflops * 1e12,
                                   false});
      }
    }
    for (std::size_t c = 0; c < panel.compute.size(); ++c) {
      if (!panel.compute[c].judged) continue;
      for (std::size_t m = 0; m < panel.memory.size(); ++m) {
        if (!panel.memory[m].twin.empty()) continue;
        const double peak = panel.compute[c].peak_flops_per_second;
        const double ai = peak / panel.memory[m].bandwidth_bytes_per_second;
        if (positive(ai)) panel.ridges.push_back({c, m, ai, peak});
      }
    }
    std::vector<double> xs, ys;
    for (const ChartPoint& p : panel.points) {
      xs.push_back(std::log10(p.ai));
      ys.push_back(std::log10(p.flops));
    }
    for (const RidgeMark& ridge : panel.ridges) xs.push_back(std::log10(ridge.ai));
    for (const ComputeRoof& roof : panel.compute) {
      ys.push_back(std::log10(roof.peak_flops_per_second));
      if (panel.memory.empty()) continue;
      const double ai =
          roof.peak_flops_per_second / panel.memory.front().bandwidth_bytes_per_second;
      if (positive(ai)) xs.push_back(std::log10(ai));
    }
    if (xs.empty()) xs = {0, 2};
    if (ys.empty()) ys = {12, 15};
    // Whole decades; the top decade ends at the highest roof (its label goes below the line).
    std::tie(panel.lx0, panel.lx1) = decade_range(xs, 0.05, 0.05, 3, true);
    std::tie(panel.ly0, panel.ly1) = decade_range(ys, 0.15, 0.0, 2, false);
    if (!panel.bandwidth_points.empty()) {
      std::set<std::pair<std::size_t, std::size_t>> rows;
      for (const BandwidthPoint& p : panel.bandwidth_points) rows.insert({p.report, p.row});
      panel.notes.push_back(
          std::to_string(rows.size()) +
          " launches without counted FLOPs: off the roofline, on the SVG's bandwidth chart");
      std::vector<double> bx, by;
      for (const BandwidthPoint& p : panel.bandwidth_points) {
        bx.push_back(std::log10(p.bytes));
        by.push_back(std::log10(p.bytes_per_second));
      }
      for (const MemoryRoof& roof : panel.memory)
        by.push_back(std::log10(roof.bandwidth_bytes_per_second));
      std::tie(panel.bx0, panel.bx1) = decade_range(bx, 0.05, 0.05, 2, false);
      std::tie(panel.by0, panel.by1) = decade_range(by, 0.05, 0.05, 2, false);
    }
  }
  return chart;
}

}  // namespace roofline
