// The kernels of each launch (`run`'s kernel pass, Row::kernels) in the terminal: for every row
// whose launch runs more than one kernel, each kernel's time and share of the row's time, its
// grid, threads, registers and shared memory, and the time no kernel ran.
#pragma once

#include <cstddef>
#include <string>

#include "lib/core/report/report.hpp"

namespace roofline {

// Empty when no row has two kernels or more, and for a projection (its rows' kernels are those
// measured on the GPU the report was measured on). `max_width`: wrap to this many columns (0:
// none); kernel names are cut to fit.
std::string render_kernels(const Report& report, std::size_t max_width = 0);

}  // namespace roofline
