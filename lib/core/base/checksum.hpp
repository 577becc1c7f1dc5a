// FNV-1a 64-bit checksum, to check recorded counter-data images before CUPTI parses them
// (a corrupt image can crash the parser) and to name cached files by their content. An
// integrity check, not a security measure.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace roofline {

std::uint64_t fnv1a64(const std::vector<std::uint8_t>& bytes);
std::uint64_t fnv1a64(std::string_view bytes);
std::string fnv1a64_hex(const std::vector<std::uint8_t>& bytes);  // 16 lowercase hex digits

}  // namespace roofline
