#include "lib/core/base/table_layout.hpp"

#include <algorithm>
#include <numeric>

#include "lib/core/base/errors.hpp"
#include "lib/core/base/suggest.hpp"
#include "lib/core/base/text.hpp"

namespace roofline {
namespace {

constexpr std::size_t kGap = 2;  // spaces between columns

std::size_t find_key(const std::vector<TableColumn>& columns, const std::string& key) {
  for (std::size_t i = 0; i < columns.size(); ++i)
    if (iequals(columns[i].key, key)) return i;
  return columns.size();
}

std::size_t line_width(const std::vector<std::size_t>& shown,
                       const std::vector<std::size_t>& widths) {
  std::size_t total = 0;
  for (std::size_t c : shown) total += widths[c];
  return total + (shown.empty() ? 0 : kGap * (shown.size() - 1));
}

// The narrowest a shown column may be cut to: its min_width (cuttable) or its width (not).
std::size_t floor_of(const TableColumn& column, std::size_t width) {
  return column.min_width > 0 ? std::min(width, column.min_width) : width;
}

// Cuts the columns of `cuttable` that are shown by `excess` columns in all, taking from the
// widest first. Returns false (and cuts nothing) when they cannot give that much.
bool cut_columns(const std::vector<TableColumn>& columns, const std::vector<std::size_t>& shown,
                 const std::vector<bool>& cuttable, std::size_t excess,
                 std::vector<std::size_t>& widths) {
  std::vector<std::size_t> floors(columns.size());
  std::size_t slack = 0;
  for (std::size_t c : shown) {
    floors[c] = cuttable[c] ? floor_of(columns[c], widths[c]) : widths[c];
    slack += widths[c] - floors[c];
  }
  if (slack < excess) return false;
  while (excess > 0) {
    std::size_t widest = columns.size();
    for (std::size_t c : shown)
      if (widths[c] > floors[c] && (widest == columns.size() || widths[c] > widths[widest]))
        widest = c;
    --widths[widest];
    --excess;
  }
  return true;
}

// A step of fitting: leave a column out, or allow it to be cut.
struct Step {
  std::size_t column;
  int priority;
  bool cut;
};

}  // namespace

FittedTable fit_table(const std::vector<TableColumn>& columns,
                      const std::vector<std::vector<std::string>>& rows, const TableFit& fit,
                      const CellDecorator& decorate) {
  FittedTable table;
  std::vector<std::size_t> widths(columns.size());
  for (std::size_t c = 0; c < columns.size(); ++c) {
    widths[c] = display_width(columns[c].header);
    for (const auto& cells : rows)
      widths[c] = std::max(widths[c], display_width(one_line(cells[c])));
  }
  std::vector<std::size_t>& shown = table.shown;
  if (!fit.columns.empty()) {
    check_column_keys(fit.columns, columns, "--columns");
    for (const std::string& key : fit.columns) shown.push_back(find_key(columns, key));
  } else {
    shown.resize(columns.size());
    std::iota(shown.begin(), shown.end(), std::size_t{0});
  }
  if (fit.max_width > 0) {
    std::vector<bool> cuttable(columns.size(), false);
    std::vector<Step> steps;
    if (fit.columns.empty()) {
      for (std::size_t c = columns.size(); c-- > 0;) {
        if (columns[c].min_width > 0) steps.push_back({c, columns[c].cut_priority, true});
        if (columns[c].priority > 0) steps.push_back({c, columns[c].priority, false});
      }
      std::stable_sort(steps.begin(), steps.end(), [](const Step& a, const Step& b) {
        return a.priority != b.priority ? a.priority > b.priority : a.cut && !b.cut;
      });
    } else {
      for (std::size_t c : shown) cuttable[c] = columns[c].min_width > 0;
    }
    for (std::size_t next = 0; line_width(shown, widths) > fit.max_width; ++next) {
      const std::size_t excess = line_width(shown, widths) - fit.max_width;
      if (cut_columns(columns, shown, cuttable, excess, widths)) break;
      if (next == steps.size()) {
        // Every step taken: cut what may be cut, as far as it goes.
        for (std::size_t c : shown)
          if (cuttable[c]) widths[c] = floor_of(columns[c], widths[c]);
        break;
      }
      const Step& step = steps[next];
      if (step.cut)
        cuttable[step.column] = true;
      else if (auto it = std::find(shown.begin(), shown.end(), step.column); it != shown.end())
        shown.erase(it);
    }
  }
  // Columns the user left out are not news to them.
  for (std::size_t c = 0; c < columns.size() && fit.columns.empty(); ++c)
    if (std::find(shown.begin(), shown.end(), c) == shown.end())
      table.left_out.push_back(columns[c].header);

  auto line = [&](const std::vector<std::string>& cells, bool is_header, std::size_t row) {
    std::string text;
    for (std::size_t i = 0; i < shown.size(); ++i) {
      const std::size_t c = shown[i];
      if (i > 0) text += std::string(kGap, ' ');
      std::string cell = one_line(cells[c]);
      if (display_width(cell) > widths[c]) {
        cell = elide(cell, widths[c]);
        table.cut = true;
      }
      cell = pad(cell, widths[c], columns[c].right && !is_header);
      text += !is_header && decorate ? decorate(c, row, cell) : cell;
    }
    while (!text.empty() && text.back() == ' ') text.pop_back();
    table.text += text + "\n";
  };
  std::vector<std::string> header;
  for (const TableColumn& column : columns) header.push_back(column.header);
  line(header, true, 0);
  for (std::size_t r = 0; r < rows.size(); ++r) line(rows[r], false, r);
  return table;
}

void check_column_keys(const std::vector<std::string>& chosen,
                       const std::vector<TableColumn>& columns, const std::string& option) {
  if (chosen.empty())
    throw InputError(option + " needs at least one column of " + column_keys_text(columns));
  std::vector<std::string> keys;
  for (const TableColumn& column : columns) keys.push_back(column.key);
  for (std::size_t i = 0; i < chosen.size(); ++i) {
    if (find_key(columns, chosen[i]) == columns.size()) {
      const std::string hint = did_you_mean(chosen[i], keys);
      throw InputError(option + ": no column " + quote_text(chosen[i], 40) +
                       (hint.empty() ? "" : " (" + hint + ")") +
                       "; columns: " + column_keys_text(columns));
    }
    for (std::size_t j = 0; j < i; ++j)
      if (iequals(chosen[i], chosen[j]))
        throw InputError(option + ": column " + quote_text(chosen[i], 40) + " given twice");
  }
}

std::string column_keys_text(const std::vector<TableColumn>& columns) {
  std::vector<std::string> keys;
  for (const TableColumn& column : columns) keys.push_back(column.key);
  return join(keys, ",");
}

std::string fit_footer(const FittedTable& table, std::size_t max_width) {
  std::string text;
  if (!table.left_out.empty())
    text = "left out to fit " + std::to_string(max_width) +
           " columns: " + join(table.left_out, ", ") + ".";
  if (table.cut) text += std::string(text.empty() ? "" : " ") + "…: cut to fit.";
  if (text.empty()) return "";
  return wrap_words(text + " --wide prints every column whole, --columns chooses them.", max_width);
}

}  // namespace roofline
