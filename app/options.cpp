#include "app/options.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <regex>
#include <vector>

#include "lib/core/base/errors.hpp"
#include "lib/core/base/text.hpp"

namespace roofline::app {

const CLI::Validator kNonEmpty(
    [](std::string& text) { return text.empty() ? std::string("must not be empty") : ""; },
    "VALUE");

CLI::Validator decimal_in(std::int64_t min, std::int64_t max) {
  return CLI::Validator(
      [min, max](std::string& text) -> std::string {
        const std::string range = " from " + std::to_string(min) + " to " + std::to_string(max);
        // One sign at most, then digits only; from_chars takes no '+'.
        const std::size_t sign = !text.empty() && (text[0] == '-' || text[0] == '+') ? 1 : 0;
        const bool digits = text.size() > sign &&
                            std::all_of(text.begin() + static_cast<std::ptrdiff_t>(sign),
                                        text.end(), [](char c) { return c >= '0' && c <= '9'; });
        const char* begin = text.data() + (sign == 1 && text[0] == '+' ? 1 : 0);
        const char* end = text.data() + text.size();
        std::int64_t value = 0;
        const auto [stop, error] = std::from_chars(begin, end, value);
        if (!digits || error != std::errc() || stop != end || value < min || value > max)
          return "must be a decimal integer" + range + " (got " + quote_text(text) + ")";
        return "";
      },
      "INT");
}

const CLI::Validator kDecimalUint64(
    [](std::string& text) -> std::string {
      std::uint64_t value = 0;
      const char* end = text.data() + text.size();
      const auto [stop, error] = std::from_chars(text.data(), end, value);
      const bool digits =
          !text.empty() && text.find_first_not_of("0123456789") == std::string::npos;
      if (!digits || error != std::errc() || stop != end)
        return "must be a decimal integer from 0 to 18446744073709551615 (got " + quote_text(text) +
               ")";
      return "";
    },
    "UINT64");

CLI::Validator seconds_in(int min, int max) {
  return CLI::Validator(
      [min, max](std::string& text) -> std::string {
        char* end = nullptr;
        const double value = std::strtod(text.c_str(), &end);
        const bool ok = !text.empty() && end == text.c_str() + text.size() &&
                        std::isfinite(value) && value >= min && value <= max;
        return ok ? std::string()
                  : "must be seconds from " + std::to_string(min) + " to " + std::to_string(max) +
                        " (got " + quote_text(text) + ")";
      },
      "SECONDS");
}

namespace {

constexpr std::size_t kMaxRegexBytes = 1000;
constexpr long kMaxRegexCount = 1000;
constexpr int kMaxRegexRepeats = 6;

[[noreturn]] void bad_regex(const std::string& pattern, const std::string& why) {
  throw InputError("--kernel-regex " + quote_text(pattern, 60) + ": " + why);
}

// The repeat at `at` ("*", "+", "?", "{n}", "{n,}", "{n,m}", each perhaps followed by "?" for
// laziness): how many characters it takes (0: none), whether it repeats more than once, and
// whether its count varies (everything but {n} and {n,n}).
std::size_t repeat_at(const std::string& p, std::size_t at, bool* repeats, bool* varies) {
  *repeats = false;
  *varies = false;
  if (at >= p.size()) return 0;
  std::size_t length = 0;
  if (p[at] == '*' || p[at] == '+') {
    *repeats = *varies = true;
    length = 1;
  } else if (p[at] == '?') {
    *varies = true;
    length = 1;
  } else if (p[at] == '{') {
    const std::size_t close = p.find('}', at);
    if (close == std::string::npos) return 0;
    const std::string inside = p.substr(at + 1, close - at - 1);
    const std::size_t comma = inside.find(',');
    const std::string low = inside.substr(0, comma);
    const std::string high = comma == std::string::npos ? low : inside.substr(comma + 1);
    auto count = [&](const std::string& text) {  // at most 4 digits here (checked above)
      if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos) return -1L;
      return std::stol(text);
    };
    const long lo = count(low);
    const long hi = high.empty() ? -2L : count(high);
    if (lo < 0 || hi == -1L) return 0;  // not a repeat: std::regex decides
    if (lo > kMaxRegexCount || hi > kMaxRegexCount)
      bad_regex(p, "counts above " + std::to_string(kMaxRegexCount) + " are refused");
    *repeats = hi == -2L || hi > 1;
    *varies = hi == -2L || hi > lo;
    length = close - at + 1;
  }
  if (length > 0 && at + length < p.size() && p[at + length] == '?') ++length;
  return length;
}

}  // namespace

void check_kernel_regex(const std::string& pattern) {
  if (pattern.size() > kMaxRegexBytes)
    bad_regex(pattern, "longer than " + std::to_string(kMaxRegexBytes) + " bytes");
  // The shape first (compiling a pattern such as ((a{1000}){1000}){1000} takes the memory the
  // guard is for), then std::regex, the engine of the injection library. Each open group:
  // whether it holds a repeat or an alternative.
  // Counts first, terminated or not, wherever they stand: std::regex reads the digits after a
  // '{' into a long without a check.
  for (std::size_t at = pattern.find('{'); at != std::string::npos;
       at = pattern.find('{', at + 1)) {
    for (std::size_t from = at + 1; from < pattern.size();) {
      const std::size_t to =
          std::min(pattern.find_first_not_of("0123456789", from), pattern.size());
      if (to - from > 4 ||
          (to > from && std::stol(pattern.substr(from, to - from)) > kMaxRegexCount))
        bad_regex(pattern, "counts above " + std::to_string(kMaxRegexCount) + " are refused");
      if (to >= pattern.size() || pattern[to] != ',' || from != at + 1) break;
      from = to + 1;  // the count after the comma
    }
  }
  std::vector<bool> groups{false};
  int varying = 0;
  // The repeat (if any) after the atom that ends at `i`; returns the characters it takes.
  auto after_atom = [&](std::size_t at, bool group_risky) {
    bool repeats = false, varies = false;
    const std::size_t length = repeat_at(pattern, at, &repeats, &varies);
    if (repeats && group_risky)
      bad_regex(pattern,
                "a repeated group that holds a repeat or an alternative (such as (a+)+ or "
                "(a|ab)*) can take exponential time: write it without the nesting");
    bool again = false;
    if (length > 0 && repeat_at(pattern, at + length, &again, &again) > 0)
      bad_regex(pattern, "a repeat of a repeat (such as a** or a+{2,}) can take exponential time");
    if (varies && ++varying > kMaxRegexRepeats)
      bad_regex(pattern, "more than " + std::to_string(kMaxRegexRepeats) +
                             " repeats of varying count can take polynomial time of that degree");
    groups.back() = groups.back() || group_risky || repeats;
    return length;
  };
  for (std::size_t i = 0; i < pattern.size(); ++i) {
    const char c = pattern[i];
    if (c == '\\') {
      if (i + 1 < pattern.size() && pattern[i + 1] >= '1' && pattern[i + 1] <= '9')
        bad_regex(pattern, "backreferences are refused (they can take exponential time)");
      ++i;
      i += after_atom(i + 1, false);
    } else if (c == '[') {
      std::size_t j = i + 1;
      if (j < pattern.size() && pattern[j] == '^') ++j;
      // In ECMAScript a ']' right after "[" or "[^" closes the class ([] matches nothing).
      for (; j < pattern.size() && pattern[j] != ']'; j += pattern[j] == '\\' ? 2 : 1)
        if (pattern[j] == '\\' && j + 1 < pattern.size() && pattern[j + 1] >= '1' &&
            pattern[j + 1] <= '9')
          bad_regex(pattern, "backreferences are refused (they can take exponential time)");
      i = j;
      i += after_atom(i + 1, false);
    } else if (c == '(') {
      groups.push_back(false);
      // (?:x), (?=x), (?!x): the '?' and its mark are not a repeat.
      if (i + 2 < pattern.size() && pattern[i + 1] == '?' &&
          (pattern[i + 2] == ':' || pattern[i + 2] == '=' || pattern[i + 2] == '!'))
        i += 2;
    } else if (c == ')' && groups.size() > 1) {
      const bool risky = groups.back();
      groups.pop_back();
      i += after_atom(i + 1, risky);
    } else if (c == '|') {
      groups.back() = true;
    } else {
      bool repeats = false, varies = false;
      if (repeat_at(pattern, i, &repeats, &varies) > 0)
        bad_regex(pattern, "a repeat with nothing before it to repeat");
      i += after_atom(i + 1, false);
    }
  }
  try {
    std::regex compiled(pattern, std::regex::ECMAScript);
  } catch (const std::regex_error& error) {
    bad_regex(pattern, std::string("not a valid regular expression (") + error.what() + ")");
  }
}

}  // namespace roofline::app
