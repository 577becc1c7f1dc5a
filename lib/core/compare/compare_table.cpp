#include <algorithm>
#include <sstream>
#include <vector>

#include "lib/core/base/text.hpp"
#include "lib/core/compare/compare_format.hpp"
#include "lib/core/compare/compare_writers.hpp"

namespace roofline {

std::string render_compare_table(const Comparison& c) {
  std::ostringstream out;
  out << "cuflash-roofline compare\n"
      << "base: " << side_text(c.base_origin, c.base_device, c.base_sm_clock_mhz) << "\n"
      << "head: " << side_text(c.head_origin, c.head_device, c.head_sm_clock_mhz) << "\n";
  for (const std::string& warning : c.warnings) out << "warning: " << one_line(warning) << "\n";
  for (const std::string& note : c.notes) out << "note: " << one_line(note) << "\n";

  const std::vector<std::string> header = {"kernel", "workload", "base",    "head",        "change",
                                           "noise",  "detects",  "verdict", "bytes/FLOPs", "note"};
  const std::vector<bool> right = {false, false, true,  true,  true,
                                   false, true,  false, false, false};
  std::vector<std::vector<std::string>> cells;
  for (const RowComparison& row : c.rows) {
    std::vector<std::string> line = {kernel_cell(row), row.workload.label()};
    if (row.time) {
      const TimeComparison& t = *row.time;
      line.push_back(time_cell(t.base.median_seconds, t.base.relative_spread));
      line.push_back(time_cell(t.head.median_seconds, t.head.relative_spread));
      line.push_back(signed_percent(t.relative_change));
      line.push_back(noise_cell(t));
      line.push_back(detectable_cell(t));
    } else {
      line.insert(line.end(), {"-", "-", "-", "-", "-"});
    }
    std::string verdict(to_string(row.verdict));
    if (row.regressed) verdict += " !";
    line.push_back(verdict);
    line.push_back(quantities_cell(row));
    line.push_back(row_note(row));
    cells.push_back(std::move(line));
  }
  std::vector<std::size_t> widths(header.size());
  for (std::size_t i = 0; i < header.size(); ++i) widths[i] = display_width(header[i]);
  for (const auto& line : cells)
    for (std::size_t i = 0; i < line.size(); ++i)
      widths[i] = std::max(widths[i], display_width(line[i]));
  auto emit = [&](const std::vector<std::string>& line, bool is_header) {
    std::string text;
    for (std::size_t i = 0; i < line.size(); ++i) {
      if (i > 0) text += "  ";
      text += pad(line[i], widths[i], right[i] && !is_header);
    }
    while (!text.empty() && text.back() == ' ') text.pop_back();
    out << text << "\n";
  };
  emit(header, true);
  for (const auto& line : cells) emit(line, false);
  for (const UnmatchedRow& row : c.only_base)
    out << "only in base: " << row_name(row.kernel, row.workload) << " [" << one_line(row.spec_key)
        << "]\n";
  for (const UnmatchedRow& row : c.only_head)
    out << "only in head: " << row_name(row.kernel, row.workload) << " [" << one_line(row.spec_key)
        << "]\n";
  out << method_line(c) << "\n";
  if (c.regressed())
    out << "!: regressed (slower, failed, or more bytes or FLOPs"
        << (c.options.fail_on_more_work ? "" : " without being significantly faster") << ")\n";
  out << summary_line(c) << "\n";
  if (const std::string line = detectable_line(c); !line.empty()) out << line << "\n";
  out << (c.regressed() ? "result: regression (exit 1)" : "result: no regression (exit 0)") << "\n";
  return out.str();
}

}  // namespace roofline
