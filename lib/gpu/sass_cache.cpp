#include "lib/gpu/sass_cache.hpp"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <system_error>
#include <thread>

#include "lib/core/base/checksum.hpp"

namespace roofline::gpu {
namespace {

std::filesystem::path directory_from_environment() {
  if (const char* dir = std::getenv("ROOFLINE_SASS_CACHE"); dir != nullptr) {
    const std::string text = dir;
    return text.empty() || text == "off" ? std::filesystem::path() : std::filesystem::path(text);
  }
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg != nullptr && *xdg == '/')
    return std::filesystem::path(xdg) / "cuflash-roofline" / "sass";
  if (const char* home = std::getenv("HOME"); home != nullptr && *home == '/')
    return std::filesystem::path(home) / ".cache" / "cuflash-roofline" / "sass";
  return {};
}

std::string hex(std::uint64_t value) {
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(value));
  return text;
}

}  // namespace

SassListingCache::SassListingCache() : directory_(directory_from_environment()) {}

SassListingCache::SassListingCache(std::filesystem::path directory)
    : directory_(std::move(directory)) {}

std::string SassListingCache::key(const std::string& cubin, const std::string& function,
                                  const std::string& nvdisasm) {
  // The tool's identity: its path and size (a toolkit update changes at least one).
  std::error_code ec;
  const auto size = std::filesystem::file_size(nvdisasm, ec);
  const std::string tool = nvdisasm + '\0' + (ec ? std::string("?") : std::to_string(size));
  return hex(fnv1a64(cubin)) + "-" + hex(fnv1a64(function + '\0' + tool)) + ".sass";
}

std::optional<std::string> SassListingCache::find(const std::string& key) const {
  if (!enabled()) return std::nullopt;
  std::ifstream in(directory_ / key, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  if (!in.good() && !in.eof()) return std::nullopt;
  return text.str();
}

void SassListingCache::store(const std::string& key, const std::string& listing) const {
  if (!enabled() || listing.empty()) return;
  std::error_code ec;
  std::filesystem::create_directories(directory_, ec);
  if (ec) return;
  const std::filesystem::path final_path = directory_ / key;
  const std::filesystem::path temporary =
      directory_ / (key + ".tmp." + std::to_string(static_cast<long long>(getpid())) + "." +
                    std::to_string(std::hash<std::thread::id>{}(std::this_thread::get_id())));
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    if (!out) return;
    out.write(listing.data(), static_cast<std::streamsize>(listing.size()));
    if (!out.good()) {
      out.close();
      std::filesystem::remove(temporary, ec);
      return;
    }
  }
  std::filesystem::rename(temporary, final_path, ec);
  if (ec) std::filesystem::remove(temporary, ec);
}

}  // namespace roofline::gpu
