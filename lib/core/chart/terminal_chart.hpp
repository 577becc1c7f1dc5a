// The roofline chart drawn with characters for the terminal (log-log, one panel per spec).
#pragma once

#include <cstddef>
#include <string>

#include "lib/core/verdict/flop_convention.hpp"
#include "lib/core/verdict/judged_report.hpp"

namespace roofline {

// `width` × `height` cells for the plot area, plus a frame, tick labels and a key.
// Throws InputError below 20 × 8 cells. `flops`: the points' FLOP convention, as the table's.
// `max_width`: the terminal's columns (0: no limit); the plot narrows to fit beside its axis
// labels (never below 20 cells) and the text lines wrap.
std::string render_ascii_plot(const Report& report, int width, int height,
                              FlopConvention flops = FlopConvention::kAlgorithmic,
                              std::size_t max_width = 0);
std::string render_ascii_plot(const JudgedReport& report, int width, int height,
                              FlopConvention flops = FlopConvention::kAlgorithmic,
                              std::size_t max_width = 0);

}  // namespace roofline
