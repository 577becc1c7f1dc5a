// A text table fitted to a width: the columns that fit, in order of priority, and cells of the
// columns that may be cut ("…") cut no more than needed. The terminal tables of report, compare
// and summary lay out their cells with it; what the width is (the terminal's, --wide,
// --columns) is for the caller to say.
//
// Fitting to `max_width`, without a chosen set of columns:
//   1. every column at its widest cell (or header);
//   2. steps, highest priority number first: leaving a column out (`priority`), or allowing a
//      cuttable column to be cut down to its min_width (`cut_priority`; at equal numbers the
//      cut comes first, the rightmost column first among equals). After each step, when the
//      cuts allowed so far make the line fit, the cut columns are cut (widest first) only as
//      far as needed, and fitting stops;
//   3. columns of priority 0 are never left out: when all steps are taken, the line may still
//      be wider than `max_width`.
// With chosen columns (--columns) those are shown, in the order given, and cut as needed.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

namespace roofline {

struct TableColumn {
  std::string key;     // the name --columns takes: lower case, no spaces ("of-bound")
  std::string header;  // what the table prints ("of bound")
  bool right = false;  // right-aligned (numbers)
  int priority = 0;    // 0: always shown; higher: left out sooner to fit a width
  // Above 0: the column's cells (text, never numbers) may be cut to this many columns with a
  // trailing "…" to fit a width, once the steps down to `cut_priority` are taken.
  std::size_t min_width = 0;
  int cut_priority = 0;
};

struct TableFit {
  std::size_t max_width = 0;         // columns of the terminal; 0: no limit, every column whole
  std::vector<std::string> columns;  // keys chosen, in the order to print; empty: by width
};

struct FittedTable {
  std::string text;                   // the header line and one line per row, no trailing spaces
  std::vector<std::size_t> shown;     // indices of the columns printed, in order
  std::vector<std::string> left_out;  // headers of the columns left out to fit, in table order
  bool cut = false;                   // a cell or header was cut to fit
};

// Decorates the padded text of a body cell (`column` into the columns, `row` into the rows),
// e.g. with ANSI colours; it must not change the cell's width.
using CellDecorator =
    std::function<std::string(std::size_t column, std::size_t row, const std::string& padded)>;

// `rows` have one cell per column; cells are printed one_line()'d. Columns are separated by two
// spaces. Throws InputError for a key in `fit.columns` that no column has (check_column_keys).
FittedTable fit_table(const std::vector<TableColumn>& columns,
                      const std::vector<std::vector<std::string>>& rows, const TableFit& fit,
                      const CellDecorator& decorate = {});

// Throws InputError (one line) for a key of `chosen` that none of `columns` has, naming it,
// the closest keys (did you mean) and every key; `option` names the option ("--columns").
// Keys compare ignoring ASCII case. Also refuses an empty list and a key given twice.
void check_column_keys(const std::vector<std::string>& chosen,
                       const std::vector<TableColumn>& columns, const std::string& option);

// The keys of `columns`, comma-separated: for help texts and messages.
std::string column_keys_text(const std::vector<TableColumn>& columns);

// The line below a fitted table that says what was left out or cut and how to see it all;
// empty when the table is whole. Wrapped to `max_width`.
std::string fit_footer(const FittedTable& table, std::size_t max_width);

}  // namespace roofline
