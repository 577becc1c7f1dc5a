#include "lib/core/base/text.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>

namespace roofline {

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(a[i])) !=
        std::tolower(static_cast<unsigned char>(b[i])))
      return false;
  return true;
}

std::string join(const std::vector<std::string>& parts, std::string_view separator) {
  std::string out;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    if (i > 0) out += separator;
    out += parts[i];
  }
  return out;
}

std::vector<std::string> split(std::string_view text, char separator) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (true) {
    std::size_t end = text.find(separator, start);
    out.emplace_back(text.substr(start, end == std::string_view::npos ? end : end - start));
    if (end == std::string_view::npos) break;
    start = end + 1;
  }
  return out;
}

std::string trim(std::string_view text) {
  const std::size_t first = text.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) return {};
  return std::string(text.substr(first, text.find_last_not_of(" \t\r\n") + 1 - first));
}

std::string first_line(std::string_view text) {
  return std::string(text.substr(0, text.find('\n')));
}

std::string one_line(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  static constexpr char kHex[] = "0123456789abcdef";
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    const auto byte = static_cast<unsigned char>(c);
    const auto next = i + 1 < text.size() ? static_cast<unsigned char>(text[i + 1]) : 0;
    if (byte == 0xC2 && next >= 0x80 && next <= 0x9F) {  // C1 controls, U+0080..U+009F
      out += "\\u00";
      out += kHex[next >> 4];
      out += kHex[next & 0xf];
      ++i;
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c == '\r') {
      out += "\\r";
    } else if (byte < 0x20 || byte == 0x7f) {
      out += "\\x";
      out += kHex[byte >> 4];
      out += kHex[byte & 0xf];
    } else {
      out += c;
    }
  }
  return out;
}

std::string quote_text(std::string_view text, std::size_t max_bytes) {
  bool cut = false;
  if (text.size() > max_bytes) {
    std::size_t end = max_bytes;
    while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) --end;
    text = text.substr(0, end);
    cut = true;
  }
  return "\"" + one_line(text) + (cut ? "...\"" : "\"");
}

std::size_t display_width(std::string_view text) {
  std::size_t width = 0;
  for (unsigned char c : text)
    if ((c & 0xC0) != 0x80) ++width;
  return width;
}

std::string pad(const std::string& text, std::size_t width, bool right) {
  const std::size_t w = display_width(text);
  if (w >= width) return text;
  const std::string fill(width - w, ' ');
  return right ? fill + text : text + fill;
}

namespace {

// Bytes of the first `columns` code points of `text` (all of it when shorter).
std::size_t prefix_bytes(std::string_view text, std::size_t columns) {
  std::size_t i = 0;
  for (std::size_t seen = 0; i < text.size(); ++i) {
    if ((static_cast<unsigned char>(text[i]) & 0xC0) == 0x80) continue;
    if (seen == columns) break;
    ++seen;
  }
  return i;
}

// Whether `word` is a unit that its number before it keeps on its line ("966 µs", "3.2 TB/s"),
// trailing punctuation aside.
bool is_unit(std::string_view word) {
  while (!word.empty() && (word.back() == ',' || word.back() == ';' || word.back() == ':' ||
                           word.back() == '.' || word.back() == ')'))
    word.remove_suffix(1);
  static constexpr std::string_view kUnits[] = {
      "s",   "ms",   "µs",   "ns",     "B",       "KB",      "MB", "GB", "TB",  "KiB", "MiB",
      "GiB", "GB/s", "TB/s", "FLOP/s", "GFLOP/s", "TFLOP/s", "W",  "J",  "MHz", "GHz"};
  for (std::string_view unit : kUnits)
    if (word == unit) return true;
  return false;
}

// The words of `text` split at spaces, a unit joined to the number before it.
std::vector<std::string> words_of(std::string_view text) {
  std::vector<std::string> words;
  for (std::string& word : split(text, ' ')) {
    if (word.empty()) continue;
    if (!words.empty() && is_unit(word) && !words.back().empty() &&
        std::isdigit(static_cast<unsigned char>(words.back().back())) != 0)
      words.back() += " " + word;
    else
      words.push_back(std::move(word));
  }
  return words;
}

}  // namespace

std::string elide(std::string_view text, std::size_t width) {
  if (display_width(text) <= width) return std::string(text);
  if (width == 0) return "";
  std::string out(text.substr(0, prefix_bytes(text, width - 1)));
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out + "…";
}

std::string wrap_words(std::string_view text, std::size_t width, std::string_view indent) {
  if (width == 0) return std::string(text) + "\n";
  // A line must hold the indent and at least one more column.
  const std::size_t indent_width = std::min(display_width(indent), width - 1);
  indent = indent.substr(0, prefix_bytes(indent, indent_width));
  std::string out;
  // The text's own leading spaces stay at the start of its first line.
  const std::size_t leading = std::min(
      text.find_first_not_of(' ') == std::string_view::npos ? 0 : text.find_first_not_of(' '),
      width - 1);
  std::string line(leading, ' ');
  std::size_t line_width = leading;
  auto flush = [&] {
    out += line + "\n";
    line = std::string(indent);
    line_width = indent_width;
  };
  bool first_word = true;
  // A number and its unit stay on one line.
  for (const std::string& word : words_of(text)) {
    std::string_view rest = word;
    std::size_t rest_width = display_width(rest);
    const bool fresh = first_word || (!out.empty() && line_width == indent_width);
    if (!fresh && line_width + 1 + rest_width > width)
      flush();
    else if (!fresh) {
      line += ' ';
      ++line_width;
    }
    // A word wider than what is left of a fresh line is cut across lines.
    while (line_width + rest_width > width) {
      const std::size_t take = prefix_bytes(rest, width - line_width);
      line += std::string(rest.substr(0, take));
      rest.remove_prefix(take);
      rest_width = display_width(rest);
      flush();
    }
    line += std::string(rest);
    line_width += rest_width;
    first_word = false;
  }
  out += line + "\n";
  return out;
}

std::string format_fixed(double value, int digits) {
  if (std::isnan(value)) return "-";
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.*f", digits, value);
  return buffer;
}

std::string seconds_text(double s) {
  if (s >= 1) return format_fixed(s, 2) + " s";
  // From 999.5 µs up, milliseconds: "1000 µs" is "1.00 ms".
  if (s >= 0.9995e-3) return format_fixed(s * 1e3, s >= 0.1 ? 1 : 2) + " ms";
  return format_fixed(s * 1e6, s >= 1e-4 ? 0 : 1) + " µs";
}

std::string format_si(double value) {
  if (std::isnan(value)) return "-";
  static constexpr struct {
    double scale;
    const char* suffix;
  } kUnits[] = {{1e15, "P"}, {1e12, "T"}, {1e9, "G"}, {1e6, "M"}, {1e3, "k"}};
  for (const auto& unit : kUnits) {
    if (std::fabs(value) >= unit.scale) {
      double scaled = value / unit.scale;
      int digits = std::fabs(scaled) >= 100 ? 0 : std::fabs(scaled) >= 10 ? 1 : 2;
      return format_fixed(scaled, digits) + unit.suffix;
    }
  }
  int digits = std::fabs(value) >= 100 ? 0 : std::fabs(value) >= 10 ? 1 : 2;
  return format_fixed(value, digits);
}

}  // namespace roofline
