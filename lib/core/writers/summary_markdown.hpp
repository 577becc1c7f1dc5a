// The summary by kernel group (summary.hpp) as Markdown: a table of the top groups and what to
// try next for the groups that could save the program most, for a pull-request comment or a
// CI job's summary page (`show --markdown`).
#pragma once

#include <cstddef>
#include <string>

#include "lib/core/writers/summary.hpp"

namespace roofline {

// `top` groups (0: all) in the table; advice for at most `top` (5 when `top` is 0). `source`
// names the report in the heading (a path relative to the working directory).
std::string render_summary_markdown(const Summary& summary, std::size_t top,
                                    const std::string& source);

}  // namespace roofline
