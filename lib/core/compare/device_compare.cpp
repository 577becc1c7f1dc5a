#include "lib/core/compare/device_compare.hpp"

#include <cmath>
#include <sstream>

#include "lib/core/base/errors.hpp"
#include "lib/core/base/text.hpp"
#include "lib/core/compare/row_match.hpp"
#include "lib/core/report/merge.hpp"
#include "lib/core/verdict/analysis.hpp"

namespace roofline {
namespace {

DeviceSide side_of(const Report& report, const Row& row) {
  const RowAnalysis a = analyze(row, report.spec_for(row), report.context_of(row).projection);
  DeviceSide side;
  side.status = std::string(to_string(row.status));
  side.judged = a.has_verdict;
  if (!a.has_verdict) return side;
  side.seconds = a.time_seconds;
  side.tflops_per_second = a.algorithmic_flops_per_second / 1e12;
  side.regime = a.regime;
  side.fraction_of_bound = a.fraction_of_bound;
  return side;
}

std::string device_of(const Report& report) {
  std::string name;
  for (const Row& row : report.rows) {
    const std::string device = device_name_of(report, row);
    if (!name.empty() && device != name) return "several devices";
    name = device;
  }
  return name.empty() ? "analytic model" : name;
}

}  // namespace

DeviceComparison compare_devices(const Report& base, const Report& head,
                                 const std::string& base_origin, const std::string& head_origin) {
  DeviceComparison c;
  c.base_origin = base_origin;
  c.head_origin = head_origin;
  c.base_device = device_of(base);
  c.head_device = device_of(head);
  const RowMatching matching = match_rows(base, head, {}, base_origin, head_origin);
  if (matching.matched.empty())
    throw InputError(base_origin + " and " + head_origin +
                     " have no row in common (kernel and workload)");
  for (const RowMatch& m : matching.matched) {
    const Row& b = base.rows[m.base_index];
    const Row& h = head.rows[m.head_index];
    DeviceRowComparison row;
    row.kernel = b.kernel;
    row.workload = row_label(b);
    row.base = side_of(base, b);
    row.head = side_of(head, h);
    row.speedup = row.base.judged && row.head.judged && row.head.seconds > 0
                      ? row.base.seconds / row.head.seconds
                      : std::nan("");
    c.rows.push_back(std::move(row));
  }
  c.only_base = matching.only_base.size();
  c.only_head = matching.only_head.size();
  return c;
}

const std::vector<TableColumn>& device_comparison_columns() {
  // What a narrow terminal keeps: which row, and the speed-up; the roofs' prose goes first.
  static const std::vector<TableColumn> columns = {
      {"kernel", "kernel", false, 0, 10},          {"workload", "workload", false, 0, 16},
      {"base-time", "base time", true, 2, 0},      {"head-time", "head time", true, 2, 0},
      {"speed-up", "speed-up", true, 0, 0},        {"base-tflops", "base TFLOP/s", true, 3, 0},
      {"head-tflops", "head TFLOP/s", true, 3, 0}, {"base-roof", "base roof", false, 5, 12, 4},
      {"head-roof", "head roof", false, 5, 12, 4},
  };
  return columns;
}

std::string render_device_comparison_table(const DeviceComparison& c, const TableFit& fit) {
  std::ostringstream out;
  auto say = [&](const std::string& text) { out << wrap_words(one_line(text), fit.max_width); };
  say("base: " + c.base_origin + " (" + c.base_device + ")");
  say("head: " + c.head_origin + " (" + c.head_device + ")");
  const std::vector<TableColumn>& columns = device_comparison_columns();
  std::vector<std::vector<std::string>> rows;
  auto ms = [](const DeviceSide& s) {
    return s.judged ? format_fixed(s.seconds * 1e3, s.seconds < 1e-3 ? 3 : 2) + " ms" : s.status;
  };
  auto roof = [](const DeviceSide& s) {
    return s.judged ? s.regime + ", " + format_fixed(100 * s.fraction_of_bound, 0) + "% of bound"
                    : std::string("-");
  };
  for (const DeviceRowComparison& r : c.rows)
    rows.push_back({r.kernel, r.workload, ms(r.base), ms(r.head),
                    std::isnan(r.speedup) ? "-" : format_fixed(r.speedup, 2) + "x",
                    r.base.judged ? format_fixed(r.base.tflops_per_second, 1) : "-",
                    r.head.judged ? format_fixed(r.head.tflops_per_second, 1) : "-", roof(r.base),
                    roof(r.head)});
  const FittedTable table = fit_table(columns, rows, fit);
  out << table.text << fit_footer(table, fit.max_width);
  say("speed-up: base time / head time (above 1: the head device is faster); a comparison of "
      "devices, not a regression verdict.");
  if (c.only_base > 0 || c.only_head > 0)
    say(std::to_string(c.only_base) + " rows only in base, " + std::to_string(c.only_head) +
        " only in head");
  return out.str();
}

}  // namespace roofline
