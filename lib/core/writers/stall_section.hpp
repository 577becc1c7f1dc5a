// The warp stalls of a report's sampled rows (`run --stalls`, Row::stalls) in the terminal: per
// row, its samples by reason, its hottest source lines and SASS instructions; with a row's
// source file readable, the text of its hottest lines (`show --source`).
#pragma once

#include <cstddef>
#include <string>

#include "lib/core/verdict/judged_report.hpp"

namespace roofline {

struct StallSectionOptions {
  std::size_t max_width = 0;  // wrap to this many columns; 0: no wrapping
  std::size_t reasons = 6;    // reasons listed per row (the rest summed as "other")
  std::size_t listed = 5;     // lines and instructions listed per row
  bool source = false;        // print each hottest line's text when its file is readable
};

// Empty when no row has stalls.
std::string render_stalls(const JudgedReport& judged, const StallSectionOptions& options = {});

}  // namespace roofline
