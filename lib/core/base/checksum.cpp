#include "lib/core/base/checksum.hpp"

#include <cstdio>

namespace roofline {

std::uint64_t fnv1a64(std::string_view bytes) {
  std::uint64_t hash = 0xcbf29ce484222325ull;
  for (char byte : bytes) {
    hash ^= static_cast<std::uint8_t>(byte);
    hash *= 0x100000001b3ull;
  }
  return hash;
}

std::uint64_t fnv1a64(const std::vector<std::uint8_t>& bytes) {
  return fnv1a64(std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
}

std::string fnv1a64_hex(const std::vector<std::uint8_t>& bytes) {
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(fnv1a64(bytes)));
  return text;
}

}  // namespace roofline
