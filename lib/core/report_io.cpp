#include "lib/core/report_io.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

#include <nlohmann/json.hpp>

#include "lib/core/analysis.hpp"
#include "lib/core/errors.hpp"
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
         {"time_floor_seconds", tagged(level.time_floor_seconds, level.bytes_source)}});
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

// Reads with errors that name the report file and the key path.
class Reader {
 public:
  explicit Reader(std::string origin) : origin_(std::move(origin)) {}
  [[noreturn]] void fail(const std::string& where, const std::string& what) const {
    throw InputError(origin_ + ": " + where + ": " + what);
  }
  const json& at(const json& j, const std::string& where, const char* key) const {
    if (!j.is_object()) fail(where, "must be an object");
    auto it = j.find(key);
    if (it == j.end()) fail(where.empty() ? key : where + "." + key, "missing");
    return *it;
  }
  double num(const json& j, const std::string& where, const char* key) const {
    const json& v = at(j, where, key);
    if (v.is_null()) return std::nan("");
    if (!v.is_number()) fail(where + "." + key, "must be a number");
    return v.get<double>();
  }
  int integer(const json& j, const std::string& where, const char* key) const {
    const json& v = at(j, where, key);
    if (!v.is_number_integer()) fail(where + "." + key, "must be an integer");
    return v.get<int>();
  }
  std::int64_t int64(const json& j, const std::string& where, const char* key) const {
    const json& v = at(j, where, key);
    if (!v.is_number_integer()) fail(where + "." + key, "must be an integer");
    return v.get<std::int64_t>();
  }
  std::string str(const json& j, const std::string& where, const char* key) const {
    const json& v = at(j, where, key);
    if (!v.is_string()) fail(where + "." + key, "must be a string");
    return v.get<std::string>();
  }
  bool boolean(const json& j, const std::string& where, const char* key) const {
    const json& v = at(j, where, key);
    if (!v.is_boolean()) fail(where + "." + key, "must be true or false");
    return v.get<bool>();
  }

 private:
  std::string origin_;
};

std::vector<ModelTerm> read_terms(const Reader& r, const json& j, const std::string& where,
                                  const char* unit) {
  std::vector<ModelTerm> terms;
  if (!j.is_array()) r.fail(where, "must be an array");
  for (std::size_t i = 0; i < j.size(); ++i) {
    const std::string w = where + "[" + std::to_string(i) + "]";
    terms.push_back({r.str(j[i], w, "name"), r.str(j[i], w, "formula"), r.num(j[i], w, unit)});
  }
  return terms;
}

Row read_row(const Reader& r, const json& j, const std::string& where) {
  Row row;
  row.kernel = r.str(j, where, "kernel");
  // "launch" is absent or null for the bundled kernels' rows.
  if (auto l = j.find("launch"); l != j.end() && !l->is_null()) {
    const std::string lw = where + ".launch";
    KernelLaunch launch;
    launch.mangled_name = r.str(*l, lw, "mangled_name");
    launch.demangled_name = r.str(*l, lw, "demangled_name");
    launch.nvtx_range = r.str(*l, lw, "nvtx_range");
    for (const char* key : {"grid", "block"}) {
      const json& d = r.at(*l, lw, key);
      if (!d.is_array() || d.size() != 3 ||
          !std::all_of(d.begin(), d.end(), [](const json& x) { return x.is_number_integer(); }))
        r.fail(lw + "." + key, "must be three integers");
      (std::string(key) == "grid" ? launch.grid : launch.block) = d.get<std::array<int, 3>>();
    }
    launch.registers_per_thread = r.integer(*l, lw, "registers_per_thread");
    launch.static_shared_bytes = r.int64(*l, lw, "static_shared_bytes");
    launch.dynamic_shared_bytes = r.int64(*l, lw, "dynamic_shared_bytes");
    launch.index = r.int64(*l, lw, "index");
    launch.stream_id = r.int64(*l, lw, "stream_id");
    launch.process_id = r.integer(*l, lw, "process_id");
    launch.process = r.str(*l, lw, "process");
    launch.graph = r.boolean(*l, lw, "graph");
    launch.workload_known = r.boolean(*l, lw, "workload_known");
    row.launch = std::move(launch);
  }
  const json& w = r.at(j, where, "workload");
  if (w.is_null()) {
    if (has_workload(row)) r.fail(where + ".workload", "null only for a launch without workload");
  } else {
    const std::string ww = where + ".workload";
    row.workload.batch = r.integer(w, ww, "batch");
    row.workload.heads = r.integer(w, ww, "heads");
    row.workload.seq_len = r.integer(w, ww, "seq_len");
    row.workload.head_dim = r.integer(w, ww, "head_dim");
    row.workload.causal = r.boolean(w, ww, "causal");
    auto pass = parse_pass(r.str(w, ww, "pass"));
    if (!pass) r.fail(ww + ".pass", "must be fwd or bwd");
    row.workload.pass = *pass;
    row.workload.dtype = r.str(w, ww, "dtype");
  }
  row.spec_key = r.str(j, where, "spec");
  auto status = parse_row_status(r.str(j, where, "status"));
  if (!status) r.fail(where + ".status", "unknown status");
  row.status = *status;
  row.message = r.str(j, where, "message");

  const json& m = r.at(j, where, "model");
  const std::string mw = where + ".model";
  row.prediction.algorithmic_flops = r.num(m, mw, "algorithmic_flops");
  row.prediction.model_flops = r.num(m, mw, "flops");
  row.prediction.model_dram_bytes = r.num(m, mw, "dram_bytes");
  row.prediction.compulsory_dram_bytes = r.num(m, mw, "compulsory_dram_bytes");
  row.prediction.flop_terms = read_terms(r, r.at(m, mw, "flop_terms"), mw + ".flop_terms", "flops");
  row.prediction.byte_terms = read_terms(r, r.at(m, mw, "byte_terms"), mw + ".byte_terms", "bytes");
  // Added with the cache-aware model; reports written before it lack them (then the DRAM
  // estimate was the no-reuse bound).
  row.prediction.no_reuse_dram_bytes = m.contains("no_reuse_dram_bytes")
                                           ? r.num(m, mw, "no_reuse_dram_bytes")
                                           : row.prediction.model_dram_bytes;
  if (m.contains("dram_model")) row.prediction.dram_model = r.str(m, mw, "dram_model");
  if (m.contains("compulsory_formula"))
    row.prediction.compulsory_formula = r.str(m, mw, "compulsory_formula");
  if (m.contains("cache_aware_byte_terms"))
    row.prediction.cache_aware_byte_terms = read_terms(r, r.at(m, mw, "cache_aware_byte_terms"),
                                                       mw + ".cache_aware_byte_terms", "bytes");

  const json& t = r.at(j, where, "timing");
  if (!t.is_null()) {
    Timing timing;
    const std::string tw = where + ".timing";
    const json& samples = r.at(t, tw, "samples_seconds");
    if (!samples.is_array()) r.fail(tw + ".samples_seconds", "must be an array");
    for (const json& s : samples) {
      if (!s.is_number() || !(s.get<double>() > 0))
        r.fail(tw + ".samples_seconds", "must hold positive numbers");
      timing.samples_seconds.push_back(s.get<double>());
    }
    if (auto it = t.find("rounds"); it != t.end()) {  // optional: absent means 1
      if (!it->is_number_integer() || it->get<long long>() < 1 ||
          it->get<long long>() >
              std::max<long long>(1, static_cast<long long>(timing.samples_seconds.size())))
        r.fail(tw + ".rounds", "must be an integer from 1 to the number of samples");
      timing.rounds = static_cast<int>(it->get<long long>());
    }
    timing.sm_clock_before_mhz = r.num(t, tw, "sm_clock_before_mhz");
    timing.sm_clock_after_mhz = r.num(t, tw, "sm_clock_after_mhz");
    if (std::isnan(timing.sm_clock_before_mhz)) timing.sm_clock_before_mhz = 0;
    if (std::isnan(timing.sm_clock_after_mhz)) timing.sm_clock_after_mhz = 0;
    row.timing = std::move(timing);
  }
  const json& c = r.at(j, where, "counters");
  if (!c.is_object()) r.fail(where + ".counters", "must be an object");
  for (const auto& [key, value] : c.items()) {
    if (value.is_null()) continue;
    if (!value.is_number()) r.fail(where + ".counters." + key, "must be a number");
    row.counters[key] = value.get<double>();
  }
  if (auto it = j.find("counter_samples"); it != j.end() && !it->is_null()) {
    const std::string cw = where + ".counter_samples";
    if (!it->is_object()) r.fail(cw, "must be an object");
    for (const auto& [key, values] : it->items()) {
      if (!values.is_array() || values.empty()) r.fail(cw + "." + key, "must be a non-empty array");
      std::vector<double>& out = row.counter_samples[key];
      for (const json& value : values) {
        if (!value.is_number()) r.fail(cw + "." + key, "must hold numbers");
        out.push_back(value.get<double>());
      }
    }
  }
  const json& v = r.at(j, where, "verification");
  if (!v.is_null()) {
    const std::string vw = where + ".verification";
    Verification ver;
    ver.passed = r.boolean(v, vw, "passed");
    ver.relative_l2_error = r.num(v, vw, "relative_l2_error");
    ver.max_abs_error = r.num(v, vw, "max_abs_error");
    ver.fp16_relative_l2_error = r.num(v, vw, "fp16_relative_l2_error");
    ver.fp16_max_abs_error = r.num(v, vw, "fp16_max_abs_error");
    ver.worst_output = r.str(v, vw, "worst_output");
    row.verification = ver;
  }
  return row;
}

std::string csv_escape(const std::string& text) {
  if (text.find_first_of(",\"\n") == std::string::npos) return text;
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
ReportContext read_context(const Reader& r, const json& c, const std::string& where) {
  ReportContext context;
  context.command = r.str(c, where, "command");
  context.host = r.str(c, where, "host");
  context.time_utc = r.str(c, where, "time_utc");
  context.projection = r.boolean(c, where, "projection");
  // Added with projections; absent from older reports (then a projection judged measured
  // values against the target's peaks directly).
  if (c.contains("measured_spec") && !c.at("measured_spec").is_null())
    context.measured_spec = r.str(c, where, "measured_spec");
  context.counters = r.str(c, where, "counters");
  context.counter_passes = r.integer(c, where, "counter_passes");
  // Reports written before calibration existed were judged against the spec sheet.
  context.ceilings = c.contains("ceilings") ? r.str(c, where, "ceilings") : "spec";
  if (context.ceilings != "spec" && context.ceilings != "calibrated")
    r.fail(where + ".ceilings", "must be \"spec\" or \"calibrated\"");
  for (const json& m : r.at(c, where, "metrics"))
    if (m.is_string()) context.metrics.push_back(m.get<std::string>());
  const json& d = r.at(c, where, "device");
  if (!d.is_null()) {
    const std::string dw = where + ".device";
    DeviceInfo info;
    info.name = r.str(d, dw, "name");
    info.chip = r.str(d, dw, "chip");
    info.compute_capability = r.str(d, dw, "compute_capability");
    info.sm_count = r.integer(d, dw, "sm_count");
    info.memory_bytes = static_cast<std::int64_t>(r.num(d, dw, "memory_bytes"));
    info.l2_cache_bytes = static_cast<std::int64_t>(r.num(d, dw, "l2_cache_bytes"));
    info.driver_version = r.str(d, dw, "driver_version");
    info.runtime_version = r.str(d, dw, "runtime_version");
    context.device = info;
  }
  return context;
}

}  // namespace

json report_to_json(const Report& report) {
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
  for (const Row& row : report.rows) {
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
    root["rows"].push_back(std::move(r));
  }
  return root;
}

std::string render_json(const Report& report) {
  return report_to_json(report).dump(2) + "\n";
}

Report report_from_json(const json& root, const std::string& origin) {
  Reader r(origin);
  if (!root.is_object()) r.fail("(top level)", "not a cuflash-roofline report");
  if (!root.contains("schema_version"))
    r.fail("schema_version", "missing (not a cuflash-roofline report?)");
  const json& version = root["schema_version"];
  if (!version.is_number_integer() || version.get<int>() != kReportSchemaVersion)
    throw InputError(origin + ": schema_version " + version.dump() +
                     " is not supported (this tool reads " + std::to_string(kReportSchemaVersion) +
                     ")");
  Report report;
  report.context = read_context(r, r.at(root, "", "context"), "context");
  const json& tool = r.at(root, "", "tool");
  report.context.tool_version = r.str(tool, "tool", "version");
  if (root.contains("origins")) {
    const json& origins = root["origins"];
    if (!origins.is_array()) r.fail("origins", "must be an array");
    for (std::size_t i = 0; i < origins.size(); ++i) {
      const std::string where = "origins[" + std::to_string(i) + "]";
      ReportContext context = read_context(r, origins[i], where);
      context.tool_version = r.str(origins[i], where, "tool_version");
      report.origins.push_back(std::move(context));
    }
  }
  const json& specs = r.at(root, "", "specs");
  if (!specs.is_object()) r.fail("specs", "must be an object");
  for (const auto& [key, value] : specs.items()) {
    GpuSpec spec = parse_gpu_spec(value, origin + ": specs." + key);
    spec.key = key;
    spec.file.clear();
    report.specs.push_back(std::move(spec));
  }
  const json& rows = r.at(root, "", "rows");
  if (!rows.is_array()) r.fail("rows", "must be an array");
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const std::string where = "rows[" + std::to_string(i) + "]";
    Row row = read_row(r, rows[i], where);
    if (rows[i].contains("origin")) {
      const json& o = rows[i]["origin"];
      if (!o.is_number_unsigned() || o.get<std::uint64_t>() >= report.origins.size())
        r.fail(where + ".origin", "must index the report's origins (it has " +
                                      std::to_string(report.origins.size()) + ")");
      row.origin = o.get<std::size_t>();
    }
    report.spec_for(row);  // throws when the row names a spec the report does not carry
    report.rows.push_back(std::move(row));
  }
  return report;
}

Report read_report_file(const std::filesystem::path& path) {
  const std::string text = read_text_file(path);
  json root;
  try {
    root = json::parse(text);
  } catch (const json::parse_error& error) {
    throw InputError(path.string() + ": not valid JSON (" + first_line(error.what()) + ")");
  }
  return report_from_json(root, path.string());
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
    if (judges || report.rows.empty()) spec_names.push_back(spec.name + " [" + spec.key + "]");
  }
  out << "cuflash-roofline " << c.command << " — judged against " << join(spec_names, ", ")
      << (c.ceilings == "calibrated" ? " (measured ceilings: `calibrate`)" : "") << "\n";
  if (c.device)
    out << "measured on " << c.device->name << " (" << c.device->sm_count << " SMs, CC "
        << c.device->compute_capability << ")"
        << (c.projection
                ? " — PROJECTION: measured on this device, judged against another GPU's peaks"
                : "")
        << "\n";
  else
    out << "analytic model only: no GPU was used; time is the roofline floor\n";
  if (!c.counters.empty()) out << "counters: " << c.counters << "\n";

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
      widths[i] = std::max(widths[i], display_width(cells[i]));
  auto line = [&](const std::vector<std::string>& cells, bool is_header) {
    std::string text;
    for (std::size_t i = 0; i < cells.size(); ++i) {
      if (i > 0) text += "  ";
      std::string cell = pad(cells[i], widths[i], right[i] && !is_header);
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
  for (const std::string& note : notes) out << "warning: " << note << "\n";
  return out.str();
}

}  // namespace roofline
