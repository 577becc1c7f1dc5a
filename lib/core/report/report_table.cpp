// The terminal table of a report: one line per row, what judged it in the header, notes and
// warnings below. The columns are for reading, not parsing (that is what JSON and CSV are for).
#include <algorithm>
#include <cmath>
#include <sstream>

#include "lib/core/base/text.hpp"
#include "lib/core/model/roofline.hpp"
#include "lib/core/report/advice.hpp"
#include "lib/core/report/analysis.hpp"
#include "lib/core/report/merge.hpp"
#include "lib/core/report/report_io.hpp"
#include "lib/core/report/report_notes.hpp"

namespace roofline {
namespace {

std::string bytes_text(double bytes) {
  return std::isnan(bytes) ? "-" : format_si(bytes) + "B";
}

}  // namespace

std::string render_table(const Report& report, const TableOptions& options) {
  if (!report.origins.empty()) {
    // Rows from several devices or hosts: one table per context, in order of first appearance.
    std::string out;
    for (const Report& part : split_by_origin(report)) {
      if (!out.empty()) out += "\n";
      out += render_table(part, options);
    }
    return out;
  }
  std::ostringstream out;
  const ReportContext& c = report.context;
  // Header: what judged what.
  std::vector<std::string> spec_names;
  for (const GpuSpec& spec : report.specs) {
    const bool judges = std::any_of(report.rows.begin(), report.rows.end(),
                                    [&](const Row& row) { return row.spec_key == spec.key; });
    if (judges || report.rows.empty())
      spec_names.push_back(one_line(spec.name) + " [" + one_line(spec.key) + "]");
  }
  out << "cuflash-roofline " << one_line(c.command) << " — judged against "
      << join(spec_names, ", ")
      << (c.ceilings == "calibrated" ? " (measured ceilings: `calibrate`)" : "") << "\n";
  if (c.device)
    out << "measured on " << one_line(c.device->name) << " (" << c.device->sm_count << " SMs, CC "
        << one_line(c.device->compute_capability) << ")"
        << (c.projection
                ? " — PROJECTION: measured on this device, judged against another GPU's peaks"
                : "")
        << "\n";
  else
    out << "analytic model only: no GPU was used; time is the roofline floor\n";
  if (!c.counters.empty()) out << "counters: " << one_line(c.counters) << "\n";

  const std::vector<std::string> header = {
      "kernel",     "workload",       "time",          "GFLOP",     "TFLOP/s",
      "DRAM bytes", "DRAM GB/s",      "BW util",       "AI FLOP/B", "ceiling",
      "regime",     "ridge distance", "bound TFLOP/s", "of bound",  "XU roof TFLOP/s",
      "try next"};
  const std::vector<bool> right = {false, false, true,  true, true, true, true, true,
                                   true,  false, false, true, true, true, true, false};
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> notes;
  bool any_model = false;
  bool any_projected = false;
  for (const Row& row : report.rows) {
    const RowAnalysis a = analyze(row, report);
    const Workload& w = row.workload;
    // A profiled launch without an attention workload shows its shape, and counted FLOPs.
    const bool known = has_workload(row);
    // A dtype other than FP16 is named ("N=1024 full fwd bf16"), as Workload::label does.
    const std::string workload =
        known ? "N=" + std::to_string(w.seq_len) + (w.causal ? " causal " : " full ") +
                    std::string(to_string(w.pass)) +
                    (w.dtype == DType::kFp16 ? "" : " " + std::string(to_string(w.dtype)))
              : row.launch->shape_label();
    const double gflop = known ? a.algorithmic_flops : a.flops;
    const double tflops = known ? a.algorithmic_flops_per_second : a.flops_per_second;
    // A launch judged on bytes alone has no FLOP figure to print.
    auto flop_cell = [&](std::string text) { return a.bandwidth_only ? std::string("-") : text; };
    auto mark = [&](Source s) {
      if (s == Source::kModel) any_model = true;
      if (s == Source::kProjected) any_projected = true;
      return s == Source::kModel       ? std::string("*")
             : s == Source::kProjected ? std::string("~")
                                       : std::string();
    };
    if (!a.has_verdict) {
      rows.push_back({row.kernel, workload, std::string(to_string(row.status)), "", "", "", "", "",
                      "", "", row.message, "", "", "", "", ""});
      continue;
    }
    const double ms = a.time_seconds * 1e3;
    const std::optional<Advice> advice = advise(row, a, report.spec_for(row));
    rows.push_back({
        row.kernel,
        workload,
        format_fixed(ms, ms < 1 ? 3 : 2) + " ms" + mark(a.time_source),
        flop_cell(format_fixed(gflop / 1e9, 2) + (known ? "" : mark(a.flops_source))),
        flop_cell(format_fixed(tflops / 1e12, 1) + mark(a.time_source)),
        bytes_text(a.dram->bytes) + mark(a.dram->bytes_source),
        format_fixed(a.dram->achieved_bytes_per_second / 1e9, 0),
        format_fixed(100 * a.dram->bandwidth_utilisation, 0) + "%",
        flop_cell(format_fixed(a.dram->intensity, a.dram->intensity < 10 ? 2 : 0) +
                  mark(a.dram->bytes_source)),
        a.ceiling ? a.ceiling->label() : "-",
        a.regime,
        flop_cell(describe_ridge_factor(a.ridge_factor)),
        flop_cell(format_fixed(a.attainable_flops_per_second / 1e12, 1)),
        std::isfinite(a.fraction_of_bound) ? format_fixed(100 * a.fraction_of_bound, 0) + "%"
                                           : std::string("-"),
        // The exponential roof in FLOP units for this row's FLOPs per exponential.
        a.exp.present
            ? format_fixed(a.exp.roof_flops_per_second / 1e12, 1) + mark(a.exp.exponentials_source)
            : std::string("-"),
        advice ? advice->brief() : std::string("-"),
    });
    if (a.projected) notes.push_back(row.kernel + " " + row_label(row) + ": " + a.projection_note);
  }
  std::vector<std::size_t> widths(header.size());
  for (std::size_t i = 0; i < header.size(); ++i) widths[i] = display_width(header[i]);
  for (const auto& cells : rows)
    for (std::size_t i = 0; i < cells.size(); ++i)
      widths[i] = std::max(widths[i], display_width(one_line(cells[i])));
  auto line = [&](const std::vector<std::string>& cells, bool is_header) {
    std::string text;
    for (std::size_t i = 0; i < cells.size(); ++i) {
      if (i > 0) text += "  ";
      std::string cell = pad(one_line(cells[i]), widths[i], right[i] && !is_header);
      if (options.color && !is_header && i == 10 && !cells[i].empty())
        cell = (cells[i].rfind("memory", 0) == 0 ? "\033[33m"
                : cells[i].rfind("exp", 0) == 0  ? "\033[35m"
                                                 : "\033[32m") +
               cell + "\033[0m";
      text += cell;
    }
    while (!text.empty() && text.back() == ' ') text.pop_back();
    out << text << "\n";
  };
  line(header, true);
  for (const auto& cells : rows) line(cells, false);
  out << "try next: the lever the numbers point to, and the most it could gain (an upper bound: "
         "`show` and the JSON's analysis.advice say why).\n";
  out << "GFLOP and TFLOP/s: FlashAttention convention (4·B·H·N²·d forward, halved when causal, "
         "backward 2.5×). AI and regime: FLOPs on the kernel's own pipe over DRAM bytes. XU "
         "roof: the exponential unit's rate × the row's FLOPs per exponential.\n";
  if (any_model) out << "* model: not measured (analytic model or roofline floor)\n";
  if (any_projected)
    out << "~ projected: counted on the GPU measured, placed on this spec's roofs "
           "(docs/model.md, projection)\n";
  // Warnings go to stderr (report_warnings); fixed properties are footnotes, once per cause.
  for (const ReportNote& note : report_footnotes(report))
    out << "note: " << one_line(describe(note)) << "\n";
  for (const std::string& note : notes) out << "note: " << one_line(note) << "\n";
  return out.str();
}

}  // namespace roofline
