#include "lib/core/report_io.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <sstream>
#include <tuple>

#include <nlohmann/json.hpp>

#include "lib/core/analysis.hpp"
#include "lib/core/errors.hpp"
#include "lib/core/json_reader.hpp"
#include "lib/core/json_write.hpp"
#include "lib/core/merge.hpp"
#include "lib/core/output.hpp"
#include "lib/core/roofline.hpp"
#include "lib/core/text.hpp"

namespace roofline {
namespace {

using nlohmann::json;

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

json analysis_json(const Row& row, const RowAnalysis& a) {
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
  out["compute_bound"] = a.compute_bound;
  out["binding"] = a.binding;
  out["regime"] = a.regime;
  out["ridge_factor"] = json_number(a.ridge_factor);
  out["ridge_distance"] = describe_ridge_factor(a.ridge_factor);
  out["attainable_tflops_per_second"] = json_number(a.attainable_flops_per_second / 1e12);
  out["time_floor_seconds"] = json_number(a.time_floor_seconds);
  out["fraction_of_bound"] = json_number(a.fraction_of_bound);
  out["flops_vs_model"] = json_number(a.flops_vs_model);
  out["dram_bytes_vs_model"] = json_number(a.dram_bytes_vs_model);
  out["dram_bytes_vs_compulsory"] = json_number(a.dram_bytes_vs_compulsory);
  out["warnings"] = a.warnings;
  (void)row;
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

Workload read_workload(const JsonReader& r, const json& j, const std::string& where) {
  constexpr std::int64_t kIntMax = std::numeric_limits<int>::max();
  Workload w;
  w.batch = static_cast<int>(r.integer(j, where, "batch", 1, kIntMax));
  w.heads = static_cast<int>(r.integer(j, where, "heads", 1, kIntMax));
  w.seq_len = static_cast<int>(r.integer(j, where, "seq_len", 1, kIntMax));
  w.head_dim = static_cast<int>(r.integer(j, where, "head_dim", 1, kIntMax));
  w.causal = r.boolean(j, where, "causal");
  auto pass = parse_pass(r.string(j, where, "pass", true));
  if (!pass) r.fail(key_path(where, "pass"), "must be fwd or bwd");
  w.pass = *pass;
  w.dtype = r.string(j, where, "dtype", true);
  try {
    w.validate();  // the same rules as the command line's
  } catch (const InputError& error) {
    r.fail(where, error.what());
  }
  return w;
}

Row read_row(const JsonReader& r, const json& j, const std::string& where) {
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
    row.workload = read_workload(r, w, key_path(where, "workload"));
  }
  row.spec_key = r.string(j, where, "spec");
  auto status = parse_row_status(r.string(j, where, "status", true));
  if (!status) r.fail(key_path(where, "status"), "unknown status");
  row.status = *status;
  row.message = r.string(j, where, "message", true);

  const std::string mw = key_path(where, "model");
  const json& m = r.member(j, where, "model");
  row.prediction.algorithmic_flops = r.number_or_nan(m, mw, "algorithmic_flops", kFlops);
  row.prediction.model_flops = r.number_or_nan(m, mw, "flops", kFlops);
  row.prediction.model_dram_bytes = r.number_or_nan(m, mw, "dram_bytes", kBytes);
  row.prediction.compulsory_dram_bytes = r.number_or_nan(m, mw, "compulsory_dram_bytes", kBytes);
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
    ver.relative_l2_error = r.number_or_nan(v, vw, "relative_l2_error", kErrorNorm);
    ver.max_abs_error = r.number_or_nan(v, vw, "max_abs_error", kErrorNorm);
    ver.fp16_relative_l2_error = r.number_or_nan(v, vw, "fp16_relative_l2_error", kErrorNorm);
    ver.fp16_max_abs_error = r.number_or_nan(v, vw, "fp16_max_abs_error", kErrorNorm);
    ver.worst_output = r.string(v, vw, "worst_output", true);
    row.verification = ver;
  }
  return row;
}

std::string shortened(const std::string& text, std::size_t max_bytes) {
  return text.size() <= max_bytes ? text : text.substr(0, max_bytes) + "...";
}

std::string csv_escape(const std::string& text) {
  if (text.find_first_of(",\"\n\r") == std::string::npos) return text;
  std::string out = "\"";
  for (char c : text) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

std::string csv_number(double value) {
  if (std::isnan(value) || std::isinf(value)) return "";
  std::ostringstream out;
  out.precision(9);
  out << value;
  return out.str();
}

std::string bytes_text(double bytes) {
  return std::isnan(bytes) ? "-" : format_si(bytes) + "B";
}

json context_json(const ReportContext& c) {
  json context = {
      {"command", c.command},
      {"host", c.host},
      {"time_utc", c.time_utc},
      {"projection", c.projection},
      {"measured_spec", c.measured_spec.empty() ? json(nullptr) : json(c.measured_spec)},
      {"counters", c.counters},
      {"metrics", c.metrics},
      {"counter_passes", c.counter_passes},
      {"ceilings", c.ceilings}};
  if (c.device) {
    const DeviceInfo& d = *c.device;
    context["device"] = {{"name", d.name},
                         {"chip", d.chip},
                         {"compute_capability", d.compute_capability},
                         {"sm_count", d.sm_count},
                         {"memory_bytes", d.memory_bytes},
                         {"l2_cache_bytes", d.l2_cache_bytes},
                         {"driver_version", d.driver_version},
                         {"runtime_version", d.runtime_version}};
  } else {
    context["device"] = nullptr;
  }
  return context;
}

// Reads a context object (report or origin) at `where`; the tool version is not in it.
ReportContext read_context(const JsonReader& r, const json& c, const std::string& where) {
  ReportContext context;
  context.command = r.string(c, where, "command");
  context.host = r.string(c, where, "host", true);
  context.time_utc = r.string(c, where, "time_utc", true);
  context.projection = r.boolean(c, where, "projection");
  // Added with projections; absent from older reports (then a projection judged measured
  // values against the target's peaks directly).
  if (const json* measured = r.optional_member(c, where, "measured_spec");
      measured != nullptr && !measured->is_null())
    context.measured_spec = r.string(c, where, "measured_spec");
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

}  // namespace

KernelLaunch launch_from_json(const JsonReader& r, const json& l, const std::string& where) {
  constexpr std::int64_t kIntMax = std::numeric_limits<int>::max();
  constexpr std::int64_t kInt64Max = std::numeric_limits<std::int64_t>::max();
  KernelLaunch launch;
  launch.mangled_name = r.string(l, where, "mangled_name", true);  // empty for a graph launch
  launch.demangled_name = r.string(l, where, "demangled_name");
  launch.nvtx_range = r.string(l, where, "nvtx_range", true);
  for (const char* key : {"grid", "block"}) {
    const json& d = r.member(l, where, key);
    const std::string path = key_path(where, key);
    if (!d.is_array() || d.size() != 3) r.fail(path, "must be three integers");
    auto& out = std::string_view(key) == "grid" ? launch.grid : launch.block;
    for (std::size_t i = 0; i < 3; ++i)
      out[i] = static_cast<int>(r.integer_value(d[i], index_path(path, i), 1, kIntMax));
  }
  launch.registers_per_thread =
      static_cast<int>(r.integer(l, where, "registers_per_thread", 0, kMaxRegistersPerThread));
  launch.static_shared_bytes = r.integer(l, where, "static_shared_bytes", 0, kMaxSharedBytes);
  launch.dynamic_shared_bytes = r.integer(l, where, "dynamic_shared_bytes", 0, kMaxSharedBytes);
  launch.index = r.integer(l, where, "index", 0, kInt64Max);
  launch.stream_id = r.integer(l, where, "stream_id", 0, kInt64Max);
  launch.process_id = static_cast<int>(r.integer(l, where, "process_id", 0, kIntMax));
  launch.process = r.string(l, where, "process", true);
  launch.graph = r.boolean(l, where, "graph");
  launch.workload_known = r.boolean(l, where, "workload_known");
  return launch;
}

DeviceInfo device_from_json(const JsonReader& r, const json& d, const std::string& where) {
  DeviceInfo info;
  info.name = r.string(d, where, "name");
  info.chip = r.string(d, where, "chip", true);
  info.compute_capability = r.string(d, where, "compute_capability");
  const auto cc = parse_compute_capability(info.compute_capability);
  if (!cc)
    r.fail(key_path(where, "compute_capability"),
           "must be MAJOR.MINOR, e.g. \"9.0\" (got " + quote_text(info.compute_capability) + ")");
  info.cc_major = cc->first;
  info.cc_minor = cc->second;
  info.sm_count = static_cast<int>(r.integer(d, where, "sm_count", 1, kMaxSmCount));
  info.memory_bytes = r.integer(d, where, "memory_bytes", kMinMemoryBytes, kMaxMemoryBytes);
  info.l2_cache_bytes = r.integer(d, where, "l2_cache_bytes", kMinL2Bytes, kMaxL2Bytes);
  info.driver_version = r.string(d, where, "driver_version", true);
  info.runtime_version = r.string(d, where, "runtime_version", true);
  return info;
}

namespace {

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

json row_json(const Report& report, const Row& row) {
  json r;
  r["kernel"] = row.kernel;
  r["workload"] = has_workload(row) ? workload_json(row.workload) : json(nullptr);
  r["launch"] = row.launch ? launch_json(*row.launch) : json(nullptr);
  r["spec"] = row.spec_key;
  r["status"] = to_string(row.status);
  r["message"] = row.message;
  const Prediction& p = row.prediction;
  r["model"] = {{"algorithmic_flops", p.algorithmic_flops},
                {"flops", p.model_flops},
                {"dram_bytes", p.model_dram_bytes},
                {"dram_model", p.dram_model},
                {"no_reuse_dram_bytes", p.no_reuse_dram_bytes},
                {"compulsory_dram_bytes", p.compulsory_dram_bytes},
                {"compulsory_formula", p.compulsory_formula},
                {"flop_terms", terms_json(p.flop_terms, "flops")},
                {"byte_terms", terms_json(p.byte_terms, "bytes")},
                {"cache_aware_byte_terms", terms_json(p.cache_aware_byte_terms, "bytes")}};
  if (!p.l1_byte_terms.empty()) {
    r["model"]["l1_bytes"] = p.model_l1_bytes;
    r["model"]["l1_byte_terms"] = terms_json(p.l1_byte_terms, "bytes");
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
                    t.sm_clock_after_mhz > 0 ? json(t.sm_clock_after_mhz) : json(nullptr)}};
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
    r["verification"] = {{"passed", v.passed},
                         {"relative_l2_error", json_number(v.relative_l2_error)},
                         {"max_abs_error", json_number(v.max_abs_error)},
                         {"fp16_relative_l2_error", json_number(v.fp16_relative_l2_error)},
                         {"fp16_max_abs_error", json_number(v.fp16_max_abs_error)},
                         {"worst_output", v.worst_output}};
  } else {
    r["verification"] = nullptr;
  }
  if (row.origin) r["origin"] = *row.origin;
  r["analysis"] = analysis_json(row, analyze(row, report));
  return r;
}

}  // namespace

json report_to_json(const Report& report) {
  json root = report_head_json(report);
  for (const Row& row : report.rows) root["rows"].push_back(row_json(report, row));
  return root;
}

std::string render_json(const Report& report) {
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
    std::string row = dump(row_json(report, report.rows[i]));
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

namespace {

// A row as read, with its `origin` member (checked against the report's origins once they
// are known: a file may put "origins" after "rows").
struct ReadRow {
  Row row;
  std::optional<json> origin;
};

ReadRow read_row_of(const JsonReader& r, const json& j, const std::string& where) {
  ReadRow out{read_row(r, j, where), std::nullopt};
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

const std::vector<std::string>& csv_columns() {
  static const std::vector<std::string> kColumns = {"kernel",
                                                    "batch",
                                                    "heads",
                                                    "seq_len",
                                                    "head_dim",
                                                    "causal",
                                                    "pass",
                                                    "spec",
                                                    "status",
                                                    "time_s",
                                                    "time_source",
                                                    "algorithmic_flops",
                                                    "flops",
                                                    "flops_source",
                                                    "tflops_per_s",
                                                    "algorithmic_tflops_per_s",
                                                    "ceiling",
                                                    "peak_tflops",
                                                    "measured_sm_clock_mhz",
                                                    "compute_utilisation",
                                                    "dram_bytes",
                                                    "dram_bytes_source",
                                                    "dram_gbps",
                                                    "dram_bandwidth_utilisation",
                                                    "dram_intensity",
                                                    "l2_bytes",
                                                    "l2_intensity",
                                                    "l1_bytes",
                                                    "l1_intensity",
                                                    "regime",
                                                    "ridge_factor",
                                                    "attainable_tflops_per_s",
                                                    "time_floor_s",
                                                    "fraction_of_bound",
                                                    "model_flops",
                                                    "model_dram_bytes",
                                                    "compulsory_dram_bytes",
                                                    "flops_vs_model",
                                                    "dram_bytes_vs_model",
                                                    "time_median_s",
                                                    "time_min_s",
                                                    "time_max_s",
                                                    "message",
                                                    "device",
                                                    "process_id",
                                                    "launch_index",
                                                    "grid",
                                                    "block",
                                                    "registers_per_thread",
                                                    "shared_bytes",
                                                    "nvtx_range",
                                                    "kernel_signature"};
  return kColumns;
}

std::string render_csv(const Report& report) {
  std::ostringstream out;
  out << join(csv_columns(), ",") << "\n";
  for (const Row& row : report.rows) {
    const ReportContext& context = report.context_of(row);
    const RowAnalysis a = analyze(row, report);
    auto level = [&](MemoryLevel wanted) -> const LevelAnalysis* {
      for (const LevelAnalysis& l : a.levels)
        if (l.level == wanted) return &l;
      return nullptr;
    };
    const LevelAnalysis* l2 = level(MemoryLevel::kL2);
    const LevelAnalysis* l1 = level(MemoryLevel::kL1);
    const double nan = std::nan("");
    const Workload& w = row.workload;
    const bool known = has_workload(row);
    auto workload_cell = [&](std::string text) { return known ? text : std::string(); };
    std::vector<std::string> cells = {csv_escape(row.kernel),
                                      workload_cell(std::to_string(w.batch)),
                                      workload_cell(std::to_string(w.heads)),
                                      workload_cell(std::to_string(w.seq_len)),
                                      workload_cell(std::to_string(w.head_dim)),
                                      workload_cell(w.causal ? "true" : "false"),
                                      workload_cell(std::string(to_string(w.pass))),
                                      csv_escape(row.spec_key),
                                      std::string(to_string(row.status)),
                                      csv_number(a.time_seconds),
                                      std::string(to_string(a.time_source)),
                                      csv_number(a.algorithmic_flops),
                                      csv_number(a.flops),
                                      std::string(to_string(a.flops_source)),
                                      csv_number(a.flops_per_second / 1e12),
                                      csv_number(a.algorithmic_flops_per_second / 1e12),
                                      a.ceiling ? a.ceiling->id() : "",
                                      csv_number(a.peak_flops_per_second / 1e12),
                                      csv_number(a.measured_clock_hz / 1e6),
                                      csv_number(a.compute_utilisation),
                                      csv_number(a.dram->bytes),
                                      std::string(to_string(a.dram->bytes_source)),
                                      csv_number(a.dram->achieved_bytes_per_second / 1e9),
                                      csv_number(a.dram->bandwidth_utilisation),
                                      csv_number(a.dram->intensity),
                                      csv_number(l2 ? l2->bytes : nan),
                                      csv_number(l2 ? l2->intensity : nan),
                                      csv_number(l1 ? l1->bytes : nan),
                                      csv_number(l1 ? l1->intensity : nan),
                                      csv_escape(a.regime),
                                      csv_number(a.ridge_factor),
                                      csv_number(a.attainable_flops_per_second / 1e12),
                                      csv_number(a.time_floor_seconds),
                                      csv_number(a.fraction_of_bound),
                                      csv_number(row.prediction.model_flops),
                                      csv_number(row.prediction.model_dram_bytes),
                                      csv_number(row.prediction.compulsory_dram_bytes),
                                      csv_number(a.flops_vs_model),
                                      csv_number(a.dram_bytes_vs_model),
                                      csv_number(row.timing ? row.timing->median_seconds() : nan),
                                      csv_number(row.timing ? row.timing->min_seconds() : nan),
                                      csv_number(row.timing ? row.timing->max_seconds() : nan),
                                      csv_escape(row.message),
                                      csv_escape(context.device ? context.device->name : "")};
    if (row.launch) {
      const KernelLaunch& l = *row.launch;
      auto dims = [](const std::array<int, 3>& d) {
        return std::to_string(d[0]) + "x" + std::to_string(d[1]) + "x" + std::to_string(d[2]);
      };
      for (const std::string& cell :
           {std::to_string(l.process_id), std::to_string(l.index), dims(l.grid), dims(l.block),
            std::to_string(l.registers_per_thread),
            std::to_string(l.static_shared_bytes + l.dynamic_shared_bytes),
            csv_escape(l.nvtx_range), csv_escape(l.demangled_name)})
        cells.push_back(cell);
    } else {
      cells.resize(csv_columns().size());
    }
    out << join(cells, ",") << "\n";
  }
  return out.str();
}

std::string render_table(const Report& report, const TableOptions& options) {
  if (!report.origins.empty()) {
    // Rows from several devices or hosts: one table per context, in order of first appearance.
    std::string out;
    for (const Report& part : split_by_origin(report)) {
      if (!out.empty()) out += "\n";
      out += render_table(part, options);
    }
    return out;
  }
  std::ostringstream out;
  const ReportContext& c = report.context;
  // Header: what judged what.
  std::vector<std::string> spec_names;
  for (const GpuSpec& spec : report.specs) {
    const bool judges = std::any_of(report.rows.begin(), report.rows.end(),
                                    [&](const Row& row) { return row.spec_key == spec.key; });
    if (judges || report.rows.empty())
      spec_names.push_back(one_line(spec.name) + " [" + one_line(spec.key) + "]");
  }
  out << "cuflash-roofline " << one_line(c.command) << " — judged against "
      << join(spec_names, ", ")
      << (c.ceilings == "calibrated" ? " (measured ceilings: `calibrate`)" : "") << "\n";
  if (c.device)
    out << "measured on " << one_line(c.device->name) << " (" << c.device->sm_count << " SMs, CC "
        << one_line(c.device->compute_capability) << ")"
        << (c.projection
                ? " — PROJECTION: measured on this device, judged against another GPU's peaks"
                : "")
        << "\n";
  else
    out << "analytic model only: no GPU was used; time is the roofline floor\n";
  if (!c.counters.empty()) out << "counters: " << one_line(c.counters) << "\n";

  const std::vector<std::string> header = {
      "kernel",  "workload",  "time",    "GFLOP",  "TFLOP/s",        "DRAM bytes",    "DRAM GB/s",
      "BW util", "AI FLOP/B", "ceiling", "regime", "ridge distance", "bound TFLOP/s", "of bound"};
  const std::vector<bool> right = {false, false, true,  true,  true, true, true,
                                   true,  true,  false, false, true, true, true};
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> notes;
  bool any_model = false;
  bool any_projected = false;
  for (const Row& row : report.rows) {
    const RowAnalysis a = analyze(row, report);
    const Workload& w = row.workload;
    // A profiled launch without an attention workload shows its shape, and counted FLOPs.
    const bool known = has_workload(row);
    const std::string workload = known ? "N=" + std::to_string(w.seq_len) +
                                             (w.causal ? " causal " : " full ") +
                                             std::string(to_string(w.pass))
                                       : row.launch->shape_label();
    const double gflop = known ? a.algorithmic_flops : a.flops;
    const double tflops = known ? a.algorithmic_flops_per_second : a.flops_per_second;
    auto mark = [&](Source s) {
      if (s == Source::kModel) any_model = true;
      if (s == Source::kProjected) any_projected = true;
      return s == Source::kModel       ? std::string("*")
             : s == Source::kProjected ? std::string("~")
                                       : std::string();
    };
    if (!a.has_verdict) {
      rows.push_back({row.kernel, workload, std::string(to_string(row.status)), "", "", "", "", "",
                      "", "", row.message, "", "", ""});
      continue;
    }
    const double ms = a.time_seconds * 1e3;
    rows.push_back({
        row.kernel,
        workload,
        format_fixed(ms, ms < 1 ? 3 : 2) + " ms" + mark(a.time_source),
        format_fixed(gflop / 1e9, 2) + (known ? "" : mark(a.flops_source)),
        format_fixed(tflops / 1e12, 1) + mark(a.time_source),
        bytes_text(a.dram->bytes) + mark(a.dram->bytes_source),
        format_fixed(a.dram->achieved_bytes_per_second / 1e9, 0),
        format_fixed(100 * a.dram->bandwidth_utilisation, 0) + "%",
        format_fixed(a.dram->intensity, a.dram->intensity < 10 ? 2 : 0) +
            mark(a.dram->bytes_source),
        a.ceiling ? a.ceiling->label() : "-",
        a.regime,
        describe_ridge_factor(a.ridge_factor),
        format_fixed(a.attainable_flops_per_second / 1e12, 1),
        format_fixed(100 * a.fraction_of_bound, 0) + "%",
    });
    if (a.projected) notes.push_back(row.kernel + " " + row_label(row) + ": " + a.projection_note);
    for (const std::string& warning : a.warnings)
      notes.push_back(row.kernel + " " + row_label(row) + ": " + warning);
    if (row.status == RowStatus::kCountersUnavailable && !row.message.empty())
      notes.push_back(row.kernel + " " + row_label(row) + ": " + row.message);
  }
  std::vector<std::size_t> widths(header.size());
  for (std::size_t i = 0; i < header.size(); ++i) widths[i] = display_width(header[i]);
  for (const auto& cells : rows)
    for (std::size_t i = 0; i < cells.size(); ++i)
      widths[i] = std::max(widths[i], display_width(one_line(cells[i])));
  auto line = [&](const std::vector<std::string>& cells, bool is_header) {
    std::string text;
    for (std::size_t i = 0; i < cells.size(); ++i) {
      if (i > 0) text += "  ";
      std::string cell = pad(one_line(cells[i]), widths[i], right[i] && !is_header);
      if (options.color && !is_header && i == 10 && !cells[i].empty())
        cell = (cells[i].rfind("memory", 0) == 0 ? "\033[33m" : "\033[32m") + cell + "\033[0m";
      text += cell;
    }
    while (!text.empty() && text.back() == ' ') text.pop_back();
    out << text << "\n";
  };
  line(header, true);
  for (const auto& cells : rows) line(cells, false);
  out << "GFLOP and TFLOP/s: FlashAttention convention (4·B·H·N²·d forward, halved when causal, "
         "backward 2.5×). AI and regime: FLOPs on the kernel's own pipe over DRAM bytes.\n";
  if (any_model) out << "* model: not measured (analytic model or roofline floor)\n";
  if (any_projected)
    out << "~ projected: counted on the GPU measured, placed on this spec's roofs (README, "
           "projection)\n";
  for (const std::string& note : notes) out << "warning: " << one_line(note) << "\n";
  return out.str();
}

}  // namespace roofline
