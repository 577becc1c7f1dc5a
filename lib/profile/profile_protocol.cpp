#include "lib/profile/profile_protocol.hpp"

#include <cstdlib>
#include <limits>
#include <regex>

#include <nlohmann/json.hpp>

#include "lib/core/base/errors.hpp"
#include "lib/core/base/json_reader.hpp"
#include "lib/core/base/text.hpp"
#include "lib/core/report/json_values.hpp"

namespace roofline {
namespace {

using nlohmann::json;

std::string line_of(const json& j) {
  return j.dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
}

std::int64_t integer_variable(const char* name, std::int64_t fallback, std::int64_t minimum) {
  const char* text = std::getenv(name);
  if (text == nullptr || *text == '\0') return fallback;
  char* end = nullptr;
  const long long value = std::strtoll(text, &end, 10);
  if (end == text || *end != '\0' || value < minimum)
    throw InputError(std::string(name) + "=" + text +
                     ": must be an integer >= " + std::to_string(minimum));
  return value;
}

Row row_from(const JsonReader& read, const json& j) {
  Row row;
  row.launch = launch_from_json(read, read.member(j, "", "launch"), "launch");
  KernelLaunch& launch = *row.launch;
  // A graph launch, a memcpy or a memset node is named as it is ("CUDA graph", "memcpy DtoD"),
  // not parsed as a C++ signature (which would keep its last word).
  const bool plain_name =
      launch.graph || launch.node_kind == "memcpy" || launch.node_kind == "memset";
  row.kernel = plain_name ? launch.demangled_name : short_kernel_name(launch.demangled_name);
  const std::string status_text = read.string(j, "", "status");
  auto status = parse_row_status(status_text);
  if (!status) read.fail("status", "unknown status " + quote_text(status_text));
  row.status = *status;
  row.message = read.string(j, "", "message", true);
  const json& counters = read.member(j, "", "counters");
  read.require_object(counters, "counters");
  for (const auto& item : counters.items()) {
    if (item.value().is_null()) continue;  // NaN: not measured
    row.counters[item.key()] =
        read.number_value(item.value(), key_path("counters", item.key()), kCounterValue);
  }
  if (auto t = row.counters.find(quantity::kGpuTime); t != row.counters.end() && t->second > 0)
    row.timing = Timing{{t->second}, 0, 0};
  if (auto workload = workload_in_range_name(launch.nvtx_range)) {
    row.workload = *workload;
    launch.workload_known = true;
  }
  return row;
}

// One record (a line) into `out`.
void read_record(const JsonReader& read, const json& j, ProcessRecords& out) {
  constexpr std::int64_t kIntMax = std::numeric_limits<int>::max();
  constexpr std::int64_t kInt64Max = std::numeric_limits<std::int64_t>::max();
  const std::string type = read.string(j, "", "type");
  if (type == "process") {
    out.process_id = static_cast<int>(read.integer(j, "", "pid", 0, kIntMax));
    out.parent_id = static_cast<int>(read.integer(j, "", "ppid", 0, kIntMax));
    out.process = read.string(j, "", "process", true);
  } else if (type == "device") {
    out.device = device_from_json(read, j, "");
    out.counter_set = read.string(j, "", "counter_set");
    out.metrics = read.strings(j, "", "metrics");
    out.counter_passes = static_cast<int>(read.integer(j, "", "passes", 0, kMaxCounterPasses));
  } else if (type == "launch") {
    out.rows.push_back(row_from(read, j));
  } else if (type == "error") {
    const std::string kind_text = read.string(j, "", "kind");
    auto kind = parse_profile_error_kind(kind_text);
    if (!kind) read.fail("kind", "unknown error kind " + quote_text(kind_text));
    out.errors.push_back({*kind, read.string(j, "", "message", true)});
  } else if (type == "end") {
    out.ended = true;
    out.launches = read.integer(j, "", "launches", 0, kInt64Max);
    out.profiled = read.integer(j, "", "profiled", 0, kInt64Max);
    if (const json* phases = read.optional_member(j, "", "phases"); phases != nullptr) {
      read.require_object(*phases, "phases");
      for (const auto& item : phases->items()) {
        if (item.value().is_null()) continue;  // NaN: not measured
        out.phases[item.key()] =
            read.number_value(item.value(), key_path("phases", item.key()), kProfilePhase);
      }
    }
  } else {
    read.fail("type", "unknown record type " + quote_text(type));
  }
}

}  // namespace

std::map<std::string, std::string> to_environment(const ProfileOptions& options) {
  return {{profile_env::kCounterSet, std::string(to_string(options.counter_set))},
          {profile_env::kCache, options.cache == CacheControl::kCold ? "cold" : "warm"},
          {profile_env::kKernelRegex, options.kernel_regex},
          {profile_env::kLaunchSkip, std::to_string(options.launch_skip)},
          {profile_env::kLaunchCount, std::to_string(options.launch_count)},
          {profile_env::kReplay, options.replay == ReplayMode::kBatch ? "batch" : "launch"},
          {profile_env::kGraphNodes, std::string(to_string(options.graph_nodes))}};
}

std::string_view to_string(GraphNodes mode) {
  switch (mode) {
    case GraphNodes::kCounted:
      return "counted";
    case GraphNodes::kTimed:
      return "timed";
    case GraphNodes::kOff:
      break;
  }
  return "off";
}

std::optional<GraphNodes> parse_graph_nodes(std::string_view text) {
  for (GraphNodes mode : {GraphNodes::kCounted, GraphNodes::kTimed, GraphNodes::kOff})
    if (text == to_string(mode)) return mode;
  return std::nullopt;
}

ProfileOptions options_from_environment() {
  ProfileOptions options;
  if (const char* set = std::getenv(profile_env::kCounterSet); set != nullptr && *set != '\0') {
    if (std::string(set) == "full")
      options.counter_set = CounterSet::kFull;
    else if (std::string(set) != "roofline")
      throw InputError(std::string(profile_env::kCounterSet) + "=" + set +
                       ": must be roofline or full");
  }
  if (const char* cache = std::getenv(profile_env::kCache); cache != nullptr && *cache != '\0') {
    if (std::string(cache) == "warm")
      options.cache = CacheControl::kWarm;
    else if (std::string(cache) != "cold")
      throw InputError(std::string(profile_env::kCache) + "=" + cache + ": must be cold or warm");
  }
  if (const char* replay = std::getenv(profile_env::kReplay);
      replay != nullptr && *replay != '\0') {
    if (std::string(replay) == "launch")
      options.replay = ReplayMode::kPerLaunch;
    else if (std::string(replay) == "batch")
      options.replay = ReplayMode::kBatch;
    else
      throw InputError(std::string(profile_env::kReplay) + "=" + replay +
                       ": must be batch or launch");
  }
  if (const char* nodes = std::getenv(profile_env::kGraphNodes);
      nodes != nullptr && *nodes != '\0') {
    const std::optional<GraphNodes> mode = parse_graph_nodes(nodes);
    if (!mode)
      throw InputError(std::string(profile_env::kGraphNodes) + "=" + nodes +
                       ": must be counted, timed or off");
    options.graph_nodes = *mode;
  }
  if (const char* regex = std::getenv(profile_env::kKernelRegex)) options.kernel_regex = regex;
  options.launch_skip = integer_variable(profile_env::kLaunchSkip, 0, 0);
  options.launch_count = integer_variable(profile_env::kLaunchCount, -1, -1);
  return options;
}

std::string_view to_string(ProfileErrorKind kind) {
  switch (kind) {
    case ProfileErrorKind::kNoDevice:
      return "no_device";
    case ProfileErrorKind::kNotPermitted:
      return "not_permitted";
    case ProfileErrorKind::kOtherProfiler:
      return "other_profiler";
    case ProfileErrorKind::kUnsupported:
      return "unsupported";
    case ProfileErrorKind::kInternal:
      return "internal";
  }
  return "internal";
}

std::optional<ProfileErrorKind> parse_profile_error_kind(std::string_view text) {
  for (ProfileErrorKind kind : {ProfileErrorKind::kNoDevice, ProfileErrorKind::kNotPermitted,
                                ProfileErrorKind::kOtherProfiler, ProfileErrorKind::kUnsupported,
                                ProfileErrorKind::kInternal})
    if (to_string(kind) == text) return kind;
  return std::nullopt;
}

ProcessRecords read_process_records(const std::string& text, const std::string& origin) {
  ProcessRecords out;
  const std::vector<std::string> lines = split(text, '\n');
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const std::string& line = lines[i];
    if (line.empty()) continue;
    const bool last = i + 1 == lines.size();  // no newline after it: cut short
    const std::string where = origin + ":" + std::to_string(i + 1);
    json j;
    try {
      j = parse_json_text(line, where);
    } catch (const InputError&) {
      if (last) break;  // the process ended while writing it
      throw;
    }
    read_record(JsonReader(where), j, out);
  }
  return out;
}

std::string process_record(int pid, int ppid, const std::string& process) {
  return line_of({{"type", "process"}, {"pid", pid}, {"ppid", ppid}, {"process", process}});
}

std::string device_record(const DeviceInfo& d, const std::string& counter_set,
                          const std::vector<std::string>& metrics, int passes) {
  json record = device_json(d);  // the device's fields at the top level, beside these
  record["type"] = "device";
  record["counter_set"] = counter_set;
  record["metrics"] = metrics;
  record["passes"] = passes;
  return line_of(record);
}

std::string launch_record(const KernelLaunch& launch, RowStatus status, const std::string& message,
                          const std::map<std::string, double>& counters) {
  json c = json::object();
  for (const auto& [key, value] : counters) c[key] = json_number(value);
  return line_of({{"type", "launch"},
                  {"launch", launch_json(launch)},
                  {"status", to_string(status)},
                  {"message", message},
                  {"counters", c}});
}

std::string error_record(ProfileErrorKind kind, const std::string& message) {
  return line_of({{"type", "error"}, {"kind", to_string(kind)}, {"message", message}});
}

std::string end_record(std::int64_t launches, std::int64_t profiled,
                       const std::map<std::string, double>& phases) {
  json p = json::object();
  for (const auto& [phase, seconds] : phases) p[phase] = json_number(seconds);
  return line_of({{"type", "end"}, {"launches", launches}, {"profiled", profiled}, {"phases", p}});
}

std::string describe_phases(const std::map<std::string, double>& phases) {
  static const char* const kOrder[] = {
      "wait", "open",    "plan", "checkpoint", "flush",    "start",  "sync",   "push",     "kernel",
      "pop",  "restore", "stop", "decode",     "evaluate", "record", "events", "activity", "close"};
  std::string out;
  double total = 0;
  for (const char* phase : kOrder)
    if (auto it = phases.find(phase); it != phases.end()) {
      out +=
          (out.empty() ? "" : ", ") + std::string(phase) + " " + format_fixed(it->second, 3) + " s";
      total += it->second;
    }
  if (auto it = phases.find("sessions"); it != phases.end())
    out += "; " + format_fixed(it->second, 0) + " counter session(s) opened";
  if (auto it = phases.find("batches"); it != phases.end())
    out += "; " + format_fixed(it->second, 0) + " batch(es) read";
  return "total " + format_fixed(total, 3) + " s: " + out;
}

std::optional<Workload> workload_in_range_name(const std::string& nvtx_range) {
  static const std::regex kLabel(R"(B(\d+) H(\d+) N(\d+) d(\d+) (causal|full) (fwd|bwd))");
  std::optional<Workload> found;
  for (auto it = std::sregex_iterator(nvtx_range.begin(), nvtx_range.end(), kLabel);
       it != std::sregex_iterator(); ++it) {
    const std::smatch& m = *it;
    Workload w;
    try {
      w.batch = std::stoi(m[1]);
      w.heads = std::stoi(m[2]);
      w.seq_len = std::stoi(m[3]);
      w.head_dim = std::stoi(m[4]);
    } catch (const std::exception&) {
      continue;  // out of range: not a workload
    }
    w.causal = m[5] == "causal";
    w.pass = m[6] == "fwd" ? Pass::kForward : Pass::kBackward;
    found = w;  // the last match is the innermost range
  }
  return found;
}

}  // namespace roofline
