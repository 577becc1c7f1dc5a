// libFuzzer entry point of the command_line target (see targets.hpp).
#include "tests/fuzz/targets.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  roofline::fuzz::command_line(data, size);
  return 0;
}
