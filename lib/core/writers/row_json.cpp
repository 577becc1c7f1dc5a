// A report's row in JSON, with the derived `analysis` block (its verdict; the reader,
// report/row_read.cpp, ignores it: it is recomputed).
#include "lib/core/writers/row_json.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "lib/core/base/errors.hpp"
#include "lib/core/base/limits.hpp"
#include "lib/core/model/roofline.hpp"
#include "lib/core/report/json_values.hpp"
#include "lib/core/report/row_fields.hpp"
#include "lib/core/verdict/advice.hpp"
#include "lib/core/verdict/analysis.hpp"

namespace roofline {
namespace {

using nlohmann::json;
using namespace row_fields;  // the number tables shared with the other side

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
  if (a.energy) {
    const EnergyAnalysis& e = *a.energy;
    json terms = json::array();
    for (const EnergyTerm& t : e.model.terms)
      terms.push_back({{"term", t.id},
                       {"label", energy_term_label(t)},
                       {"unit", t.kind == EnergyTermKind::kStatic         ? "seconds"
                                : t.kind == EnergyTermKind::kPipe         ? "flops"
                                : t.kind == EnergyTermKind::kExp          ? "exponentials"
                                : t.kind == EnergyTermKind::kInstructions ? "instructions"
                                                                          : "bytes"},
                       {"work", json_number(t.work)},
                       {"joules_per_unit", json_number(t.joules_per_unit)},
                       {"joules", json_number(t.joules)},
                       {"share", json_number(t.share)}});
    out["energy"] = {{"joules", tagged(e.model.joules, Source::kModel)},
                     {"terms_joules", json_number(e.model.terms_joules)},
                     {"at_power_limit", e.model.at_power_limit},
                     {"power_limit_watts", json_number(e.model.power_limit_watts)},
                     {"terms", std::move(terms)},
                     {"uncosted", e.model.uncosted},
                     {"dominant", e.dominant},
                     {"dominant_share", json_number(e.dominant_share)},
                     {"flops_per_joule", tagged(e.flops_per_joule, e.flops_per_joule_source)},
                     {"roof_flops_per_joule", tagged(e.roof_flops_per_joule, Source::kModel)},
                     {"fraction_of_roof", json_number(e.fraction_of_roof)},
                     {"measured_joules", tagged(e.measured_joules, Source::kMeasured)},
                     {"modelled_vs_measured", json_number(e.modelled_vs_measured)},
                     {"verdict", e.verdict},
                     {"note", e.note}};
  } else {
    out["energy"] = nullptr;
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
  // Added with stall sampling: absent when the row was not sampled.
  if (row.stalls) r["stalls"] = stalls_json(*row.stalls);
  // Added with energy per launch: absent when not measured.
  if (row.energy) r["energy"] = energy_json(*row.energy);
  // Added with share runs: absent without one.
  if (row.share_run) r["share_run"] = share_run_json(*row.share_run);
  // Added with the kernel pass: absent when not recorded.
  if (!row.kernels.empty()) r["kernels"] = kernels_json(row.kernels);
  if (row.origin) r["origin"] = *row.origin;
  r["analysis"] = analysis_json(judged.of(row), judged.advice_of(row));
  return r;
}

}  // namespace roofline
