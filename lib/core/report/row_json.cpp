// A report's rows in JSON: the writer (with the derived `analysis` block) beside the reader (which
// ignores that block: it is recomputed). Fields added after schema version 1 was published are
// optional on reading, with the meaning they had before they existed (the "Added with" notes).
#include "lib/core/report/row_json.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "lib/core/base/errors.hpp"
#include "lib/core/base/limits.hpp"
#include "lib/core/model/roofline.hpp"
#include "lib/core/report/advice.hpp"
#include "lib/core/report/analysis.hpp"
#include "lib/core/report/json_values.hpp"

namespace roofline {
namespace {

using nlohmann::json;

// The plain numbers of a row's blocks, key and member, for the writer and the reader alike.
struct PredictionNumber {
  const char* key;
  double Prediction::*member;
  const Bound* bound;
};
constexpr PredictionNumber kModelNumbers[] = {
    {"algorithmic_flops", &Prediction::algorithmic_flops, &kFlops},
    {"flops", &Prediction::model_flops, &kFlops},
    {"dram_bytes", &Prediction::model_dram_bytes, &kBytes},
    {"compulsory_dram_bytes", &Prediction::compulsory_dram_bytes, &kBytes},
};

struct VerificationNumber {
  const char* key;
  double Verification::*member;
};
constexpr VerificationNumber kVerificationNumbers[] = {
    {"relative_l2_error", &Verification::relative_l2_error},
    {"max_abs_error", &Verification::max_abs_error},
    {"fp16_relative_l2_error", &Verification::fp16_relative_l2_error},
    {"fp16_max_abs_error", &Verification::fp16_max_abs_error},
};

json tagged(double value, Source source) {
  return {{"value", json_number(value)}, {"source", to_string(source)}};
}

Source derived(Source a, Source b) {
  if (a == Source::kProjected || b == Source::kProjected) return Source::kProjected;
  return a == Source::kMeasured || b == Source::kMeasured ? Source::kMeasured : Source::kModel;
}

json terms_json(const std::vector<ModelTerm>& terms, const char* unit) {
  json out = json::array();
  for (const ModelTerm& term : terms)
    out.push_back({{"name", term.name}, {"formula", term.formula}, {unit, term.value}});
  return out;
}

json analysis_json(const RowAnalysis& a, const std::optional<Advice>& advice) {
  json out;
  out["has_verdict"] = a.has_verdict;
  out["projected"] = a.projected;
  if (a.projected) out["projection_note"] = a.projection_note;
  out["time_seconds"] = tagged(a.time_seconds, a.time_source);
  out["flops"] = tagged(a.flops, a.flops_source);
  out["algorithmic_flops"] = tagged(a.algorithmic_flops, Source::kModel);
  out["total_counted_flops"] = tagged(a.total_counted_flops, Source::kMeasured);
  out["tflops_per_second"] =
      tagged(a.flops_per_second / 1e12, derived(a.flops_source, a.time_source));
  out["algorithmic_tflops_per_second"] =
      tagged(a.algorithmic_flops_per_second / 1e12, a.time_source);
  if (a.ceiling != nullptr) {
    out["ceiling"] = {{"id", a.ceiling->id()},
                      {"label", a.ceiling->label()},
                      {"peak_tflops", tagged(a.ceiling->peak_tflops, Source::kSpec)},
                      {"clock_mhz", tagged(a.ceiling->clock_mhz, Source::kSpec)},
                      {"peak_tflops_at_measured_clock",
                       tagged(a.peak_at_measured_clock / 1e12, Source::kMeasured)}};
  } else {
    out["ceiling"] = nullptr;
  }
  out["path_note"] = a.path_note;
  out["measured_sm_clock_mhz"] = tagged(a.measured_clock_hz / 1e6, Source::kMeasured);
  const Source util_source = derived(a.flops_source, a.time_source);
  out["compute_utilisation"] = tagged(a.compute_utilisation, util_source);
  out["compute_utilisation_at_measured_clock"] =
      tagged(a.compute_utilisation_measured_clock, Source::kMeasured);
  out["levels"] = json::array();
  for (const LevelAnalysis& level : a.levels) {
    const Source s = derived(level.bytes_source, a.time_source);
    out["levels"].push_back(
        {{"level", to_string(level.level)},
         {"bytes", tagged(level.bytes, level.bytes_source)},
         {"intensity_flop_per_byte",
          tagged(level.intensity, derived(level.bytes_source, a.flops_source))},
         {"peak_bandwidth_gbps",
          tagged(level.peak_bandwidth_bytes_per_second / 1e9, Source::kSpec)},
         {"achieved_gbps", tagged(level.achieved_bytes_per_second / 1e9, s)},
         {"bandwidth_utilisation", tagged(level.bandwidth_utilisation, s)},
         {"ridge_flop_per_byte", tagged(level.ridge, Source::kSpec)},
         {"ridge_factor", tagged(level.ridge_factor, derived(level.bytes_source, a.flops_source))},
         {"attainable_tflops_per_second", tagged(level.attainable_flops_per_second / 1e12, s)},
         {"time_floor_seconds", tagged(level.time_floor_seconds, level.bytes_source)},
         {"partial", level.partial}});
  }
  if (a.exp.present) {
    const ExpRoofAnalysis& e = a.exp;
    const Source rate = derived(e.exponentials_source, a.time_source);
    out["exp"] = {
        {"exponentials", tagged(e.exponentials, e.exponentials_source)},
        {"model_exponentials", tagged(e.model_exponentials, Source::kModel)},
        {"exponentials_vs_model", json_number(e.exponentials_vs_model)},
        {"flops_per_exponential",
         tagged(e.flops_per_exponential, derived(a.flops_source, e.exponentials_source))},
        {"rate_per_second", tagged(e.rate_per_second, Source::kSpec)},
        {"rate_per_second_at_measured_clock", tagged(e.rate_at_measured_clock, Source::kMeasured)},
        {"roof_tflops_per_second",
         tagged(e.roof_flops_per_second / 1e12, derived(a.flops_source, e.exponentials_source))},
        {"roof_tflops_per_second_at_measured_clock",
         tagged(e.roof_at_measured_clock / 1e12, Source::kMeasured)},
        {"time_floor_seconds", tagged(e.time_floor_seconds, e.exponentials_source)},
        {"achieved_per_second", tagged(e.achieved_per_second, rate)},
        {"utilisation", tagged(e.utilisation, rate)}};
  } else {
    out["exp"] = nullptr;
  }
  out["exp_bound"] = a.exp_bound;
  out["compute_bound"] = a.compute_bound;
  out["binding"] = a.binding;
  out["regime"] = a.regime;
  out["ridge_factor"] = json_number(a.ridge_factor);
  out["ridge_distance"] = describe_ridge_factor(a.ridge_factor);
  out["attainable_tflops_per_second"] = json_number(a.attainable_flops_per_second / 1e12);
  out["time_floor_seconds"] = json_number(a.time_floor_seconds);
  out["fraction_of_bound"] = json_number(a.fraction_of_bound);
  if (a.tail) {
    const TailEffect& t = *a.tail;
    out["tail"] = {{"ctas", t.ctas},
                   {"sm_count", t.sm_count},
                   {"ctas_per_sm", t.ctas_per_sm > 0 ? json(t.ctas_per_sm) : json(nullptr)},
                   {"waves", t.waves > 0 ? json(t.waves) : json(nullptr)},
                   {"last_wave_fill", json_number(t.last_wave_fill)},
                   {"efficiency", json_number(t.efficiency)},
                   {"equal_work", t.equal_work},
                   {"grid_from", t.origin},
                   {"roof_tflops_per_second", json_number(a.tail_roof_flops_per_second / 1e12)},
                   {"binds", a.tail_bound},
                   {"description", t.describe()}};
  } else {
    out["tail"] = nullptr;
  }
  out["flops_vs_model"] = json_number(a.flops_vs_model);
  out["dram_bytes_vs_model"] = json_number(a.dram_bytes_vs_model);
  out["dram_bytes_vs_compulsory"] = json_number(a.dram_bytes_vs_compulsory);
  if (advice) {
    const Advice& v = *advice;
    out["advice"] = {{"roof", v.roof},
                     {"of_roof", json_number(v.of_roof)},
                     {"gain_to_roof", json_number(v.gain_to_roof)},
                     {"next_roof", v.next_roof.empty() ? json(nullptr) : json(v.next_roof)},
                     {"next_roof_ratio", json_number(v.next_roof_ratio)},
                     {"lever", to_string(v.lever)},
                     {"evidence", v.evidence},
                     {"action", v.action},
                     {"target_time_seconds", json_number(v.target_time_seconds)},
                     {"estimated_speedup", json_number(v.estimated_speedup)},
                     {"also", json::array()},
                     {"text", v.line()}};
    for (const LeverAdvice& l : v.also)
      out["advice"]["also"].push_back({{"lever", to_string(l.lever)},
                                       {"evidence", l.evidence},
                                       {"action", l.action},
                                       {"target_time_seconds", json_number(l.target_time_seconds)},
                                       {"estimated_speedup", json_number(l.estimated_speedup)}});
  } else {
    out["advice"] = nullptr;
  }
  out["warnings"] = json::array();
  for (const RowNote& note : a.warnings) out["warnings"].push_back(note.text);
  out["footnotes"] = json::array();
  for (const RowNote& note : a.footnotes) out["footnotes"].push_back(note.text);
  return out;
}

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

json row_json(const Row& row, const JudgedReport& judged) {
  json r;
  r["kernel"] = row.kernel;
  r["workload"] = has_workload(row) ? workload_json(row.workload) : json(nullptr);
  r["launch"] = row.launch ? launch_json(*row.launch) : json(nullptr);
  r["spec"] = row.spec_key;
  r["status"] = to_string(row.status);
  r["message"] = row.message;
  const Prediction& p = row.prediction;
  r["model"] = {{"dram_model", p.dram_model},
                {"no_reuse_dram_bytes", p.no_reuse_dram_bytes},
                {"compulsory_formula", p.compulsory_formula},
                {"flop_terms", terms_json(p.flop_terms, "flops")},
                {"byte_terms", terms_json(p.byte_terms, "bytes")},
                {"cache_aware_byte_terms", terms_json(p.cache_aware_byte_terms, "bytes")}};
  for (const PredictionNumber& n : kModelNumbers) r["model"][n.key] = p.*n.member;
  if (!p.l1_byte_terms.empty()) {
    r["model"]["l1_bytes"] = p.model_l1_bytes;
    r["model"]["l1_byte_terms"] = terms_json(p.l1_byte_terms, "bytes");
  }
  if (!p.exp_terms.empty()) {
    r["model"]["exponentials"] = p.model_exponentials;
    r["model"]["exp_terms"] = terms_json(p.exp_terms, "exponentials");
  }
  if (row.timing) {
    const Timing& t = *row.timing;
    r["timing"] = {{"samples_seconds", t.samples_seconds},
                   {"rounds", t.rounds},
                   {"median_seconds", json_number(t.median_seconds())},
                   {"min_seconds", json_number(t.min_seconds())},
                   {"max_seconds", json_number(t.max_seconds())},
                   {"relative_spread", json_number(t.relative_spread())},
                   {"sm_clock_before_mhz",
                    t.sm_clock_before_mhz > 0 ? json(t.sm_clock_before_mhz) : json(nullptr)},
                   {"sm_clock_after_mhz",
                    t.sm_clock_after_mhz > 0 ? json(t.sm_clock_after_mhz) : json(nullptr)},
                   {"sm_clock_timed_mhz",
                    t.sm_clock_timed_mhz > 0 ? json(t.sm_clock_timed_mhz) : json(nullptr)},
                   {"clock_limit", t.clock_limit.empty() ? json(nullptr) : json(t.clock_limit)}};
  } else {
    r["timing"] = nullptr;
  }
  r["counters"] = json::object();
  for (const auto& [key, value] : row.counters) r["counters"][key] = json_number(value);
  if (!row.counter_samples.empty()) {
    r["counter_samples"] = json::object();
    for (const auto& [key, values] : row.counter_samples) {
      json list = json::array();
      for (double value : values) list.push_back(json_number(value));
      r["counter_samples"][key] = std::move(list);
    }
  }
  if (row.verification) {
    const Verification& v = *row.verification;
    r["verification"] = {{"passed", v.passed}, {"worst_output", v.worst_output}};
    for (const VerificationNumber& n : kVerificationNumbers)
      r["verification"][n.key] = json_number(v.*n.member);
  } else {
    r["verification"] = nullptr;
  }
  if (row.origin) r["origin"] = *row.origin;
  r["analysis"] = analysis_json(judged.of(row), judged.advice_of(row));
  return r;
}

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
  return row;
}

}  // namespace roofline
