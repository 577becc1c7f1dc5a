// Error types that main() maps to the documented exit codes.
//   0 ok, 1 regression found (compare), 2 usage or input error, 3 no usable GPU or counters
//   not permitted, 4 internal error.
#pragma once

#include <stdexcept>
#include <string>

namespace roofline {

enum class ExitCode : int {
  kOk = 0,
  kRegression = 1,
  kUsage = 2,
  kNoGpu = 3,
  kInternal = 4,
};

// Bad input from the user: arguments, spec files, reports, output paths. Exit code 2.
class InputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// No usable GPU, no driver, or counters not permitted when they were asked for. Exit code 3.
class GpuUnavailableError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace roofline
