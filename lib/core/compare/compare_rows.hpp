// The rows of a saved `compare --json` document as a table again (`show COMPARE.json`): each
// matched row with its two median times, the change, the verdict and its notes, as compare
// judged them when it wrote the file (nothing is judged again).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "lib/core/base/table_layout.hpp"

namespace roofline {

// True for the JSON that `compare --json` writes (its "kind").
bool is_compare_json(const nlohmann::json& document);

// Throws InputError naming `origin` and the key when a row lacks what the table needs. `fit`:
// the terminal's width and --columns, as compare's own table (table_layout.hpp).
std::string render_compare_rows(const nlohmann::json& document, const std::string& origin,
                                const TableFit& fit = {});

}  // namespace roofline
