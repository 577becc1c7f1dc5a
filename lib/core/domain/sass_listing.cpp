#include "lib/core/domain/sass_listing.hpp"

#include <cctype>

namespace roofline {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

bool is_mbarrier_wait(std::string_view instruction) {
  return instruction.rfind("SYNCS.PHASECHK", 0) == 0 &&
         instruction.find("TRYWAIT") != std::string_view::npos;
}

// "P0" of "@!P0 BRA 0xa820" or "@P3 BRA `(.L_x_7)"; empty for anything else.
std::string_view branch_predicate(std::string_view instruction) {
  if (instruction.size() < 2 || instruction.front() != '@') return {};
  const std::size_t start = instruction[1] == '!' ? 2 : 1;
  const std::size_t space = instruction.find(' ', start);
  if (space == std::string_view::npos) return {};
  const std::string_view rest = trim(instruction.substr(space));
  if (rest.rfind("BRA", 0) != 0) return {};
  return instruction.substr(start, space - start);
}

}  // namespace

std::string mbarrier_wait_of(const std::map<std::uint64_t, std::string>& function,
                             std::uint64_t offset) {
  auto at = function.find(offset);
  if (at == function.end()) return "";
  if (is_mbarrier_wait(at->second)) return at->second;
  const std::string_view predicate = branch_predicate(at->second);
  if (predicate.empty()) return "";
  for (int back = 0; back < kMbarrierWaitReach && at != function.begin(); ++back) {
    --at;
    const std::string_view before = at->second;
    if (!is_mbarrier_wait(before)) continue;
    // The wait's first operand is the predicate it sets: "SYNCS... P0, [UR10], R0".
    const std::size_t space = before.find(' ');
    const std::size_t comma = before.find(',');
    if (space != std::string_view::npos && comma != std::string_view::npos && comma > space &&
        trim(before.substr(space, comma - space)) == predicate)
      return at->second;
  }
  return "";
}

SassListing parse_sass_listing(std::string_view text) {
  SassListing out;
  std::map<std::uint64_t, std::string>* function = nullptr;
  constexpr std::string_view kText = ".text.";
  while (!text.empty()) {
    const std::size_t end = text.find('\n');
    std::string_view line = trim(text.substr(0, end));
    text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
    if (line.size() > kText.size() + 1 && line.substr(0, kText.size()) == kText &&
        line.back() == ':') {
      const std::string name(line.substr(kText.size(), line.size() - kText.size() - 1));
      function = &out[name];
      continue;
    }
    if (function == nullptr || line.size() < 5 || line.substr(0, 2) != "/*") continue;
    const std::size_t close = line.find("*/");
    if (close == std::string_view::npos || close < 3) continue;
    std::uint64_t offset = 0;
    bool hex = true;
    for (char c : line.substr(2, close - 2)) {
      const int digit = std::isdigit(static_cast<unsigned char>(c)) ? c - '0'
                        : (c >= 'a' && c <= 'f')                    ? c - 'a' + 10
                        : (c >= 'A' && c <= 'F')                    ? c - 'A' + 10
                                                                    : -1;
      if (digit < 0) {
        hex = false;
        break;
      }
      offset = offset * 16 + static_cast<std::uint64_t>(digit);
    }
    if (!hex) continue;
    std::string_view instruction = trim(line.substr(close + 2));
    if (const std::size_t semi = instruction.rfind(';'); semi != std::string_view::npos)
      instruction = trim(instruction.substr(0, semi));
    if (instruction.empty()) continue;
    (*function)[offset] = std::string(instruction);
  }
  return out;
}

}  // namespace roofline
