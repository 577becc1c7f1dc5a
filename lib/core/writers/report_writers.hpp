// A report's writers, one format per file behind this header: JSON (report_json.cpp; rows in
// row_json.cpp), CSV (report_csv.cpp) and the terminal table (report_table.cpp). Writers are
// pure: a judged report in, text out; output.hpp puts the text where the user asked. JSON
// carries raw quantities and, per row, an `analysis` block derived from them (the reader,
// report/report_read.hpp, ignores it: it is recomputed).
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "lib/core/base/table_layout.hpp"
#include "lib/core/report/report.hpp"
#include "lib/core/verdict/flop_convention.hpp"
#include "lib/core/verdict/judged_report.hpp"

namespace roofline {

struct TableOptions {
  bool color = false;  // ANSI colours for the regime column
  // The terminal's columns: the table keeps the columns that fit (report_table_columns'
  // priorities) and cuts long text cells; header and notes are wrapped. 0: every column whole.
  std::size_t max_width = 0;
  std::vector<std::string> columns;  // keys chosen (--columns), in order; empty: by width
  FlopConvention flops = FlopConvention::kAlgorithmic;  // of every FLOP figure (--flops)
};

// Each writer reads the verdicts of a judged report; the Report forms judge it first.
std::string render_json(const JudgedReport& report);
std::string render_json(const Report& report);
std::string render_csv(const JudgedReport& report);
std::string render_csv(const Report& report);
std::string render_table(const JudgedReport& report, const TableOptions& options = {});
std::string render_table(const Report& report, const TableOptions& options = {});
// The terminal table's columns: keys for --columns, headers, and which go first to fit a width.
const std::vector<TableColumn>& report_table_columns();

nlohmann::json report_to_json(const JudgedReport& report);
nlohmann::json report_to_json(const Report& report);
// CSV column names, in order (report_csv.cpp's table says what each holds).
const std::vector<std::string>& csv_columns();
// The CSV columns as a Markdown table (column, what it holds), in order: the reference in
// docs/columns.md, which test_docs.cpp keeps equal to it.
std::string render_csv_column_reference();

}  // namespace roofline
