#include "app/table_options.hpp"

#include "app/common.hpp"
#include "app/terminal_width.hpp"
#include "lib/core/base/text.hpp"

namespace roofline::app {

void TableChoice::add_to(CLI::App& app, const std::vector<TableColumn>& table_columns,
                         bool with_flops) {
  app.add_flag("--wide", wide,
               "Print every column of the table whole, however wide the terminal (the default "
               "fits the table to it; output that is not a terminal is whole unless $COLUMNS "
               "is set)")
      ->group(kOutputGroup);
  // One comma-separated list, split here: with CLI11's delimiter the option would also take
  // the report paths that follow it.
  app.add_option_function<std::string>(
         "--columns", [this](const std::string& list) { columns = split(list, ','); },
         "The table's columns, in this order: " + column_keys_text(table_columns))
      ->type_name("KEY,...")
      ->group(kOutputGroup);
  if (with_flops)
    app.add_option("--flops", flops,
                   "The FLOPs of every FLOP figure in the table and chart: algorithmic (the "
                   "FlashAttention convention, as PyTorch and papers count) or pipe (executed on "
                   "the kernel's own pipe, the roofs' unit)")
        ->check(CLI::IsMember({"algorithmic", "pipe"}))
        ->capture_default_str()
        ->group(kOutputGroup);
}

void TableChoice::check(const std::vector<TableColumn>& table_columns) const {
  if (!columns.empty()) check_column_keys(columns, table_columns, "--columns");
}

TableFit TableChoice::fit() const {
  return {wide ? 0 : terminal_columns(), columns};
}

FlopConvention TableChoice::convention() const {
  return parse_flop_convention(flops).value_or(FlopConvention::kAlgorithmic);
}

}  // namespace roofline::app
