// A judged report as JSON: context, origins, specs (rows are row_json.cpp's), each row with its
// `analysis` block. Schema: report.hpp's kReportSchemaVersion, and its rules for a bump; the
// reader is report/report_read.cpp.
#include <string>

#include <nlohmann/json.hpp>

#include "lib/core/report/json_values.hpp"
#include "lib/core/writers/report_writers.hpp"
#include "lib/core/writers/row_json.hpp"

namespace roofline {
namespace {

using nlohmann::json;

json context_json(const ReportContext& c) {
  json context = {
      {"command", c.command},
      {"command_line", c.command_line},
      {"program_command", c.program_command.empty() ? json(nullptr) : json(c.program_command)},
      {"host", c.host},
      {"time_utc", c.time_utc},
      {"projection", c.projection},
      {"measured_spec", c.measured_spec.empty() ? json(nullptr) : json(c.measured_spec)},
      {"counters", c.counters},
      {"metrics", c.metrics},
      {"counter_passes", c.counter_passes},
      {"ceilings", c.ceilings}};
  context["device"] = c.device ? device_json(*c.device) : json(nullptr);
  // Only where the run had a share of the GPU (`run --sms`); readers take its absence as none.
  if (c.green_context_sms > 0) context["green_context_sms"] = c.green_context_sms;
  return context;
}

// The report without its rows ("rows" an empty array).
json report_head_json(const Report& report) {
  json root;
  root["schema_version"] = report.schema_version;
  root["tool"] = {{"name", "cuflash-roofline"}, {"version", report.context.tool_version}};
  const ReportContext& c = report.context;
  root["context"] = context_json(c);
  if (!report.origins.empty()) {
    root["origins"] = json::array();
    for (const ReportContext& o : report.origins) {
      json origin = context_json(o);
      origin["tool_version"] = o.tool_version;
      root["origins"].push_back(std::move(origin));
    }
  }
  root["specs"] = json::object();
  for (const GpuSpec& spec : report.specs) root["specs"][spec.key] = to_json(spec);
  root["rows"] = json::array();
  return root;
}

}  // namespace

json report_to_json(const Report& report) {
  return report_to_json(JudgedReport(report));
}

json report_to_json(const JudgedReport& judged) {
  json root = report_head_json(judged.report());
  for (const Row& row : judged.rows()) root["rows"].push_back(row_json(row, judged));
  return root;
}

std::string render_json(const Report& report) {
  return render_json(JudgedReport(report));
}

std::string render_json(const JudgedReport& judged) {
  const Report& report = judged.report();
  // The text of report_to_json(report).dump(2), with the JSON tree of one row at a time in
  // memory rather than the whole report's (about 20 bytes of tree per byte of text). Invalid
  // UTF-8 (a host or device name) becomes U+FFFD rather than an exception.
  auto dump = [](const json& j) { return j.dump(2, ' ', false, json::error_handler_t::replace); };
  std::string head = dump(report_head_json(report));
  if (report.rows.empty()) return head + "\n";
  // "rows" is a key of the top level, indented by two; a string holding that text would have
  // its quotes escaped.
  const std::string empty_rows = "\n  \"rows\": []";
  const std::size_t at = head.find(empty_rows);
  std::string out = head.substr(0, at) + "\n  \"rows\": [";
  for (std::size_t i = 0; i < report.rows.size(); ++i) {
    std::string row = dump(row_json(report.rows[i], judged));
    out += i == 0 ? "\n    " : ",\n    ";
    // Each line of the row four more spaces in (JSON strings hold no raw newline).
    for (std::size_t from = 0, to; from < row.size(); from = to + 1) {
      to = std::min(row.find('\n', from), row.size());
      out.append(row, from, to - from);
      if (to < row.size()) out += "\n    ";
    }
  }
  out += "\n  ]";
  out += head.substr(at + empty_rows.size());
  return out + "\n";
}

}  // namespace roofline
