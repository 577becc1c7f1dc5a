// One subcommand per file: setup_x registers the subcommand and its options on the root app
// and arranges for run_x to be called with them. run_x returns the exit code.
#pragma once

#include <CLI/CLI.hpp>

#include "app/common.hpp"

namespace roofline::app {

// Options every subcommand sees (set on the root app).
struct GlobalOptions {
  SpecOptions specs;
  int verbosity = 0;
  bool quiet = false;
  std::vector<std::string> args;  // the whole command line (run --devices restarts itself)
  // `profile`: what follows the first "--" (the program and its arguments), taken apart before
  // CLI11 parses the rest: CLI11 2.1 lets a multi-value option before "--" swallow the "--"
  // and then reads the program's own options as ours.
  std::vector<std::string> program;

  // The command line as reports keep it (ReportContext::command_line): the program's name as
  // typed on a PATH ("cuflash-roofline"), then `args`.
  std::vector<std::string> command_line() const {
    std::vector<std::string> line{"cuflash-roofline"};
    line.insert(line.end(), args.begin(), args.end());
    return line;
  }
};

// Each setup function adds a subcommand; the callback stores the exit code in *exit_code.
void setup_model(CLI::App& root, const GlobalOptions& global, int* exit_code);
void setup_specs(CLI::App& root, const GlobalOptions& global, int* exit_code);
void setup_run(CLI::App& root, const GlobalOptions& global, int* exit_code);
void setup_compare(CLI::App& root, const GlobalOptions& global, int* exit_code);
void setup_plot(CLI::App& root, const GlobalOptions& global, int* exit_code);
void setup_metrics(CLI::App& root, const GlobalOptions& global, int* exit_code);
void setup_calibrate(CLI::App& root, const GlobalOptions& global, int* exit_code);
void setup_profile(CLI::App& root, const GlobalOptions& global, int* exit_code);
void setup_merge(CLI::App& root, const GlobalOptions& global, int* exit_code);
void setup_show(CLI::App& root, const GlobalOptions& global, int* exit_code);

}  // namespace roofline::app
