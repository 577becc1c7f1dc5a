// The writers of a Comparison, one per format and file: a terminal table (compare_table.cpp),
// GitHub-flavoured Markdown for a pull-request comment (compare_markdown.cpp), and JSON with
// every number behind the verdicts (compare_json.cpp).
#pragma once

#include <string>

#include "lib/core/base/table_layout.hpp"
#include "lib/core/compare/compare.hpp"

namespace roofline {

// The `schema_version` of compare's JSON (a file this tool writes and never reads back: CI
// scripts read it). Bump it when a script written for the previous version would misread the
// new one: a key removed, renamed or moved, or a value whose meaning or unit changed. Adding a
// key does not bump it.
inline constexpr int kCompareSchemaVersion = 2;

// `fit`: the terminal's width and --columns (table_layout.hpp; compare_table_columns() has the
// keys). Notes of rows whose note column is not shown follow the table, one line each.
std::string render_compare_table(const Comparison& comparison, const TableFit& fit = {});
const std::vector<TableColumn>& compare_table_columns();
std::string render_compare_markdown(const Comparison& comparison);
std::string render_compare_json(const Comparison& comparison);

}  // namespace roofline
