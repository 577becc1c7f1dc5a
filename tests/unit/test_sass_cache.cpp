// The on-disk cache of nvdisasm listings (lib/gpu/sass_cache.hpp): a listing comes back under
// its key only, a changed cubin, function or nvdisasm misses, and a cache that cannot be
// written is a miss, never an error.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>

#include "lib/gpu/sass_cache.hpp"
#include "tests/unit/helpers.hpp"

namespace roofline::gpu {

TEST_CASE("sass cache: a stored listing comes back under its key, nothing under another") {
  roofline::TempDir dir;
  const SassListingCache cache(dir.path / "sass");
  const std::string key = SassListingCache::key("cubin bytes", "_Z6kernelv", "/bin/sh");
  CHECK_FALSE(cache.find(key).has_value());
  cache.store(key, "        /*0000*/  MOV R1, c[0x0][0x28] ;\n");
  REQUIRE(cache.find(key).has_value());
  CHECK(*cache.find(key) == "        /*0000*/  MOV R1, c[0x0][0x28] ;\n");
  // No temporary file is left beside it.
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir.path / "sass")) {
    CHECK(entry.path().filename().string() == key);
    ++files;
  }
  CHECK(files == 1);
  CHECK(SassListingCache::key("cubin bytez", "_Z6kernelv", "/bin/sh") != key);
  CHECK(SassListingCache::key("cubin bytes", "_Z6kernelw", "/bin/sh") != key);
  CHECK(SassListingCache::key("cubin bytes", "_Z6kernelv", "/bin/ls") != key);
  CHECK_FALSE(
      cache.find(SassListingCache::key("cubin bytes", "_Z6kernelw", "/bin/sh")).has_value());
}

TEST_CASE("sass cache: disabled or unwritable, every lookup misses and nothing throws") {
  const SassListingCache off{std::filesystem::path()};
  CHECK_FALSE(off.enabled());
  off.store("k.sass", "text");
  CHECK_FALSE(off.find("k.sass").has_value());

  roofline::TempDir dir;
  // A file where the directory should be: create_directories fails.
  std::ofstream(dir.path / "blocked") << "a file";
  const SassListingCache blocked(dir.path / "blocked" / "sass");
  CHECK_NOTHROW(blocked.store("k.sass", "text"));
  CHECK_FALSE(blocked.find("k.sass").has_value());
}

}  // namespace roofline::gpu
