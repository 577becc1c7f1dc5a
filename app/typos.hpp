// "Did you mean" for a command line that CLI11 refused (app/typos.cpp).
#pragma once

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace roofline::app {

// After a parse of `args` by `root` that failed for words CLI11 could not place (ExtrasError,
// or "A subcommand is required"): for the first of them, in the order of `args`, a one-line
// message naming what was meant: an unknown long option near one of the command's options or
// the root's ("unknown option --seqs ...: did you mean --seq?"), or an unknown word where a
// command was expected ("unknown command \"rnu\" ...: did you mean run?"). Words after "--"
// are a program's. Empty when neither applies (CLI11's own message then stands).
std::string command_line_hint(const CLI::App& root, const std::vector<std::string>& args);

}  // namespace roofline::app
