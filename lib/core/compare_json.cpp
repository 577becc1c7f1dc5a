#include <algorithm>

#include <nlohmann/json.hpp>

#include "lib/core/compare_writers.hpp"
#include "lib/core/json_write.hpp"

namespace roofline {

std::string render_compare_json(const Comparison& c) {
  using nlohmann::json;
  json root;
  root["kind"] = "cuflash-roofline compare";
  root["schema_version"] = 1;
  root["base"] = {{"file", c.base_origin},
                  {"device", c.base_device.empty() ? json(nullptr) : json(c.base_device)},
                  {"median_sm_clock_mhz", json_number(c.base_sm_clock_mhz)}};
  root["head"] = {{"file", c.head_origin},
                  {"device", c.head_device.empty() ? json(nullptr) : json(c.head_device)},
                  {"median_sm_clock_mhz", json_number(c.head_sm_clock_mhz)}};
  root["options"] = {{"tolerance", c.options.tolerance},
                     {"threshold", c.options.threshold},
                     {"alpha", c.options.alpha},
                     {"min_samples_for_u_test", kMinSamplesForUTest},
                     {"allow_mismatch", c.options.allow_mismatch},
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
  summary["regressed"] = c.regressed();
  summary["exit_code"] = c.exit_code();
  root["summary"] = summary;
  root["warnings"] = c.warnings;
  root["rows"] = json::array();
  for (const RowComparison& row : c.rows) {
    json r = {{"kernel_base", row.kernel_base},
              {"kernel_head", row.kernel_head},
              {"workload", workload_json(row.workload)},
              {"spec_base", row.spec_base},
              {"spec_head", row.spec_head},
              {"verdict", to_string(row.verdict)},
              {"regressed", row.regressed},
              {"more_work", row.more_work},
              {"notes", row.notes}};
    if (row.time) {
      const TimeComparison& t = *row.time;
      r["time"] = {{"base_samples", t.base_samples},
                   {"head_samples", t.head_samples},
                   {"base_median_seconds", json_number(t.base_median_seconds)},
                   {"head_median_seconds", json_number(t.head_median_seconds)},
                   {"base_min_seconds", json_number(t.base_min_seconds)},
                   {"base_max_seconds", json_number(t.base_max_seconds)},
                   {"head_min_seconds", json_number(t.head_min_seconds)},
                   {"head_max_seconds", json_number(t.head_max_seconds)},
                   {"base_relative_spread", json_number(t.base_relative_spread)},
                   {"head_relative_spread", json_number(t.head_relative_spread)},
                   {"relative_change", json_number(t.relative_change)},
                   {"test", to_string(t.test)},
                   {"p_value", json_number(t.p_value)},
                   {"ranges_overlap", t.ranges_overlap},
                   {"exceeds_threshold", t.exceeds_threshold},
                   {"significant", t.significant},
                   {"verdict", to_string(t.verdict)},
                   {"note", t.note}};
    } else {
      r["time"] = nullptr;
    }
    r["quantities"] = json::array();
    for (const QuantityChange& q : row.quantities)
      r["quantities"].push_back({{"id", q.id},
                                 {"unit", q.unit},
                                 {"base", json_number(q.base)},
                                 {"head", json_number(q.head)},
                                 {"relative_change", json_number(q.relative_change)},
                                 {"beyond_tolerance", q.beyond_tolerance},
                                 {"increased", q.increased}});
    root["rows"].push_back(std::move(r));
  }
  auto unmatched = [&](const std::vector<UnmatchedRow>& rows) {
    json out = json::array();
    for (const UnmatchedRow& row : rows)
      out.push_back({{"kernel", row.kernel},
                     {"workload", workload_json(row.workload)},
                     {"spec", row.spec_key}});
    return out;
  };
  root["only_base"] = unmatched(c.only_base);
  root["only_head"] = unmatched(c.only_head);
  return root.dump(2) + "\n";
}

}  // namespace roofline
