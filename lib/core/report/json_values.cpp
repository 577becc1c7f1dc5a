#include "lib/core/report/json_values.hpp"

#include <array>
#include <cmath>
#include <limits>
#include <string_view>

#include "lib/core/base/errors.hpp"
#include "lib/core/base/limits.hpp"
#include "lib/core/base/text.hpp"
#include "lib/core/domain/gpu_spec.hpp"

namespace roofline {
namespace {

using nlohmann::json;

constexpr std::int64_t kIntMax = std::numeric_limits<int>::max();
constexpr std::int64_t kInt64Max = std::numeric_limits<std::int64_t>::max();
// The GPU's temperature where an energy figure was measured.
constexpr Bound kCelsius{"temperatures", 0, 200, "°C"};

// A string member that may be absent or null (then empty).
std::string optional_string(const JsonReader& r, const json& object, const std::string& path,
                            const char* key) {
  const json* value = r.optional_member(object, path, key);
  if (value == nullptr || value->is_null()) return "";
  return r.string(object, path, key, true);
}

}  // namespace

json json_number(double value) {
  return std::isnan(value) || std::isinf(value) ? json(nullptr) : json(value);
}

json workload_json(const Workload& w) {
  json out = {{"batch", w.batch},           {"heads", w.heads},   {"seq_len", w.seq_len},
              {"head_dim", w.head_dim},     {"causal", w.causal}, {"pass", to_string(w.pass)},
              {"dtype", to_string(w.dtype)}};
  // Decode workloads only: prefill rows read as they did before decode existed.
  if (w.decode()) {
    out["q_len"] = w.q_len;
    out["kv_heads"] = w.key_heads();
    out["page_size"] = w.page_size;
    out["kv_splits"] = w.kv_splits;
    if (!w.kv_lens.empty()) out["kv_lens"] = w.kv_lens;
  }
  return out;
}

Workload workload_from_json(const JsonReader& r, const json& j, const std::string& where) {
  Workload w;
  w.batch = static_cast<int>(r.integer(j, where, "batch", 1, kIntMax));
  w.heads = static_cast<int>(r.integer(j, where, "heads", 1, kIntMax));
  w.seq_len = static_cast<int>(r.integer(j, where, "seq_len", 1, kIntMax));
  w.head_dim = static_cast<int>(r.integer(j, where, "head_dim", 1, kIntMax));
  w.causal = r.boolean(j, where, "causal");
  auto pass = parse_pass(r.string(j, where, "pass", true));
  if (!pass) r.fail(key_path(where, "pass"), "must be fwd or bwd");
  w.pass = *pass;
  // Reports written before BF16 existed may lack the key: their rows are FP16.
  const json* dtype = r.optional_member(j, where, "dtype");
  if (dtype != nullptr) {
    const std::string text = r.string(j, where, "dtype", true);
    auto parsed = parse_dtype(text);
    if (!parsed)
      r.fail(key_path(where, "dtype"), "must be fp16 or bf16 (got " + quote_text(text) + ")");
    w.dtype = *parsed;
  }
  if (r.optional_member(j, where, "q_len") != nullptr) {
    w.q_len = static_cast<int>(r.integer(j, where, "q_len", 1, kMaxDecodeQueryLen));
    w.kv_heads = static_cast<int>(r.integer(j, where, "kv_heads", 1, kIntMax));
    w.page_size = static_cast<int>(r.integer(j, where, "page_size", 0, kIntMax));
    w.kv_splits = static_cast<int>(r.integer(j, where, "kv_splits", 0, kMaxDecodeSplits));
    if (const json* lens = r.optional_member(j, where, "kv_lens"); lens != nullptr) {
      const std::string path = key_path(where, "kv_lens");
      r.require_array(*lens, path);
      if (lens->size() > static_cast<std::size_t>(w.batch))
        r.fail(path, "has more lengths than the batch's " + std::to_string(w.batch));
      for (const json& n : *lens)
        w.kv_lens.push_back(static_cast<int>(r.integer_value(n, path, 1, kIntMax)));
    }
  }
  try {
    w.validate();  // the same rules as the command line's
  } catch (const InputError& error) {
    r.fail(where, error.what());
  }
  return w;
}

namespace {

// A grid's or block's three dimensions, each at least 1.
std::array<int, 3> dims_of(const JsonReader& r, const json& object, const std::string& where,
                           const char* key) {
  const json& d = r.member(object, where, key);
  const std::string path = key_path(where, key);
  if (!d.is_array() || d.size() != 3) r.fail(path, "must be three integers");
  std::array<int, 3> out{};
  for (std::size_t i = 0; i < 3; ++i)
    out[i] = static_cast<int>(r.integer_value(d[i], index_path(path, i), 1, kIntMax));
  return out;
}

}  // namespace

json launch_json(const KernelLaunch& l) {
  json out = {{"mangled_name", l.mangled_name},
              {"demangled_name", l.demangled_name},
              {"nvtx_range", l.nvtx_range},
              {"grid", l.grid},
              {"block", l.block},
              {"registers_per_thread", l.registers_per_thread},
              {"static_shared_bytes", l.static_shared_bytes},
              {"dynamic_shared_bytes", l.dynamic_shared_bytes},
              {"index", l.index},
              {"stream_id", l.stream_id},
              {"process_id", l.process_id},
              {"process", l.process},
              {"graph", l.graph},
              {"workload_known", l.workload_known}};
  // Added with graph nodes: written only when set, absent in reports before them.
  if (l.graph_nodes > 0) out["graph_nodes"] = l.graph_nodes;
  if (l.is_graph_node()) {
    out["node_kind"] = l.node_kind;
    out["graph_node_id"] = l.graph_node_id;
    out["node_position"] = l.node_position;
    if (l.node_bytes > 0) out["node_bytes"] = l.node_bytes;
  }
  if (l.graph_id != 0) out["graph_id"] = l.graph_id;
  if (l.gpu_start_ns > 0 && l.gpu_end_ns >= l.gpu_start_ns) {
    out["gpu_start_ns"] = l.gpu_start_ns;
    out["gpu_end_ns"] = l.gpu_end_ns;
  }
  return out;
}

KernelLaunch launch_from_json(const JsonReader& r, const json& l, const std::string& where) {
  KernelLaunch launch;
  launch.mangled_name = r.string(l, where, "mangled_name", true);  // empty for a graph launch
  launch.demangled_name = r.string(l, where, "demangled_name");
  launch.nvtx_range = r.string(l, where, "nvtx_range", true);
  launch.grid = dims_of(r, l, where, "grid");
  launch.block = dims_of(r, l, where, "block");
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
  // Added with graph nodes (optional: reports before them have none).
  if (l.contains("graph_nodes"))
    launch.graph_nodes = r.integer(l, where, "graph_nodes", 0, kIntMax);
  if (l.contains("node_kind")) {
    launch.node_kind = r.string(l, where, "node_kind");
    if (launch.node_kind != "kernel" && launch.node_kind != "memcpy" &&
        launch.node_kind != "memset")
      r.fail(key_path(where, "node_kind"),
             "must be kernel, memcpy or memset (got " + quote_text(launch.node_kind) + ")");
    launch.graph_node_id =
        static_cast<std::uint64_t>(r.integer(l, where, "graph_node_id", 0, kInt64Max));
    launch.node_position = static_cast<int>(r.integer(l, where, "node_position", 0, kIntMax));
    if (l.contains("node_bytes"))
      launch.node_bytes = r.integer(l, where, "node_bytes", 0, kInt64Max);
  }
  if (l.contains("graph_id"))
    launch.graph_id = static_cast<std::uint32_t>(
        r.integer(l, where, "graph_id", 0, std::numeric_limits<std::uint32_t>::max()));
  if (l.contains("gpu_start_ns")) {
    launch.gpu_start_ns = r.integer(l, where, "gpu_start_ns", 0, kInt64Max);
    launch.gpu_end_ns = r.integer(l, where, "gpu_end_ns", launch.gpu_start_ns, kInt64Max);
  }
  return launch;
}

json device_json(const DeviceInfo& d, DeviceFields fields) {
  json out = {{"name", d.name},
              {"chip", d.chip},
              {"compute_capability", d.compute_capability},
              {"sm_count", d.sm_count},
              {"driver_version", d.driver_version},
              {"runtime_version", d.runtime_version}};
  if (fields == DeviceFields::kAll) {
    out["memory_bytes"] = d.memory_bytes;
    out["l2_cache_bytes"] = d.l2_cache_bytes;
  }
  return out;
}

json stalls_json(const StallSampling& s) {
  json out = {{"period_log2", s.period_log2},
              {"samples", s.samples},
              {"dropped", s.dropped},
              {"reasons", json::object()},
              {"hottest", json::array()},
              {"lines", json::array()},
              {"note", s.note}};
  for (const auto& [name, samples] : s.reasons) out["reasons"][name] = samples;
  for (const StallInstruction& i : s.hottest) {
    json entry = {{"function", i.function}, {"pc_offset", i.pc_offset}, {"sass", i.sass},
                  {"samples", i.samples},   {"reason", i.reason},       {"file", i.file},
                  {"line", i.line}};
    if (!i.waits_on.empty()) entry["waits_on"] = i.waits_on;
    out["hottest"].push_back(std::move(entry));
  }
  for (const StallLine& l : s.lines)
    out["lines"].push_back(
        {{"file", l.file}, {"line", l.line}, {"samples", l.samples}, {"reason", l.reason}});
  return out;
}

StallSampling stalls_from_json(const JsonReader& r, const json& j, const std::string& where) {
  StallSampling s;
  r.only_keys(j, where,
              {"period_log2", "samples", "dropped", "reasons", "hottest", "lines", "note"});
  s.period_log2 = static_cast<int>(r.integer(j, where, "period_log2", 0, 31));
  s.samples = static_cast<std::uint64_t>(r.integer(j, where, "samples", 0, kInt64Max));
  s.dropped = static_cast<std::uint64_t>(r.integer(j, where, "dropped", 0, kInt64Max));
  s.note = r.string(j, where, "note", true);
  const json& reasons = r.member(j, where, "reasons");
  const std::string rw = key_path(where, "reasons");
  r.require_object(reasons, rw);
  std::uint64_t sum = 0;
  for (const auto& [name, value] : reasons.items()) {
    const auto n =
        static_cast<std::uint64_t>(r.integer_value(value, key_path(rw, name), 0, kInt64Max));
    s.reasons[name] = n;
    sum += n;
  }
  if (sum != s.samples)
    r.fail(rw, "must sum to \"samples\" (" + std::to_string(s.samples) + "), not " +
                   std::to_string(sum));
  const json& hottest = r.member(j, where, "hottest");
  const std::string hw = key_path(where, "hottest");
  r.require_array(hottest, hw);
  for (std::size_t k = 0; k < hottest.size(); ++k) {
    const std::string iw = index_path(hw, k);
    StallInstruction i;
    i.function = r.string(hottest[k], iw, "function", true);
    i.pc_offset = static_cast<std::uint64_t>(r.integer(hottest[k], iw, "pc_offset", 0, kInt64Max));
    i.sass = r.string(hottest[k], iw, "sass", true);
    if (hottest[k].contains("waits_on")) i.waits_on = r.string(hottest[k], iw, "waits_on", true);
    i.samples = static_cast<std::uint64_t>(r.integer(hottest[k], iw, "samples", 0, kInt64Max));
    i.reason = r.string(hottest[k], iw, "reason", true);
    i.file = r.string(hottest[k], iw, "file", true);
    i.line = static_cast<int>(r.integer(hottest[k], iw, "line", 0, kIntMax));
    s.hottest.push_back(std::move(i));
  }
  const json& lines = r.member(j, where, "lines");
  const std::string lw = key_path(where, "lines");
  r.require_array(lines, lw);
  for (std::size_t k = 0; k < lines.size(); ++k) {
    const std::string iw = index_path(lw, k);
    StallLine l;
    l.file = r.string(lines[k], iw, "file");
    l.line = static_cast<int>(r.integer(lines[k], iw, "line", 0, kIntMax));
    l.samples = static_cast<std::uint64_t>(r.integer(lines[k], iw, "samples", 0, kInt64Max));
    l.reason = r.string(lines[k], iw, "reason", true);
    s.lines.push_back(std::move(l));
  }
  return s;
}

json energy_json(const EnergyMeasurement& e) {
  return {{"joules_per_launch", json_number(e.joules_per_launch)},
          {"watts", json_number(e.watts)},
          {"seconds_per_launch", json_number(e.seconds_per_launch)},
          {"window_seconds", json_number(e.window_seconds)},
          {"updates", e.updates},
          {"relative_spread", json_number(e.relative_spread)},
          {"temperature_c", e.temperature_c > 0 ? json(e.temperature_c) : json(nullptr)}};
}

EnergyMeasurement energy_from_json(const JsonReader& r, const json& j, const std::string& where) {
  r.only_keys(j, where,
              {"joules_per_launch", "watts", "seconds_per_launch", "window_seconds", "updates",
               "relative_spread", "temperature_c"});
  EnergyMeasurement e;
  e.joules_per_launch = r.number(j, where, "joules_per_launch", kJoules);
  e.watts = r.number(j, where, "watts", kWatts);
  e.seconds_per_launch = r.number(j, where, "seconds_per_launch", kSampleSeconds);
  e.window_seconds = r.number(j, where, "window_seconds", kSampleSeconds);
  e.updates = static_cast<int>(r.integer(j, where, "updates", 0, kIntMax));
  e.relative_spread = r.number(j, where, "relative_spread", kErrorNorm);
  // Reports before the temperature was kept have no key; null: NVML did not say.
  if (r.optional_member(j, where, "temperature_c") != nullptr) {
    const double celsius = r.number_or_nan(j, where, "temperature_c", kCelsius);
    e.temperature_c = std::isnan(celsius) ? 0 : celsius;
  }
  return e;
}

json share_run_json(const ShareRun& run) {
  json bytes = json::object();
  for (const auto& [level, value] : run.bytes) bytes[std::string(to_string(level))] = value;
  return {{"sms", run.sms}, {"seconds", run.seconds}, {"bytes", bytes}, {"source", run.source}};
}

ShareRun share_run_from_json(const JsonReader& r, const json& j, const std::string& where) {
  r.only_keys(j, where, {"sms", "seconds", "bytes", "source"});
  ShareRun run;
  run.sms = static_cast<int>(r.integer(j, where, "sms", 1, kMaxSmCount));
  run.seconds = r.number(j, where, "seconds", kSampleSeconds);
  const json& bytes = r.member(j, where, "bytes");
  const std::string bw = key_path(where, "bytes");
  r.require_object(bytes, bw);
  for (const auto& [key, value] : bytes.items()) {
    const std::optional<MemoryLevel> level = parse_memory_level(key);
    if (!level) r.fail(key_path(bw, key), "must be dram, l2 or l1");
    run.bytes[*level] = r.number_value(value, key_path(bw, key), kBytes);
  }
  run.source = r.string(j, where, "source", true);
  return run;
}

json kernels_json(const std::vector<PointKernel>& kernels) {
  json out = json::array();
  for (const PointKernel& k : kernels)
    out.push_back({{"name", k.name},
                   {"grid", k.grid},
                   {"block", k.block},
                   {"registers_per_thread", k.registers_per_thread},
                   {"shared_bytes", k.shared_bytes},
                   {"seconds", json_number(k.seconds)},
                   {"start_seconds", json_number(k.start_seconds)}});
  return out;
}

std::vector<PointKernel> kernels_from_json(const JsonReader& r, const json& j,
                                           const std::string& where) {
  r.require_array(j, where);
  if (j.size() > static_cast<std::size_t>(kMaxKernelsPerLaunch))
    r.fail(where, "holds " + std::to_string(j.size()) + " kernels; at most " +
                      std::to_string(kMaxKernelsPerLaunch) + " are read");
  std::vector<PointKernel> kernels;
  for (std::size_t i = 0; i < j.size(); ++i) {
    const std::string at = index_path(where, i);
    const json& k = j[i];
    r.only_keys(k, at,
                {"name", "grid", "block", "registers_per_thread", "shared_bytes", "seconds",
                 "start_seconds"});
    PointKernel p;
    p.name = r.string(k, at, "name");
    p.grid = dims_of(r, k, at, "grid");
    p.block = dims_of(r, k, at, "block");
    p.registers_per_thread =
        static_cast<int>(r.integer(k, at, "registers_per_thread", 0, kMaxRegistersPerThread));
    p.shared_bytes = r.integer(k, at, "shared_bytes", 0, kMaxSharedBytes);
    p.seconds = r.number(k, at, "seconds", kKernelSeconds);
    p.start_seconds = r.number(k, at, "start_seconds", kKernelSeconds);
    kernels.push_back(std::move(p));
  }
  return kernels;
}

DeviceInfo device_from_json(const JsonReader& r, const json& d, const std::string& where,
                            DeviceFields fields) {
  const bool all = fields == DeviceFields::kAll;
  DeviceInfo info;
  info.name = r.string(d, where, "name");
  info.chip = all ? r.string(d, where, "chip", true) : optional_string(r, d, where, "chip");
  info.compute_capability = r.string(d, where, "compute_capability");
  if (all) {
    const auto cc = parse_compute_capability(info.compute_capability);
    if (!cc)
      r.fail(key_path(where, "compute_capability"),
             "must be MAJOR.MINOR, e.g. \"9.0\" (got " + quote_text(info.compute_capability) + ")");
    info.cc_major = cc->first;
    info.cc_minor = cc->second;
  }
  info.sm_count = static_cast<int>(r.integer(d, where, "sm_count", 1, kMaxSmCount));
  if (all) {
    info.memory_bytes = r.integer(d, where, "memory_bytes", kMinMemoryBytes, kMaxMemoryBytes);
    info.l2_cache_bytes = r.integer(d, where, "l2_cache_bytes", kMinL2Bytes, kMaxL2Bytes);
  }
  info.driver_version = all ? r.string(d, where, "driver_version", true)
                            : optional_string(r, d, where, "driver_version");
  info.runtime_version = all ? r.string(d, where, "runtime_version", true)
                             : optional_string(r, d, where, "runtime_version");
  return info;
}

}  // namespace roofline
