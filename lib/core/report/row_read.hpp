// One row of a report read from JSON (row_read.cpp); report_read.cpp puts the rows in the
// report. Internal to the report's JSON reader.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "lib/core/base/json_reader.hpp"
#include "lib/core/report/report.hpp"

namespace roofline {

// The row at `path`; its `origin` and spec key are for the caller to check against the report.
// Its `analysis` block is not read: it is recomputed.
Row row_from_json(const JsonReader& read, const nlohmann::json& json, const std::string& path);

}  // namespace roofline
