// Small text helpers shared by the core: case-insensitive compare, joining, number formatting.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace roofline {

bool iequals(std::string_view a, std::string_view b);
std::string join(const std::vector<std::string>& parts, std::string_view separator);
std::vector<std::string> split(std::string_view text, char separator);
std::string first_line(std::string_view text);
// `text` without leading and trailing spaces, tabs, carriage returns and newlines.
std::string trim(std::string_view text);
// `text` on one line: control characters (newline, ESC, NUL, DEL, ...) written as \n, \t, \r
// or \xNN, C1 controls as \u00NN (so applying it twice changes nothing). Every error message passes
// through it.
std::string one_line(std::string_view text);
// `text` echoed in a message: one_line()'d, in double quotes, cut to `max_bytes` with "..."
// (at a UTF-8 boundary).
std::string quote_text(std::string_view text, std::size_t max_bytes = 80);
// Display width of UTF-8 text: one column per code point.
std::size_t display_width(std::string_view text);
// `text` padded with spaces to `width` columns, on the left when `right` (right-aligned).
std::string pad(const std::string& text, std::size_t width, bool right);
// `text` cut to at most `width` columns, its last one "…" when anything was cut (at a UTF-8
// boundary); unchanged when it fits.
std::string elide(std::string_view text, std::size_t width);
// `text` (one line) broken at spaces into lines of at most `width` columns, each after the
// first starting with `indent` (the first keeps the text's leading spaces), never between a
// number and its unit ("966 µs", "3.2 TB/s"); a word longer than a line is broken inside. Every
// line ends with a newline. `width` 0: the text as it is, and a newline.
std::string wrap_words(std::string_view text, std::size_t width, std::string_view indent = "  ");
// Fixed-point with `digits` decimals; "-" for NaN.
std::string format_fixed(double value, int digits);
// Three significant digits with an SI suffix for large values: 1.23G, 456M, 12.3k; "-" for NaN.
std::string format_si(double value);
// A duration as the summaries print it: "2.35 s", "7.33 ms", "761 µs", "1.5 µs".
std::string seconds_text(double seconds);

}  // namespace roofline
