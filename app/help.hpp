// Help screens (app/help.cpp): CLI11's layout in plain words, and each command's footer of
// examples and the exit codes that command can return.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <CLI/CLI.hpp>

namespace roofline::app {

// The formatter of every help screen (set on the root before the subcommands, which inherit
// it): a value's kind without the validators' names ("--batch INT", not "INT:INT=1"), choices
// as "fwd|bwd", and in the description the default in words ("(default: 1)"), options it
// cannot be given with ("(not with --no-causal)") and those it needs. Positionals in the usage
// line by what they hold ("BASE.json [HEAD.json]", "REPORT.json...").
std::shared_ptr<CLI::Formatter> help_formatter();

// One line of a footer's exit codes: {"1", "a row regressed"}.
using ExitLine = std::pair<std::string, std::string>;
inline const ExitLine kExitOk{"0", "success"};
inline const ExitLine kExitUsage{"2",
                                 "usage or input error (bad option or value, unreadable input, "
                                 "unwritable output); nothing written"};
inline const ExitLine kExitNoGpu{"3", "no usable GPU, or hardware counters not permitted"};
inline const ExitLine kExitInternal{"4", "internal error"};
inline const ExitLine kExitSignal{
    "128+N", "ended by signal N (SIGINT, SIGTERM, SIGHUP); temporary files removed"};

// Sets `sub`'s footer: `notes` (may be empty), its examples (command lines after the program
// name), its exit codes, and where the options common to every command are described.
void set_command_help(CLI::App& sub, const std::vector<std::string>& examples,
                      const std::vector<ExitLine>& exit_codes, const std::string& notes = "");

}  // namespace roofline::app
