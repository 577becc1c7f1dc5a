// Checks of command-line values that CLI11 does not make, all run before any work or any
// program starts (exit 2, one line).
#pragma once

#include <cstdint>
#include <string>

#include <CLI/CLI.hpp>

namespace roofline::app {

// Refuses an empty value (`--shard ''` would otherwise mean "not given").
extern const CLI::Validator kNonEmpty;

// A decimal integer from `min` to `max`: digits with an optional sign only (CLI11 alone also
// takes 0x10, 0b1 and 1e3, and wraps or clamps what does not fit), range-checked before it is
// narrowed.
CLI::Validator decimal_in(std::int64_t min, std::int64_t max);
// A decimal integer from 0 to 2^64 - 1 (a seed): no sign, no wrap.
extern const CLI::Validator kDecimalUint64;
// A finite number of seconds from `min` to `max` (strtod's whole text: no NaN, no trailing
// characters).
CLI::Validator seconds_in(int min, int max);

// Throws InputError when `pattern` (for --kernel-regex) is not an ECMAScript regular
// expression, or is one that a backtracking engine (std::regex, in the injection library) can
// take exponential or high-polynomial time on: a repeated group that holds a repeat or an
// alternative (`(a+)+`, `(a*b?)*`, `(a|ab)*`), a repeat of a repeat (`a**`), a repeat of
// nothing, a backreference, more than 6 repeats of varying count (`.*`, `a?`, `b{1,3}`), a
// count above 1000, a pattern above 1000 bytes.
void check_kernel_regex(const std::string& pattern);

}  // namespace roofline::app
