// One row of a report in JSON, writer beside reader (row_json.cpp); report_json.cpp puts the rows
// in the document. Internal to the report's JSON.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "lib/core/base/json_reader.hpp"
#include "lib/core/report/judged_report.hpp"
#include "lib/core/report/report.hpp"

namespace roofline {

// The row with its `analysis` block (its verdict in `report`).
nlohmann::json row_json(const Row& row, const JudgedReport& report);
// The row at `path`; its `origin` and spec key are for the caller to check against the report.
Row row_from_json(const JsonReader& read, const nlohmann::json& json, const std::string& path);

}  // namespace roofline
