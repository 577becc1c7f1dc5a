// The command line as a function, so tests parse argv in-process.
#pragma once

#include <string>
#include <vector>

namespace roofline::app {

// Runs the tool with `args` (without the program name). Results go to stdout, logs and the
// one-line error to stderr. Returns the documented exit code.
int run_cli(const std::vector<std::string>& args);

// Parses `args` as run_cli does (every option's check, `profile`'s `--`, the exit code and the
// one-line error of a usage error), but runs no command: the fuzz target of the command line.
int parse_cli(const std::vector<std::string>& args);

}  // namespace roofline::app
