// A report's row read from JSON. Fields added after schema version 1 was published are optional
// on reading, with the meaning they had before they existed (the "Added with" notes).
#include "lib/core/report/row_read.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "lib/core/base/errors.hpp"
#include "lib/core/base/limits.hpp"
#include "lib/core/report/json_values.hpp"
#include "lib/core/report/row_fields.hpp"

namespace roofline {
namespace {

using nlohmann::json;
using namespace row_fields;  // the number tables shared with the other side

std::vector<ModelTerm> read_terms(const JsonReader& r, const json& model, const std::string& where,
                                  const char* key, const char* unit, const Bound& bound) {
  const json& j = r.member(model, where, key);
  const std::string path = key_path(where, key);
  r.require_array(j, path);
  std::vector<ModelTerm> terms;
  for (std::size_t i = 0; i < j.size(); ++i) {
    const std::string w = index_path(path, i);
    terms.push_back({r.string(j[i], w, "name", true), r.string(j[i], w, "formula", true),
                     r.number_or_nan(j[i], w, unit, bound)});
  }
  return terms;
}

}  // namespace

Row row_from_json(const JsonReader& r, const json& j, const std::string& where) {
  r.require_object(j, where);
  Row row;
  row.kernel = r.string(j, where, "kernel");
  // "launch" is absent or null for the bundled kernels' rows.
  if (const json* l = r.optional_member(j, where, "launch"); l != nullptr && !l->is_null())
    row.launch = launch_from_json(r, *l, key_path(where, "launch"));
  const json& w = r.member(j, where, "workload");
  if (w.is_null()) {
    if (has_workload(row))
      r.fail(key_path(where, "workload"), "null only for a launch without workload");
  } else {
    row.workload = workload_from_json(r, w, key_path(where, "workload"));
  }
  row.spec_key = r.string(j, where, "spec");
  auto status = parse_row_status(r.string(j, where, "status", true));
  if (!status) r.fail(key_path(where, "status"), "unknown status");
  row.status = *status;
  row.message = r.string(j, where, "message", true);

  const std::string mw = key_path(where, "model");
  const json& m = r.member(j, where, "model");
  for (const PredictionNumber& n : kModelNumbers)
    row.prediction.*n.member = r.number_or_nan(m, mw, n.key, *n.bound);
  row.prediction.flop_terms = read_terms(r, m, mw, "flop_terms", "flops", kFlops);
  row.prediction.byte_terms = read_terms(r, m, mw, "byte_terms", "bytes", kBytes);
  // Added with the cache-aware model; reports written before it lack them (then the DRAM
  // estimate was the no-reuse bound).
  row.prediction.no_reuse_dram_bytes = r.optional_member(m, mw, "no_reuse_dram_bytes") != nullptr
                                           ? r.number_or_nan(m, mw, "no_reuse_dram_bytes", kBytes)
                                           : row.prediction.model_dram_bytes;
  if (r.optional_member(m, mw, "dram_model") != nullptr)
    row.prediction.dram_model = r.string(m, mw, "dram_model", true);
  if (r.optional_member(m, mw, "compulsory_formula") != nullptr)
    row.prediction.compulsory_formula = r.string(m, mw, "compulsory_formula", true);
  if (r.optional_member(m, mw, "cache_aware_byte_terms") != nullptr)
    row.prediction.cache_aware_byte_terms =
        read_terms(r, m, mw, "cache_aware_byte_terms", "bytes", kByteTerm);
  // Added with the L1 model (standard attention); absent before it and for the flash kernels.
  if (r.optional_member(m, mw, "l1_bytes") != nullptr)
    row.prediction.model_l1_bytes = r.number_or_nan(m, mw, "l1_bytes", kBytes);
  if (r.optional_member(m, mw, "l1_byte_terms") != nullptr)
    row.prediction.l1_byte_terms = read_terms(r, m, mw, "l1_byte_terms", "bytes", kBytes);
  // Added with the exponential roof (issue 23); absent before it: no model exponentials.
  if (r.optional_member(m, mw, "exponentials") != nullptr)
    row.prediction.model_exponentials = r.number_or_nan(m, mw, "exponentials", kExponentials);
  if (r.optional_member(m, mw, "exp_terms") != nullptr)
    row.prediction.exp_terms = read_terms(r, m, mw, "exp_terms", "exponentials", kExponentials);

  const json& t = r.member(j, where, "timing");
  if (!t.is_null()) {
    Timing timing;
    const std::string tw = key_path(where, "timing");
    const json& samples = r.member(t, tw, "samples_seconds");
    const std::string sw = key_path(tw, "samples_seconds");
    r.require_array(samples, sw);
    if (samples.empty()) r.fail(sw, "must hold at least one sample");
    if (samples.size() > static_cast<std::size_t>(kMaxSamples))
      r.fail(sw, "must hold at most " + std::to_string(kMaxSamples) + " samples");
    for (std::size_t i = 0; i < samples.size(); ++i)
      timing.samples_seconds.push_back(
          r.number_value(samples[i], index_path(sw, i), kSampleSeconds));
    if (r.optional_member(t, tw, "rounds") != nullptr)  // optional: absent means 1
      timing.rounds = static_cast<int>(r.integer(
          t, tw, "rounds", 1,
          std::max<std::int64_t>(1, static_cast<std::int64_t>(timing.samples_seconds.size()))));
    timing.sm_clock_before_mhz = r.number_or_nan(t, tw, "sm_clock_before_mhz", kMeasuredClockMhz);
    timing.sm_clock_after_mhz = r.number_or_nan(t, tw, "sm_clock_after_mhz", kMeasuredClockMhz);
    if (std::isnan(timing.sm_clock_before_mhz)) timing.sm_clock_before_mhz = 0;
    if (std::isnan(timing.sm_clock_after_mhz)) timing.sm_clock_after_mhz = 0;
    // Both optional: reports before 2026-12-02 have neither.
    if (r.optional_member(t, tw, "sm_clock_timed_mhz") != nullptr) {
      timing.sm_clock_timed_mhz = r.number_or_nan(t, tw, "sm_clock_timed_mhz", kMeasuredClockMhz);
      if (std::isnan(timing.sm_clock_timed_mhz)) timing.sm_clock_timed_mhz = 0;
    }
    if (const json* limit = r.optional_member(t, tw, "clock_limit");
        limit != nullptr && !limit->is_null()) {
      timing.clock_limit = r.string(t, tw, "clock_limit");
      if (!is_clock_limit(timing.clock_limit))
        r.fail(key_path(tw, "clock_limit"),
               "must be \"none\", \"power cap\", \"thermal\" or \"power cap, thermal\"");
    }
    row.timing = std::move(timing);
  }
  const json& c = r.member(j, where, "counters");
  const std::string cw = key_path(where, "counters");
  r.require_object(c, cw);
  for (const auto& [key, value] : c.items()) {
    if (value.is_null()) continue;
    row.counters[key] = r.number_value(value, key_path(cw, key), kCounterValue);
  }
  if (const json* samples = r.optional_member(j, where, "counter_samples");
      samples != nullptr && !samples->is_null()) {
    const std::string sw = key_path(where, "counter_samples");
    r.require_object(*samples, sw);
    for (const auto& [key, values] : samples->items()) {
      const std::string kw = key_path(sw, key);
      if (!values.is_array() || values.empty()) r.fail(kw, "must be a non-empty array");
      if (values.size() > static_cast<std::size_t>(kMaxSamples))
        r.fail(kw, "must hold at most " + std::to_string(kMaxSamples) + " samples");
      std::vector<double>& out = row.counter_samples[key];
      for (std::size_t i = 0; i < values.size(); ++i)
        out.push_back(r.number_value(values[i], index_path(kw, i), kCounterValue));
    }
  }
  const json& v = r.member(j, where, "verification");
  if (!v.is_null()) {
    const std::string vw = key_path(where, "verification");
    Verification ver;
    ver.passed = r.boolean(v, vw, "passed");
    for (const VerificationNumber& n : kVerificationNumbers)
      ver.*n.member = r.number_or_nan(v, vw, n.key, kErrorNorm);
    ver.worst_output = r.string(v, vw, "worst_output", true);
    row.verification = ver;
  }
  // Added with stall sampling (optional: reports before it, and rows not sampled, have none).
  if (const json* stalls = r.optional_member(j, where, "stalls");
      stalls != nullptr && !stalls->is_null())
    row.stalls = stalls_from_json(r, *stalls, key_path(where, "stalls"));
  // Added with energy per launch (optional likewise).
  if (const json* energy = r.optional_member(j, where, "energy");
      energy != nullptr && !energy->is_null())
    row.energy = energy_from_json(r, *energy, key_path(where, "energy"));
  // Added with share runs (optional likewise).
  if (const json* share = r.optional_member(j, where, "share_run");
      share != nullptr && !share->is_null())
    row.share_run = share_run_from_json(r, *share, key_path(where, "share_run"));
  // Added with the kernel pass (optional likewise).
  if (const json* kernels = r.optional_member(j, where, "kernels");
      kernels != nullptr && !kernels->is_null())
    row.kernels = kernels_from_json(r, *kernels, key_path(where, "kernels"));
  return row;
}

}  // namespace roofline
