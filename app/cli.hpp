// The command line as a function, so tests parse argv in-process.
#pragma once

#include <string>
#include <vector>

namespace roofline::app {

// Runs the tool with `args` (without the program name). Results go to stdout, logs and the
// one-line error to stderr. Returns the documented exit code.
int run_cli(const std::vector<std::string>& args);

}  // namespace roofline::app
