// The writers of a Comparison, one per format and file: a terminal table (compare_table.cpp),
// GitHub-flavoured Markdown for a pull-request comment (compare_markdown.cpp), and JSON with
// every number behind the verdicts (compare_json.cpp).
#pragma once

#include <string>

#include "lib/core/compare.hpp"

namespace roofline {

std::string render_compare_table(const Comparison& comparison);
std::string render_compare_markdown(const Comparison& comparison);
std::string render_compare_json(const Comparison& comparison);

}  // namespace roofline
