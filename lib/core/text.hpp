// Small text helpers shared by the core: case-insensitive compare, joining, number formatting.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace roofline {

bool iequals(std::string_view a, std::string_view b);
std::string to_lower(std::string_view text);
std::string join(const std::vector<std::string>& parts, std::string_view separator);
std::vector<std::string> split(std::string_view text, char separator);
std::string first_line(std::string_view text);
// Display width of UTF-8 text: one column per code point.
std::size_t display_width(std::string_view text);
// `text` padded with spaces to `width` columns, on the left when `right` (right-aligned).
std::string pad(const std::string& text, std::size_t width, bool right);
// Fixed-point with `digits` decimals; "-" for NaN.
std::string format_fixed(double value, int digits);
// Three significant digits with an SI suffix for large values: 1.23G, 456M, 12.3k; "-" for NaN.
std::string format_si(double value);

}  // namespace roofline
