// libFuzzer entry point of the spec_reader target (see targets.hpp).
#include "tests/fuzz/targets.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  roofline::fuzz::spec_reader(data, size);
  return 0;
}
