#include "lib/core/report/merge.hpp"

#include <cmath>
#include <map>
#include <optional>
#include <tuple>
#include <vector>

#include <nlohmann/json.hpp>

#include "lib/core/base/errors.hpp"

namespace roofline {
namespace {

bool same_number(double a, double b) {
  return a == b || (std::isnan(a) && std::isnan(b));
}

bool same_terms(const std::vector<ModelTerm>& a, const std::vector<ModelTerm>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (a[i].name != b[i].name || a[i].formula != b[i].formula ||
        !same_number(a[i].value, b[i].value))
      return false;
  return true;
}

// Everything a report stores for the row (origin aside).
bool same_contents(const Row& a, const Row& b) {
  const Prediction &p = a.prediction, &q = b.prediction;
  if (a.kernel != b.kernel || !(a.workload == b.workload) || a.spec_key != b.spec_key ||
      a.status != b.status || a.message != b.message ||
      !same_number(p.algorithmic_flops, q.algorithmic_flops) ||
      !same_number(p.model_flops, q.model_flops) ||
      !same_number(p.model_dram_bytes, q.model_dram_bytes) ||
      !same_number(p.compulsory_dram_bytes, q.compulsory_dram_bytes) ||
      !same_terms(p.flop_terms, q.flop_terms) || !same_terms(p.byte_terms, q.byte_terms))
    return false;
  if (a.launch != b.launch) return false;
  if (a.timing.has_value() != b.timing.has_value()) return false;
  if (a.timing) {
    const Timing &s = *a.timing, &t = *b.timing;
    if (s.samples_seconds.size() != t.samples_seconds.size() ||
        !same_number(s.sm_clock_before_mhz, t.sm_clock_before_mhz) ||
        !same_number(s.sm_clock_after_mhz, t.sm_clock_after_mhz) ||
        !same_number(s.sm_clock_timed_mhz, t.sm_clock_timed_mhz) || s.clock_limit != t.clock_limit)
      return false;
    for (std::size_t i = 0; i < s.samples_seconds.size(); ++i)
      if (!same_number(s.samples_seconds[i], t.samples_seconds[i])) return false;
  }
  if (a.counters.size() != b.counters.size()) return false;
  for (auto i = a.counters.begin(), j = b.counters.begin(); i != a.counters.end(); ++i, ++j)
    if (i->first != j->first || !same_number(i->second, j->second)) return false;
  if (a.verification.has_value() != b.verification.has_value()) return false;
  if (a.verification) {
    const Verification &v = *a.verification, &w = *b.verification;
    if (v.passed != w.passed || v.worst_output != w.worst_output ||
        !same_number(v.relative_l2_error, w.relative_l2_error) ||
        !same_number(v.max_abs_error, w.max_abs_error) ||
        !same_number(v.fp16_relative_l2_error, w.fp16_relative_l2_error) ||
        !same_number(v.fp16_max_abs_error, w.fp16_max_abs_error))
      return false;
  }
  return true;
}

// Kernel, workload (its label names every field, decode ones included; a ragged batch's lengths,
// which the label only hashes, come whole), spec, device; a profiled launch adds its process and
// launch index.
using RowKey = std::tuple<std::string, std::string, std::vector<int>, std::string, std::string,
                          std::int64_t, std::int64_t>;

RowKey key_of(const Row& row, const std::string& device) {
  return {row.kernel,
          row.workload.label(),
          row.workload.kv_lens,
          row.spec_key,
          device,
          row.launch ? row.launch->process_id : -1,
          row.launch ? row.launch->index : -1};
}

std::string describe(const Row& row, const std::string& device) {
  return row.kernel + " " + row_label(row) + " on spec " + row.spec_key +
         (device.empty() ? " (model)" : " measured on " + device);
}

}  // namespace

bool same_place(const ReportContext& a, const ReportContext& b) {
  return a.host == b.host && a.device == b.device && a.tool_version == b.tool_version &&
         a.projection == b.projection && a.measured_spec == b.measured_spec &&
         a.green_context_sms == b.green_context_sms && a.ceilings == b.ceilings &&
         a.metrics == b.metrics && a.counter_passes == b.counter_passes;
}

std::string device_name_of(const Report& report, const Row& row) {
  const ReportContext& context = report.context_of(row);
  return context.device ? context.device->name : std::string();
}

Report merge_reports(const std::vector<Report>& reports, const std::vector<std::string>& names) {
  if (reports.empty()) throw InputError("merge needs at least one report");
  auto name_of = [&](std::size_t i) {
    return i < names.size() ? names[i] : "report " + std::to_string(i + 1);
  };
  for (std::size_t i = 0; i < reports.size(); ++i)
    if (reports[i].schema_version != kReportSchemaVersion)
      throw InputError(name_of(i) + ": schema_version " +
                       std::to_string(reports[i].schema_version) + " cannot be merged (this tool " +
                       "writes " + std::to_string(kReportSchemaVersion) + ")");

  // Specs, united by key.
  Report merged;
  std::map<std::string, std::pair<nlohmann::json, std::size_t>> spec_seen;
  for (std::size_t i = 0; i < reports.size(); ++i)
    for (const GpuSpec& spec : reports[i].specs) {
      nlohmann::json contents = to_json(spec);
      auto [it, fresh] = spec_seen.emplace(spec.key, std::pair{contents, i});
      if (fresh) {
        merged.specs.push_back(spec);
        merged.specs.back().file.clear();
      } else if (it->second.first != contents) {
        throw InputError("spec \"" + spec.key + "\" differs between " + name_of(it->second.second) +
                         " and " + name_of(i) +
                         ": merge reports judged against the same spec file");
      }
    }

  // Places: every distinct context a row was measured in, in order of first appearance.
  std::vector<ReportContext> places;
  auto place_of = [&](const ReportContext& context) {
    for (std::size_t p = 0; p < places.size(); ++p)
      if (same_place(places[p], context)) return p;
    places.push_back(context);
    return places.size() - 1;
  };

  // Rows: first appearance wins; identical duplicates collapse, different ones are refused.
  std::map<RowKey, std::pair<std::size_t, std::size_t>> row_seen;  // -> (merged index, input)
  for (std::size_t i = 0; i < reports.size(); ++i)
    for (const Row& row : reports[i].rows) {
      const std::string device = device_name_of(reports[i], row);
      auto [it, fresh] = row_seen.emplace(key_of(row, device), std::pair{merged.rows.size(), i});
      if (!fresh) {
        if (!same_contents(merged.rows[it->second.first], row))
          throw InputError("conflicting rows for " + describe(row, device) + " in " +
                           name_of(it->second.second) + " and " + name_of(i) +
                           ": each point may be measured once per device");
        continue;
      }
      Row copy = row;
      copy.origin = place_of(reports[i].context_of(row));
      merged.rows.push_back(std::move(copy));
    }

  if (places.size() <= 1) {
    merged.context = reports.front().context;
    for (Row& row : merged.rows) row.origin.reset();
    return merged;
  }
  merged.context = make_context("merge");
  merged.context.device = places.front().device;
  for (const ReportContext& place : places)
    if (!(place.device == merged.context.device)) merged.context.device.reset();
  merged.context.counters = "rows from several origins: see each row's origin";
  merged.origins = std::move(places);
  return merged;
}

}  // namespace roofline
