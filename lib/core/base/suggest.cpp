#include "lib/core/base/suggest.hpp"

#include <algorithm>
#include <cctype>

namespace roofline {

std::size_t edit_distance(std::string_view a, std::string_view b) {
  auto lower = [](char c) {
    return static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  };
  // Three rows of the optimal-string-alignment table: the swap looks two rows back.
  std::vector<std::size_t> before(b.size() + 1), previous(b.size() + 1), current(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) previous[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    current[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const bool same = lower(a[i - 1]) == lower(b[j - 1]);
      current[j] =
          std::min({previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (same ? 0 : 1)});
      if (i > 1 && j > 1 && lower(a[i - 1]) == lower(b[j - 2]) &&
          lower(a[i - 2]) == lower(b[j - 1]))
        current[j] = std::min(current[j], before[j - 2] + 1);
    }
    std::swap(before, previous);
    std::swap(previous, current);
  }
  return previous[b.size()];
}

std::vector<std::string> closest_names(std::string_view typed,
                                       const std::vector<std::string>& candidates,
                                       std::size_t limit) {
  const std::size_t reach = typed.size() <= 4 ? 1 : typed.size() <= 8 ? 2 : 3;
  std::vector<std::pair<std::size_t, std::string>> near;
  for (const std::string& candidate : candidates) {
    const bool seen = std::any_of(near.begin(), near.end(),
                                  [&](const auto& entry) { return entry.second == candidate; });
    if (seen || candidate.empty()) continue;
    const std::size_t distance = edit_distance(typed, candidate);
    if (distance <= reach && distance > 0) near.emplace_back(distance, candidate);
  }
  std::stable_sort(near.begin(), near.end(),
                   [](const auto& x, const auto& y) { return x.first < y.first; });
  std::vector<std::string> out;
  for (const auto& [distance, name] : near) {
    // Farther names only when nothing nearer was found: "h20" suggests h200, not also a100.
    if (!out.empty() && distance > near.front().first) break;
    if (out.size() == limit) break;
    out.push_back(name);
  }
  return out;
}

std::string did_you_mean(std::string_view typed, const std::vector<std::string>& candidates) {
  const std::vector<std::string> names = closest_names(typed, candidates);
  if (names.empty()) return "";
  std::string text = "did you mean ";
  for (std::size_t i = 0; i < names.size(); ++i)
    text += (i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") + names[i];
  return text + "?";
}

}  // namespace roofline
