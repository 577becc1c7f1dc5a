// --export FORMAT=PATH (repeatable): the report in a format that CI dashboards ingest
// (lib/core/writers/exports.hpp, docs/ci-exports.md). `run`, `profile` and `show` take it.
#pragma once

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "lib/core/base/output.hpp"
#include "lib/core/verdict/judged_report.hpp"

namespace roofline::app {

struct ExportTarget {
  std::string format;  // "gbench" or "bmf"
  std::string path;    // a file, or - for stdout
};

// Adds --export to `app`, its values (checked as FORMAT=PATH) into `values`.
void add_export_option(CLI::App& app, std::vector<std::string>& values);

// The targets of `values`; InputError for a format given twice.
std::vector<ExportTarget> export_targets(const std::vector<std::string>& values);

// The outputs as check_output_paths takes them: {"--export gbench", path}, ...
std::vector<OutputPath> export_paths(const std::vector<ExportTarget>& targets);

// The text of `report` in the target's format (InputError when it has no timed row).
std::string render_export(const ExportTarget& target, const JudgedReport& report);

}  // namespace roofline::app
