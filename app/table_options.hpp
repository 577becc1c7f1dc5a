// --wide, --columns and --flops: how a command lays out its terminal table. By default the
// table fits the terminal (terminal_width.hpp): the columns that fit, by priority, and a line
// saying what was left out; --wide prints every column whole, --columns KEYS the ones chosen.
#pragma once

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "lib/core/base/table_layout.hpp"
#include "lib/core/verdict/flop_convention.hpp"

namespace roofline::app {

struct TableChoice {
  bool wide = false;
  std::vector<std::string> columns;  // keys, in the order to print
  std::string flops = "algorithmic";

  // `columns`: the table's, for the help text; `with_flops`: the table prints FLOP figures.
  void add_to(CLI::App& app, const std::vector<TableColumn>& table_columns, bool with_flops);
  // InputError (exit 2, one line, did you mean) for a --columns key the table lacks: call
  // before any work.
  void check(const std::vector<TableColumn>& table_columns) const;
  // The width (0 with --wide, else the terminal's) and the columns chosen.
  TableFit fit() const;
  FlopConvention convention() const;
};

}  // namespace roofline::app
