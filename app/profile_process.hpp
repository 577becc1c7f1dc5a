// Running the program under test for `profile`: finding it, finding the injection library,
// starting it with the profiling environment, and waiting for it.
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "app/process.hpp"

namespace roofline::app {

// The path execv will run: NAME with a '/' as given, else the first match on $PATH. Throws
// InputError "PROGRAM: not found" or "PROGRAM: not executable".
std::string resolve_program(const std::string& name);

// libcuflash_roofline_inject.so: `option` when given, else next to this executable, else in
// ../lib (an install). Throws InputError naming where it looked, or when the file is not an
// ELF shared object that exports InitializeInjection (read from its dynamic symbols; nothing
// is loaded).
std::filesystem::path find_injection_library(const std::string& option);

// Runs `program` (resolved) with argv (argv[0] included) and these variables added to the
// environment, and waits for it (ChildProcess: termination signals are forwarded to it).
ChildStatus run_program(const std::string& program, const std::vector<std::string>& argv,
                        const std::map<std::string, std::string>& environment);

}  // namespace roofline::app
