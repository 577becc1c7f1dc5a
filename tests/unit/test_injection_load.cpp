// The injection library loaded into a process that has no CUDA driver loaded (as on CI, or a
// process that never called CUDA): InitializeInjection fails cleanly and says why.
#include <doctest/doctest.h>

#include <dlfcn.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "lib/profile/profile_protocol.hpp"
#include "tests/unit/helpers.hpp"

using namespace roofline;

namespace {

using Initialize = int (*)();

Initialize load_injection() {
  void* library = dlopen(ROOFLINE_INJECTION_LIBRARY, RTLD_NOW | RTLD_LOCAL);
  const char* why = library == nullptr ? dlerror() : nullptr;
  INFO(std::string(why != nullptr ? why : ""));
  REQUIRE(library != nullptr);
  auto initialize = reinterpret_cast<Initialize>(dlsym(library, "InitializeInjection"));
  REQUIRE(bool(initialize));
  return initialize;
}

}  // namespace

TEST_CASE("injection: loads, and without a loaded driver records why and returns 0") {
  Initialize initialize = load_injection();
  TempDir dir;
  ::setenv(profile_env::kOutputDir, dir.path.c_str(), 1);
  CHECK(initialize() == 0);
  ::unsetenv(profile_env::kOutputDir);
  const auto file = dir.path / (std::to_string(getpid()) + ".jsonl");
  REQUIRE(std::filesystem::exists(file));
  const ProcessRecords records = read_process_records(read_text(file), file.string());
  CHECK(records.process_id == getpid());
  REQUIRE(records.errors.size() == 1);
  CHECK(records.errors[0].kind == ProfileErrorKind::kNoDevice);
  CHECK(records.errors[0].message.find("libcuda.so.1") != std::string::npos);
  CHECK(records.rows.empty());
}

TEST_CASE("injection: without its directory it says so on stderr, bad options are recorded") {
  Initialize initialize = load_injection();
  ::unsetenv(profile_env::kOutputDir);
  CHECK(initialize() == 0);

  TempDir dir;
  ::setenv(profile_env::kOutputDir, dir.path.c_str(), 1);
  ::setenv(profile_env::kLaunchCount, "many", 1);
  CHECK(initialize() == 0);
  ::unsetenv(profile_env::kOutputDir);
  ::unsetenv(profile_env::kLaunchCount);
  const auto file = dir.path / (std::to_string(getpid()) + ".jsonl");
  const ProcessRecords records = read_process_records(read_text(file), file.string());
  REQUIRE(records.errors.size() == 1);
  CHECK(records.errors[0].kind == ProfileErrorKind::kInternal);
  CHECK(records.errors[0].message.find("CUFLASH_ROOFLINE_PROFILE_COUNT=many") != std::string::npos);
}
