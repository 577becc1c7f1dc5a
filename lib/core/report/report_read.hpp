// A report read back from its JSON (report_read.cpp; rows in row_read.cpp): the data model only,
// each row's `analysis` block skipped (a verdict is recomputed by whoever judges the report).
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

#include "lib/core/report/report.hpp"

namespace roofline {

// Throws InputError naming `origin` for anything it cannot read: another schema version,
// missing keys, wrong types.
Report report_from_json(const nlohmann::json& json, const std::string& origin);
// The same from JSON text: the same report, or the same error (above kMaxWholeParseBytes, the
// first error in reading order), with memory for one row's JSON tree at a time rather than the
// whole document's.
Report report_from_text(std::string_view text, const std::string& origin);
Report read_report_file(const std::filesystem::path& path);

}  // namespace roofline
