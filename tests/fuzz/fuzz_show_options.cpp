// libFuzzer entry point of the show_options target (see targets.hpp).
#include "tests/fuzz/targets.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  roofline::fuzz::show_options(data, size);
  return 0;
}
