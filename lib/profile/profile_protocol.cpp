#include "lib/profile/profile_protocol.hpp"

#include <algorithm>
#include <cstdio>
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

constexpr std::int64_t kCountMax = std::numeric_limits<std::int64_t>::max();

std::uint64_t count_of(const JsonReader& read, const json& j, const std::string& where,
                       const char* key) {
  return static_cast<std::uint64_t>(read.integer(j, where, key, 0, kCountMax));
}

// "0x1a2b": a CRC as the records write it (a string: a JSON number would not keep 64 bits
// everywhere).
std::string crc_text(std::uint64_t crc) {
  char text[19];
  std::snprintf(text, sizeof text, "0x%llx", static_cast<unsigned long long>(crc));
  return text;
}

std::uint64_t crc_from(const JsonReader& read, const json& j, const std::string& where) {
  const std::string text = read.string(j, where, "crc");
  const std::string key = key_path(where, "crc");
  if (text.size() < 3 || text.size() > 18 || text.compare(0, 2, "0x") != 0 ||
      text.find_first_not_of("0123456789abcdef", 2) != std::string::npos)
    read.fail(key, "must be a hexadecimal CRC (\"0x...\"), not " + quote_text(text));
  return std::stoull(text.substr(2), nullptr, 16);
}

StallRecord stall_record_from(const JsonReader& read, const json& j) {
  StallRecord r;
  r.launch_index = read.integer(j, "", "index", 0, kCountMax);
  r.sampled = read.boolean(j, "", "sampled");
  r.period_log2 = static_cast<int>(read.integer(j, "", "period_log2", 0, 31));
  r.expected_seconds = read.number(j, "", "expected_seconds", kSampleSeconds);
  r.expected_default = read.boolean(j, "", "expected_default");
  r.note = read.string(j, "", "note", true);
  const json& totals = read.member(j, "", "totals");
  read.only_keys(totals, "totals", {"total", "dropped", "non_user", "buffer_full"});
  r.totals.total = count_of(read, totals, "totals", "total");
  r.totals.dropped = count_of(read, totals, "totals", "dropped");
  r.totals.non_user = count_of(read, totals, "totals", "non_user");
  r.totals.buffer_full = read.boolean(totals, "totals", "buffer_full");
  const json& pcs = read.member(j, "", "pcs");
  read.require_array(pcs, "pcs");
  for (std::size_t k = 0; k < pcs.size(); ++k) {
    const std::string where = index_path("pcs", k);
    read.only_keys(pcs[k], where, {"function", "crc", "offset", "reasons"});
    PcSample pc;
    pc.function = read.string(pcs[k], where, "function", true);
    pc.cubin_crc = crc_from(read, pcs[k], where);
    pc.pc_offset = count_of(read, pcs[k], where, "offset");
    const json& reasons = read.member(pcs[k], where, "reasons");
    const std::string rw = key_path(where, "reasons");
    read.require_object(reasons, rw);
    for (const auto& item : reasons.items())
      pc.reasons[item.key()] = static_cast<std::uint64_t>(
          read.integer_value(item.value(), key_path(rw, item.key()), 0, kCountMax));
    r.pcs.push_back(std::move(pc));
  }
  if (!r.sampled && !r.pcs.empty()) read.fail("pcs", "a launch not sampled has no PCs");
  return r;
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
  } else if (type == "stalls") {
    out.stalls.push_back(stall_record_from(read, j));
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
          {profile_env::kGraphNodes, std::string(to_string(options.graph_nodes))},
          {profile_env::kStalls, options.stalls ? "1" : "0"},
          {profile_env::kStallsPerKernel, std::to_string(options.stalls_per_kernel)}};
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
  if (const char* stalls = std::getenv(profile_env::kStalls);
      stalls != nullptr && *stalls != '\0') {
    if (std::string(stalls) == "1")
      options.stalls = true;
    else if (std::string(stalls) != "0")
      throw InputError(std::string(profile_env::kStalls) + "=" + stalls + ": must be 0 or 1");
  }
  if (const char* regex = std::getenv(profile_env::kKernelRegex)) options.kernel_regex = regex;
  options.launch_skip = integer_variable(profile_env::kLaunchSkip, 0, 0);
  options.launch_count = integer_variable(profile_env::kLaunchCount, -1, -1);
  options.stalls_per_kernel = integer_variable(profile_env::kStallsPerKernel, -1, -1);
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

std::string stalls_record(const StallRecord& r) {
  json pcs = json::array();
  for (const PcSample& pc : r.pcs) {
    json reasons = json::object();
    for (const auto& [reason, samples] : pc.reasons) reasons[reason] = samples;
    pcs.push_back({{"function", pc.function},
                   {"crc", crc_text(pc.cubin_crc)},
                   {"offset", pc.pc_offset},
                   {"reasons", reasons}});
  }
  return line_of({{"type", "stalls"},
                  {"index", r.launch_index},
                  {"sampled", r.sampled},
                  {"period_log2", r.period_log2},
                  {"expected_seconds", json_number(r.expected_seconds)},
                  {"expected_default", r.expected_default},
                  {"totals",
                   {{"total", r.totals.total},
                    {"dropped", r.totals.dropped},
                    {"non_user", r.totals.non_user},
                    {"buffer_full", r.totals.buffer_full}}},
                  {"pcs", pcs},
                  {"note", r.note}});
}

std::string cubin_file_name(std::uint64_t crc) {
  return "cubin-" + crc_text(crc).substr(2) + ".cubin";
}

void attach_stalls(std::vector<Row>& rows, const std::vector<StallRecord>& stalls,
                   const std::vector<std::string>& notes) {
  std::map<std::int64_t, const StallRecord*> by_index;
  for (const StallRecord& r : stalls) by_index[r.launch_index] = &r;
  // Kernel node rows by launch and function: how many share one function's samples.
  std::map<std::pair<std::int64_t, std::string>, int> nodes_of;
  for (const Row& row : rows)
    if (row.launch && row.launch->node_kind == "kernel")
      ++nodes_of[{row.launch->index, row.launch->mangled_name}];
  for (Row& row : rows) {
    if (!row.launch) continue;
    const auto found = by_index.find(row.launch->index);
    if (found == by_index.end()) continue;
    const StallRecord& record = *found->second;
    const KernelLaunch& launch = *row.launch;
    if (launch.is_graph_node() && launch.node_kind != "kernel") continue;
    std::vector<std::string> all;
    if (!record.note.empty()) all.push_back(record.note);
    if (!record.sampled) {
      StallSampling none;
      none.period_log2 = record.period_log2;
      none.note = join(all, "; ");
      row.stalls = std::move(none);
      continue;
    }
    if (record.expected_default)
      all.push_back("period for an assumed " + format_fixed(record.expected_seconds * 1e6, 0) +
                    " µs launch (no earlier launch of this kernel)");
    all.insert(all.end(), notes.begin(), notes.end());
    if (!launch.is_graph_node()) {
      row.stalls = stall_sampling_of(record.pcs, record.period_log2, record.totals, all);
      continue;
    }
    // A kernel node: the samples of its function in this launch.
    std::vector<PcSample> mine;
    for (const PcSample& pc : record.pcs)
      if (pc.function == launch.mangled_name) mine.push_back(pc);
    const int same = nodes_of[{launch.index, launch.mangled_name}];
    if (same > 1)
      all.push_back("the samples of all " + std::to_string(same) +
                    " nodes of this kernel in the graph launch (PC sampling does not tell "
                    "them apart)");
    if (mine.empty() && !record.pcs.empty()) {
      StallSampling none;
      none.period_log2 = record.period_log2;
      all.insert(all.begin(), "no sample of the graph launch fell in this node's kernel");
      none.note = join(all, "; ");
      row.stalls = std::move(none);
      continue;
    }
    row.stalls = stall_sampling_of(mine, record.period_log2, record.totals, all);
  }
}

std::string describe_phases(const std::map<std::string, double>& phases) {
  static const char* const kOrder[] = {"wait",   "open",    "plan",     "checkpoint", "flush",
                                       "start",  "sample",  "sync",     "push",       "kernel",
                                       "pop",    "restore", "stop",     "decode",     "evaluate",
                                       "record", "events",  "activity", "cubins",     "close"};
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
