// libFuzzer entry point of the output_paths target (see targets.hpp).
#include "tests/fuzz/targets.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  roofline::fuzz::output_paths(data, size);
  return 0;
}
