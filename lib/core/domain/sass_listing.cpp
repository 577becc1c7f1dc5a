#include "lib/core/domain/sass_listing.hpp"

#include <cctype>

namespace roofline {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

}  // namespace

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
