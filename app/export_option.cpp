#include "app/export_option.hpp"

#include <algorithm>

#include "app/common.hpp"
#include "lib/core/base/errors.hpp"
#include "lib/core/base/suggest.hpp"
#include "lib/core/base/text.hpp"
#include "lib/core/writers/exports.hpp"

namespace roofline::app {
namespace {

const std::vector<std::string> kFormats = {"gbench", "bmf"};

// "gbench=bench.json" → {gbench, bench.json}; the reason it is not one, else.
std::string parse_target(const std::string& text, ExportTarget* out) {
  const std::size_t equals = text.find('=');
  if (equals == std::string::npos)
    return "must be FORMAT=PATH with FORMAT gbench or bmf (got " + quote_text(text) + ")";
  out->format = text.substr(0, equals);
  out->path = text.substr(equals + 1);
  if (std::find(kFormats.begin(), kFormats.end(), out->format) == kFormats.end()) {
    const std::string hint = did_you_mean(out->format, kFormats);
    return "unknown format " + quote_text(out->format) + " (" +
           (hint.empty() ? "gbench or bmf" : hint) + ")";
  }
  if (out->path.empty()) return "a path must not be empty (" + out->format + "=PATH)";
  return "";
}

}  // namespace

void add_export_option(CLI::App& app, std::vector<std::string>& values) {
  app.add_option("--export", values,
                 "Also write the timed rows for CI dashboards: gbench=PATH (Google Benchmark "
                 "JSON, for github-action-benchmark) or bmf=PATH (Bencher Metric Format); - for "
                 "stdout; repeatable")
      ->type_name("FORMAT=PATH")
      // One value per --export, repeated for more: a vector option would otherwise take every
      // argument up to the next option, "--" and the profiled program's own arguments included.
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
      ->check(CLI::Validator(
          [](std::string& text) {
            ExportTarget target;
            return parse_target(text, &target);
          },
          ""))
      ->group(kOutputGroup);
}

std::vector<ExportTarget> export_targets(const std::vector<std::string>& values) {
  std::vector<ExportTarget> targets;
  for (const std::string& value : values) {
    ExportTarget target;
    if (const std::string error = parse_target(value, &target); !error.empty())
      throw InputError("--export: " + error);
    for (const ExportTarget& other : targets)
      if (other.format == target.format)
        throw InputError("--export " + target.format + " is given twice");
    targets.push_back(std::move(target));
  }
  return targets;
}

std::vector<OutputPath> export_paths(const std::vector<ExportTarget>& targets) {
  std::vector<OutputPath> paths;
  for (const ExportTarget& target : targets)
    paths.push_back({"--export " + target.format, target.path});
  return paths;
}

std::string render_export(const ExportTarget& target, const JudgedReport& report) {
  return target.format == "gbench" ? render_gbench_json(report) : render_bmf_json(report);
}

}  // namespace roofline::app
