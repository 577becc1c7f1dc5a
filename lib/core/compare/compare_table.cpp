#include <algorithm>
#include <sstream>
#include <vector>

#include "lib/core/base/text.hpp"
#include "lib/core/compare/compare_format.hpp"
#include "lib/core/compare/compare_writers.hpp"

namespace roofline {

const std::vector<TableColumn>& compare_table_columns() {
  // What a narrow terminal keeps: which row, by how much, and the verdict (its "!" marks a
  // regression); the note (long prose) moves below the table first.
  static const std::vector<TableColumn> columns = {
      {"kernel", "kernel", false, 0, 10},
      {"workload", "workload", false, 0, 16},
      {"base", "base", true, 3, 0},
      {"head", "head", true, 3, 0},
      {"change", "change", true, 0, 0},
      {"noise", "noise", false, 5, 0},
      {"detects", "detects", true, 6, 0},
      {"verdict", "verdict", false, 0, 0},
      {"bytes-flops", "bytes/FLOPs", false, 4, 8, 5},
      {"note", "note", false, 7, 0},
  };
  return columns;
}

std::string render_compare_table(const Comparison& c, const TableFit& fit) {
  std::ostringstream out;
  auto say = [&](const std::string& text) { out << wrap_words(one_line(text), fit.max_width); };
  out << "cuflash-roofline compare\n";
  say("base: " + side_text(c.base_origin, c.base_device, c.base_sm_clock_mhz));
  say("head: " + side_text(c.head_origin, c.head_device, c.head_sm_clock_mhz));
  for (const std::string& warning : c.warnings) say("warning: " + warning);
  for (const std::string& note : c.notes) say("note: " + note);

  std::vector<std::vector<std::string>> cells;
  for (const RowComparison& row : c.rows) {
    std::vector<std::string> line = {kernel_cell(row), row.point};
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
  const FittedTable table = fit_table(compare_table_columns(), cells, fit);
  out << table.text << fit_footer(table, fit.max_width);
  constexpr std::size_t kNote = 9;
  if (std::find(table.shown.begin(), table.shown.end(), kNote) == table.shown.end())
    for (std::size_t r = 0; r < c.rows.size(); ++r)
      if (!cells[r][kNote].empty())
        say("note: " + kernel_cell(c.rows[r]) + " " + c.rows[r].point + ": " + cells[r][kNote]);
  // A regressed row's "!" keeps its reason when the bytes/FLOPs column is left out or cut.
  constexpr std::size_t kQuantities = 8;
  const bool quantities_whole = !table.cut && std::find(table.shown.begin(), table.shown.end(),
                                                        kQuantities) != table.shown.end();
  if (!quantities_whole)
    for (std::size_t r = 0; r < c.rows.size(); ++r)
      if (c.rows[r].regressed && cells[r][kQuantities] != "-" && cells[r][kQuantities] != "=")
        say("bytes/FLOPs: " + kernel_cell(c.rows[r]) + " " + c.rows[r].point + ": " +
            cells[r][kQuantities]);
  for (const UnmatchedRow& row : c.only_base)
    say("only in base: " + one_line(row.kernel) + " " + row.point + " [" + row.spec_key + "]");
  for (const UnmatchedRow& row : c.only_head)
    say("only in head: " + one_line(row.kernel) + " " + row.point + " [" + row.spec_key + "]");
  say(method_line(c));
  if (c.regressed())
    say(std::string("!: regressed (slower, failed, or more bytes or FLOPs") +
        (c.options.fail_on_more_work ? "" : " without being significantly faster") + ")");
  say(summary_line(c));
  if (const std::string line = detectable_line(c); !line.empty()) say(line);
  out << (c.regressed() ? "result: regression (exit 1)" : "result: no regression (exit 0)") << "\n";
  return out.str();
}

}  // namespace roofline
