// The roofline chart as data, independent of how it is drawn: panels (one per GPU spec the rows
// are judged against, and per device in a merged report of several devices), their memory slopes
// and compute roofs, ridge points, one point per row and memory level, arrows between matched rows,
// and the axis ranges. svg_chart and terminal_chart draw it.
//
// Both axes are log-log: x is arithmetic intensity in FLOP/byte, y is performance in FLOP/s.
// Axis ranges are whole decades covering every point, every ridge point and every ceiling.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include <optional>
#include <span>

#include "lib/core/compare/compare.hpp"
#include "lib/core/report/report.hpp"
#include "lib/core/verdict/flop_convention.hpp"
#include "lib/core/verdict/judged_report.hpp"

namespace roofline {

struct PlotOptions {
  // Arrows between two kernels of each report (base kernel → head kernel, matched by workload
  // and spec), instead of between consecutive reports. Both empty: arrows between reports.
  std::string kernel_base;
  std::string kernel_head;
  // One name per report for the legend (file names); empty: "base"/"head" for two reports,
  // "report 1", ... otherwise.
  std::vector<std::string> report_labels;
  // The FLOPs of the points (flop_convention.hpp), as the table beside the chart prints them.
  // The roofs stay the hardware's (pipe FLOPs), so in the FlashAttention convention a row
  // whose pipe executes more FLOPs than that count sits below its roofs by the ratio.
  FlopConvention flops = FlopConvention::kAlgorithmic;
};

struct MemoryRoof {
  MemoryLevel level;
  double bandwidth_bytes_per_second;
  // "" for the judging spec's slopes; "spec sheet" or "calibrated" for those of its twin
  // (calibration.hpp), drawn for context.
  std::string twin;
};

struct ComputeRoof {
  std::string id;  // "tensor_fp16.mma_sync"
  std::string label;
  double peak_flops_per_second;
  bool judged;  // a row is judged against it (else drawn for context)
};

struct RidgeMark {
  std::size_t compute;  // index into ChartPanel::compute
  std::size_t memory;   // index into ChartPanel::memory
  double ai;            // FLOP/byte
  double flops;         // FLOP/s
};

struct ChartPoint {
  std::size_t report;
  std::size_t row;
  std::size_t kernel;  // index into Chart::kernels
  std::string kernel_name;
  Workload workload;
  std::string row_text;    // row_label(): the workload, or a profiled launch's shape
  std::string point_text;  // beside the point: "4k", or "#12" for a launch without workload
  MemoryLevel level;
  Source bytes_source;
  double ai;     // FLOP/byte at this level, in the chart's FLOP convention
  double flops;  // FLOP/s in the chart's FLOP convention
  std::string regime;
  // The row's share of its report's measured kernel time (0 when the time is not measured):
  // the marker's area follows it.
  double time_share = 0;
  // A tail-bound row's tail roof (FLOP/s, the pipe's FLOPs as the compute roofs): the pipe's
  // roof × the share of the grid's SM time that is busy; 0 when the tail does not bind.
  double tail_roof = 0;
};

// A row judged on its bytes alone (a profiled launch without counted FLOPs: analysis.hpp's
// bandwidth_only) has no place on a roofline, whose x is FLOPs per byte: it is drawn in the
// panel's bandwidth chart, one point per memory level, at the bytes it moved there and the
// rate it moved them at.
struct BandwidthPoint {
  std::size_t report;
  std::size_t row;
  std::size_t kernel;  // index into Chart::kernels
  std::string kernel_name;
  std::string row_text;    // row_label()
  std::string point_text;  // "#12": the launch index
  MemoryLevel level;
  double bytes;
  double bytes_per_second;
  std::string regime;
};

struct ChartArrow {
  std::size_t from;  // indices into ChartPanel::points (DRAM level)
  std::size_t to;
  double change;  // head FLOP/s ÷ base FLOP/s − 1 (as plotted)
  // compare's verdict on the pair (compare_reports at its defaults), so that the chart and
  // `compare` never disagree: no change is shown on a row compare calls `same`. Empty where
  // compare cannot judge the reports (untimed model reports, other devices): Chart::arrow_note
  // says why.
  std::optional<Verdict> verdict;
};

struct ChartPanel {
  const GpuSpec* spec = nullptr;  // points into the reports given to build_chart
  // The device of a panel of a merged report that holds several devices ("" otherwise: rows of
  // every device judged against `spec` share the panel).
  std::string device;
  std::vector<MemoryRoof> memory;    // ascending bandwidth
  std::vector<ComputeRoof> compute;  // judged first, then context; descending peak within each
  std::vector<RidgeMark> ridges;
  std::vector<ChartPoint> points;
  std::vector<BandwidthPoint> bandwidth_points;  // rows without FLOPs; drawn apart
  std::vector<ChartArrow> arrows;
  std::vector<std::string> notes;  // where the points came from
  // log10 of the axis ranges: whole numbers, finite, at most kMaxAxisDecades apart.
  double lx0 = 0, lx1 = 1;  // x, FLOP/byte
  double ly0 = 0, ly1 = 1;  // y, FLOP/s
  // log10 of the bandwidth chart's ranges (with bandwidth_points): bytes and bytes/s.
  double bx0 = 0, bx1 = 1;
  double by0 = 0, by1 = 1;
};

// Every value on a chart is a finite positive double, so an axis spans at most ~640 decades.
inline constexpr int kMaxAxisDecades = 640;
// Decades between labelled ticks so that an axis from `lo` to `hi` (log10) has at most
// `max_ticks` + 1 of them: 1 for ordinary charts.
int decade_step(double lo, double hi, int max_ticks);

struct Chart {
  std::vector<ChartPanel> panels;
  std::vector<std::string> kernels;
  std::vector<std::string> report_labels;
  std::size_t report_count = 0;
  bool kernel_pair = false;
  std::string kernel_base, kernel_head;
  FlopConvention flops = FlopConvention::kAlgorithmic;
  // Why some arrows carry no verdict (compare's message); empty when all do.
  std::string arrow_note;
};

// The chart of `reports`: a pure function of its inputs. The chart points into `reports` (specs),
// which must outlive it. Throws InputError when a row names a spec its report does not embed.
Chart build_chart(std::span<const JudgedReport> reports, const PlotOptions& options);

}  // namespace roofline
