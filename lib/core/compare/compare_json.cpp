#include <algorithm>

#include <nlohmann/json.hpp>

#include "lib/core/base/statistics.hpp"
#include "lib/core/compare/compare_writers.hpp"
#include "lib/core/report/json_values.hpp"

namespace roofline {

std::string render_compare_json(const Comparison& c) {
  using nlohmann::json;
  json root;
  root["kind"] = "cuflash-roofline compare";
  root["schema_version"] = kCompareSchemaVersion;
  root["base"] = {{"file", c.base_origin},
                  {"device", c.base_device.empty() ? json(nullptr) : json(c.base_device)},
                  {"median_sm_clock_mhz", json_number(c.base_sm_clock_mhz)}};
  root["head"] = {{"file", c.head_origin},
                  {"device", c.head_device.empty() ? json(nullptr) : json(c.head_device)},
                  {"median_sm_clock_mhz", json_number(c.head_sm_clock_mhz)}};
  root["options"] = {{"tolerance", c.options.tolerance},
                     {"threshold", c.options.threshold},
                     {"alpha", c.options.alpha},
                     {"power", c.options.power},
                     {"process_noise", c.options.noise.process_noise},
                     {"cache_floor", c.options.noise.cache_floor},
                     {"cache_floor_bytes", c.options.noise.cache_floor_bytes},
                     {"allow_mismatch", c.options.allow_mismatch},
                     {"fail_on_more_work", c.options.fail_on_more_work},
                     {"kernel_base", c.options.kernel_base},
                     {"kernel_head", c.options.kernel_head}};
  json summary = json::object();
  for (Verdict v : {Verdict::kFaster, Verdict::kSlower, Verdict::kSame, Verdict::kAmbiguous,
                    Verdict::kFailed, Verdict::kNotCompared}) {
    std::string key(to_string(v));
    std::replace(key.begin(), key.end(), ' ', '_');
    summary[key] = c.count(v);
  }
  summary["more_work"] = c.more_work_count();
  summary["only_base"] = c.only_base.size();
  summary["only_head"] = c.only_head.size();
  summary["timed"] = c.timed_count();
  {
    std::vector<double> detectable;
    for (const RowComparison& row : c.rows)
      if (row.time) detectable.push_back(row.time->detectable_change);
    summary["detectable_change_median"] =
        detectable.empty() ? json(nullptr) : json_number(median(detectable));
    summary["detectable_change_max"] =
        detectable.empty() ? json(nullptr)
                           : json_number(*std::max_element(detectable.begin(), detectable.end()));
  }
  summary["regressed"] = c.regressed();
  summary["exit_code"] = c.exit_code();
  root["summary"] = summary;
  root["warnings"] = c.warnings;
  root["notes"] = c.notes;
  root["rows"] = json::array();
  for (const RowComparison& row : c.rows) {
    json r = {{"kernel_base", row.kernel_base},
              {"kernel_head", row.kernel_head},
              {"workload", workload_json(row.workload)},
              {"point", row.point},
              {"spec_base", row.spec_base},
              {"spec_head", row.spec_head},
              {"verdict", to_string(row.verdict)},
              {"regressed", row.regressed},
              {"more_work", row.more_work},
              {"notes", row.notes}};
    if (row.time) {
      const TimeComparison& t = *row.time;
      auto side = [](const TimeSide& s) {
        return json{{"samples", s.samples},
                    {"rounds", s.rounds},
                    {"median_seconds", json_number(s.median_seconds)},
                    {"min_seconds", json_number(s.min_seconds)},
                    {"max_seconds", json_number(s.max_seconds)},
                    {"relative_spread", json_number(s.relative_spread)},
                    {"log_center", json_number(s.log_center.value)},
                    {"log_center_variance", json_number(s.log_center.variance)},
                    {"df", json_number(s.log_center.df)}};
      };
      r["time"] = {{"base", side(t.base)},
                   {"head", side(t.head)},
                   {"relative_change", json_number(t.relative_change)},
                   {"standard_error", json_number(t.standard_error)},
                   {"df", json_number(t.df)},
                   {"p_value", json_number(t.p_value)},
                   {"exceeds_threshold", t.exceeds_threshold},
                   {"significant", t.significant},
                   {"detectable_change", json_number(t.detectable_change)},
                   {"verdict", to_string(t.verdict)},
                   {"note", t.note}};
    } else {
      r["time"] = nullptr;
    }
    r["quantities"] = json::array();
    for (const QuantityChange& q : row.quantities)
      r["quantities"].push_back({{"id", q.id},
                                 {"unit", q.unit},
                                 {"kind", to_string(q.kind)},
                                 {"gated", q.gated},
                                 {"base", json_number(q.base)},
                                 {"head", json_number(q.head)},
                                 {"base_counts", q.base_counts},
                                 {"head_counts", q.head_counts},
                                 {"base_spread", json_number(q.base_spread)},
                                 {"head_spread", json_number(q.head_spread)},
                                 {"relative_change", json_number(q.relative_change)},
                                 {"margin", json_number(q.margin)},
                                 {"changed", q.changed},
                                 {"increased", q.increased}});
    root["rows"].push_back(std::move(r));
  }
  auto unmatched = [&](const std::vector<UnmatchedRow>& rows) {
    json out = json::array();
    for (const UnmatchedRow& row : rows)
      out.push_back({{"kernel", row.kernel},
                     {"workload", workload_json(row.workload)},
                     {"point", row.point},
                     {"spec", row.spec_key}});
    return out;
  };
  root["only_base"] = unmatched(c.only_base);
  root["only_head"] = unmatched(c.only_head);
  return root.dump(2) + "\n";
}

}  // namespace roofline
