// One row of a report in JSON (row_json.cpp); report_json.cpp puts the rows in the document.
// Internal to the report's JSON writer.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "lib/core/report/report.hpp"
#include "lib/core/verdict/judged_report.hpp"

namespace roofline {

// The row with its `analysis` block (its verdict in `report`).
nlohmann::json row_json(const Row& row, const JudgedReport& report);

}  // namespace roofline
