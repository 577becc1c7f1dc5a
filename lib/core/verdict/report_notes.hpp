// What a report's rows say beside their numbers, gathered once per cause with the count of rows
// it concerns: warnings (something may be wrong, or a row lacks what it should have: a point
// above a roof, a spec without the row's ceiling, a launch without counters and why), which the
// commands log on stderr, and footnotes (fixed properties of a kernel or a counter set: an L1
// level that wgmma's operand reads bypass, FLOPs the default set does not count), which the
// table prints under its rows.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "lib/core/verdict/judged_report.hpp"

namespace roofline {

struct ReportNote {
  std::string text;       // the first row's wording of the cause
  std::size_t rows = 0;   // rows it concerns
  std::string first_row;  // "kernel workload" of the first of them
};

// In the order of their first row. Notes of one kind and subject (row_note.hpp) are one cause,
// whatever their numbers ("179.1 us"); a row without counters is its message's cause, its
// numbers left out.
std::vector<ReportNote> report_warnings(const JudgedReport& report);
std::vector<ReportNote> report_footnotes(const JudgedReport& report);

// "text (3 rows, the first: kernel B1 H8 N1024 d64 full fwd)", or "text (kernel ...)" for one.
std::string describe(const ReportNote& note);

}  // namespace roofline
