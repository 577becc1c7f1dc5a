// "Did you mean": the known names closest to a mistyped one, by edit distance. Used for
// subcommands, options, GPU spec names and kernel names.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace roofline {

// Edits (insert, delete, substitute, or swap two neighbours) that turn `a` into `b`, ignoring
// ASCII case: "rnu" → "run" is 1, "h20" → "h200" is 1.
std::size_t edit_distance(std::string_view a, std::string_view b);

// The candidates within a typo's reach of `typed` (1 edit up to 4 characters, 2 up to 8, 3
// beyond), nearest first and in the candidates' order among equals, at most `limit`, each
// once. Empty when none is that close.
std::vector<std::string> closest_names(std::string_view typed,
                                       const std::vector<std::string>& candidates,
                                       std::size_t limit = 3);

// "did you mean run?", "did you mean flash-v1 or flash-v2?"; empty when nothing is close.
std::string did_you_mean(std::string_view typed, const std::vector<std::string>& candidates);

}  // namespace roofline
