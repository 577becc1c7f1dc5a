// A report read from JSON: context, origins, specs (rows are row_read.cpp's). Schema:
// report.hpp's kReportSchemaVersion, and its rules for a bump.
#include "lib/core/report/report_read.hpp"

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <tuple>

#include <nlohmann/json.hpp>

#include "lib/core/base/errors.hpp"
#include "lib/core/base/json_reader.hpp"
#include "lib/core/base/limits.hpp"
#include "lib/core/base/text.hpp"
#include "lib/core/report/json_values.hpp"
#include "lib/core/report/row_read.hpp"

namespace roofline {
namespace {

using nlohmann::json;

std::string shortened(const std::string& text, std::size_t max_bytes) {
  return text.size() <= max_bytes ? text : text.substr(0, max_bytes) + "...";
}

// Reads a context object (report or origin) at `where`; the tool version is not in it.
ReportContext read_context(const JsonReader& r, const json& c, const std::string& where) {
  ReportContext context;
  context.command = r.string(c, where, "command");
  // Added within schema 1: absent from reports written before (the command line not kept).
  auto strings = [&](const char* key, std::vector<std::string>& out) {
    const json* member = r.optional_member(c, where, key);
    if (member == nullptr || member->is_null()) return;
    const std::string path = key_path(where, key);
    r.require_array(*member, path);
    for (std::size_t i = 0; i < member->size(); ++i) {
      if (!(*member)[i].is_string()) r.fail(index_path(path, i), "must be a string");
      out.push_back((*member)[i].get<std::string>());
    }
  };
  strings("command_line", context.command_line);
  strings("program_command", context.program_command);
  context.host = r.string(c, where, "host", true);
  context.time_utc = r.string(c, where, "time_utc", true);
  context.projection = r.boolean(c, where, "projection");
  // Added with projections; absent from older reports (then a projection judged measured
  // values against the target's peaks directly).
  if (const json* measured = r.optional_member(c, where, "measured_spec");
      measured != nullptr && !measured->is_null())
    context.measured_spec = r.string(c, where, "measured_spec");
  // Added with `run --sms`; absent (or null) where every launch had the whole GPU.
  if (const json* sms = r.optional_member(c, where, "green_context_sms");
      sms != nullptr && !sms->is_null())
    context.green_context_sms =
        static_cast<int>(r.integer(c, where, "green_context_sms", 1, kMaxSmCount));
  context.counters = r.string(c, where, "counters", true);
  context.counter_passes =
      static_cast<int>(r.integer(c, where, "counter_passes", 0, kMaxCounterPasses));
  // Reports written before calibration existed were judged against the spec sheet.
  context.ceilings =
      r.optional_member(c, where, "ceilings") != nullptr ? r.string(c, where, "ceilings") : "spec";
  if (context.ceilings != "spec" && context.ceilings != "calibrated")
    r.fail(key_path(where, "ceilings"), "must be \"spec\" or \"calibrated\"");
  const std::string metrics_path = key_path(where, "metrics");
  const json& metrics = r.member(c, where, "metrics");
  r.require_array(metrics, metrics_path);
  for (std::size_t i = 0; i < metrics.size(); ++i) {
    if (!metrics[i].is_string()) r.fail(index_path(metrics_path, i), "must be a string");
    context.metrics.push_back(metrics[i].get<std::string>());
  }
  const json& d = r.member(c, where, "device");
  if (!d.is_null()) context.device = device_from_json(r, d, key_path(where, "device"));
  return context;
}

// A row as read, with its `origin` member (checked against the report's origins once they
// are known: a file may put "origins" after "rows").
struct ReadRow {
  Row row;
  std::optional<json> origin;
};

ReadRow read_row_of(const JsonReader& r, const json& j, const std::string& where) {
  ReadRow out{row_from_json(r, j, where), std::nullopt};
  if (const json* o = r.optional_member(j, where, "origin"); o != nullptr) out.origin = *o;
  return out;
}

// The report in `root`; its rows are `streamed` when given (parse_json_streaming handed them
// on, and root's "rows" is empty), else read from root.
Report report_from_parts(const json& root, const std::string& origin,
                         std::vector<ReadRow>* streamed) {
  const JsonReader r(origin);
  if (!root.is_object()) r.fail("(top level)", "not a cuflash-roofline report");
  const json* version = r.optional_member(root, "", "schema_version");
  if (version == nullptr) r.fail("schema_version", "missing (not a cuflash-roofline report?)");
  const bool supported =
      (version->is_number_unsigned() || version->is_number_integer()) &&
      version->get<std::int64_t>() == kReportSchemaVersion &&
      !(version->is_number_unsigned() && version->get<std::uint64_t>() != kReportSchemaVersion);
  if (!supported)
    throw InputError(one_line(origin + ": schema_version " + shortened(version->dump(), 40) +
                              " is not supported (this tool reads " +
                              std::to_string(kReportSchemaVersion) + ")"));
  Report report;
  report.context = read_context(r, r.member(root, "", "context"), "context");
  const json& tool = r.member(root, "", "tool");
  report.context.tool_version = r.string(tool, "tool", "version");
  if (const json* origins = r.optional_member(root, "", "origins"); origins != nullptr) {
    r.require_array(*origins, "origins");
    for (std::size_t i = 0; i < origins->size(); ++i) {
      const std::string where = index_path("origins", i);
      ReportContext context = read_context(r, (*origins)[i], where);
      context.tool_version = r.string((*origins)[i], where, "tool_version");
      report.origins.push_back(std::move(context));
    }
  }
  const json& specs = r.member(root, "", "specs");
  r.require_object(specs, "specs");
  for (const auto& item : specs.items()) {
    GpuSpec spec = parse_gpu_spec(item.value(), origin + ": " + key_path("specs", item.key()));
    spec.key = item.key();
    spec.file.clear();
    report.specs.push_back(std::move(spec));
  }
  const json& rows = r.member(root, "", "rows");
  r.require_array(rows, "rows");
  const std::size_t count = streamed != nullptr ? streamed->size() : rows.size();
  report.rows.reserve(count);
  // A row is (kernel, point, spec): a second copy would hide from compare's matching.
  std::map<std::tuple<std::string, std::string, std::string>, std::size_t> seen;
  for (std::size_t i = 0; i < count; ++i) {
    const std::string where = index_path("rows", i);
    ReadRow read = streamed != nullptr ? std::move((*streamed)[i]) : read_row_of(r, rows[i], where);
    Row& row = read.row;
    if (read.origin) {
      const json& o = *read.origin;
      if (!o.is_number_unsigned() || o.get<std::uint64_t>() >= report.origins.size())
        r.fail(key_path(where, "origin"), "must index the report's origins (it has " +
                                              std::to_string(report.origins.size()) + ")");
      row.origin = o.get<std::size_t>();
    }
    const bool known = std::any_of(report.specs.begin(), report.specs.end(),
                                   [&](const GpuSpec& spec) { return spec.key == row.spec_key; });
    if (!known)
      r.fail(key_path(where, "spec"),
             quote_text(row.spec_key) + " is not among the report's specs");
    // A profiled launch is its own point: its process and launch index tell it apart; rows of
    // a merged report are told apart by their origin (device and host) too.
    std::string point =
        row_label(row) + (row.launch ? " pid " + std::to_string(row.launch->process_id) + " #" +
                                           std::to_string(row.launch->index)
                                     : "");
    if (row.origin) point += " origin " + std::to_string(*row.origin);
    auto [it, inserted] = seen.try_emplace({row.kernel, point, row.spec_key}, i);
    if (!inserted)
      r.fail(where, "duplicate of rows[" + std::to_string(it->second) + "] (" +
                        quote_text(row.kernel) + " " + row_label(row) + " on " +
                        quote_text(row.spec_key) + ")");
    report.rows.push_back(std::move(row));
  }
  return report;
}

}  // namespace

Report report_from_json(const json& root, const std::string& origin) {
  return report_from_parts(root, origin, nullptr);
}

Report report_from_text(std::string_view text, const std::string& origin) {
  // Fast path: each row is read as soon as it is parsed and its tree freed, so a report of
  // 100,000 rows never holds them all as JSON. Its first error may differ from the one a
  // reader of the whole document reports first (a row before a bad schema_version), so on an
  // error in a text of up to kMaxWholeParseBytes the whole document is read again, the slow
  // way, for the error it names; a larger text's tree would take about 20 times its size in
  // memory, so its error is the first one met in reading order.
  try {
    std::vector<ReadRow> rows;
    const JsonReader r(origin);
    const json root = parse_json_streaming(
        text, origin, "rows",
        [&](std::size_t i, json&& row) {
          rows.push_back(read_row_of(r, row, index_path("rows", i)));
        },
        "analysis");  // recomputed, never read
    return report_from_parts(root, origin, &rows);
  } catch (const InputError&) {
    if (text.size() > kMaxWholeParseBytes) throw;
  }
  return report_from_json(parse_json_text(text, origin), origin);
}

Report read_report_file(const std::filesystem::path& path) {
  return report_from_text(read_json_input(path), path.string());
}

}  // namespace roofline
