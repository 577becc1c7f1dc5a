#include "lib/core/domain/gpu_spec.hpp"

#include <unistd.h>
#include <algorithm>
#include <cstdlib>
#include <set>

#include <nlohmann/json.hpp>

#include "lib/core/base/errors.hpp"
#include "lib/core/base/json_reader.hpp"
#include "lib/core/base/suggest.hpp"
#include "lib/core/base/text.hpp"

namespace roofline {
namespace {

using nlohmann::json;

constexpr const char* kIdentityNumbers[] = {"sm_count",       "boost_clock_mhz", "base_clock_mhz",
                                            "l2_cache_bytes", "memory_bytes",    "tdp_watts"};
// Optional figures: when a spec gives one, `sources` must name its source.
constexpr const char* kPerSmNumbers[] = {"xu_exp2_per_clock_per_sm",
                                         "shared_bytes_per_clock_per_sm"};
constexpr const char* kLaunchFloor = "launch_floor_us";
constexpr const char* kNodeFloor = "node_floor_us";

double at_clock(double per_clock_per_sm, int sms, double clock_hz, double boost_mhz) {
  const double clock = clock_hz > 0 ? clock_hz : boost_mhz * 1e6;
  return per_clock_per_sm > 0 ? per_clock_per_sm * sms * clock : 0;
}

// A level's "shares" (gpu_spec.hpp, MemoryLevelSpec::shares): points of rising SM count, the
// last on all of the spec's SMs, and "shares_source" beside them.
void parse_shares(const JsonReader& read, const json& entry, const json& shares,
                  const std::string& where, const GpuSpec& spec, MemoryLevelSpec& level) {
  const std::string path = key_path(where, "shares");
  read.require_array(shares, path);
  if (shares.empty()) read.fail(path, "must not be empty (leave it out when not measured)");
  for (std::size_t i = 0; i < shares.size(); ++i) {
    const std::string at = index_path(path, i);
    read.require_object(shares[i], at);
    read.only_keys(shares[i], at, {"sms", "gbps"});
    ShareBandwidth point;
    point.sms = static_cast<int>(read.integer(shares[i], at, "sms", 1, spec.sm_count));
    point.gbps = read.number(shares[i], at, "gbps", kBandwidthGbps);
    if (!level.shares.empty() && point.sms <= level.shares.back().sms)
      read.fail(key_path(at, "sms"), "must rise from one point to the next");
    level.shares.push_back(point);
  }
  if (level.shares.back().sms != spec.sm_count)
    read.fail(path, "the last point must be on all " + std::to_string(spec.sm_count) +
                        " SMs (the ratios to it scale the level onto a share)");
  level.shares_source = read.string(entry, where, "shares_source");
}

// The DRAM level's "stream" (gpu_spec.hpp, MemoryLevelSpec::stream): points of rising bytes, each
// {"bytes", "seconds"}, and "stream_source" beside them.
void parse_stream(const JsonReader& read, const json& entry, const json& stream,
                  const std::string& where, MemoryLevelSpec& level) {
  const std::string path = key_path(where, "stream");
  if (level.level != MemoryLevel::kDram) read.fail(path, "only the dram level has a stream curve");
  read.require_array(stream, path);
  if (stream.empty()) read.fail(path, "must not be empty (leave it out when not measured)");
  for (std::size_t i = 0; i < stream.size(); ++i) {
    const std::string at = index_path(path, i);
    read.require_object(stream[i], at);
    read.only_keys(stream[i], at, {"bytes", "seconds"});
    StreamPoint point;
    point.bytes = read.number(stream[i], at, "bytes", kStreamBytes);
    point.seconds = read.number(stream[i], at, "seconds", kStreamSeconds);
    if (!level.stream.empty() && point.bytes <= level.stream.back().bytes)
      read.fail(key_path(at, "bytes"), "must rise from one point to the next");
    level.stream.push_back(point);
  }
  level.stream_source = read.string(entry, where, "stream_source");
}

}  // namespace

std::string_view to_string(MemoryLevel level) {
  switch (level) {
    case MemoryLevel::kDram:
      return "dram";
    case MemoryLevel::kL2:
      return "l2";
    case MemoryLevel::kL1:
      return "l1";
  }
  return "?";
}

std::string_view display_name(MemoryLevel level) {
  switch (level) {
    case MemoryLevel::kDram:
      return "DRAM";
    case MemoryLevel::kL2:
      return "L2";
    case MemoryLevel::kL1:
      return "L1";
  }
  return "?";
}

std::optional<MemoryLevel> parse_memory_level(std::string_view text) {
  for (MemoryLevel level : kAllMemoryLevels)
    if (to_string(level) == text) return level;
  return std::nullopt;
}

std::string_view to_string(ComputePath path) {
  switch (path) {
    case ComputePath::kTensorFp16:
      return "tensor_fp16";
    case ComputePath::kTensorBf16:
      return "tensor_bf16";
    case ComputePath::kTensorTf32:
      return "tensor_tf32";
    case ComputePath::kTensorFp8:
      return "tensor_fp8";
    case ComputePath::kFp16CudaCore:
      return "fp16_cuda_core";
    case ComputePath::kFp32:
      return "fp32";
    case ComputePath::kFp64:
      return "fp64";
  }
  return "?";
}

std::optional<ComputePath> parse_compute_path(std::string_view text) {
  for (ComputePath path : {ComputePath::kTensorFp16, ComputePath::kTensorBf16,
                           ComputePath::kTensorTf32, ComputePath::kTensorFp8,
                           ComputePath::kFp16CudaCore, ComputePath::kFp32, ComputePath::kFp64})
    if (to_string(path) == text) return path;
  return std::nullopt;
}

bool is_tensor(ComputePath path) {
  return path == ComputePath::kTensorFp16 || path == ComputePath::kTensorBf16 ||
         path == ComputePath::kTensorTf32 || path == ComputePath::kTensorFp8;
}

std::string_view to_string(TensorInstruction instruction) {
  switch (instruction) {
    case TensorInstruction::kNone:
      return "";
    case TensorInstruction::kMmaSync:
      return "mma_sync";
    case TensorInstruction::kWgmma:
      return "wgmma";
    case TensorInstruction::kTcgen05:
      return "tcgen05";
  }
  return "?";
}

std::optional<TensorInstruction> parse_tensor_instruction(std::string_view text) {
  for (TensorInstruction instruction :
       {TensorInstruction::kMmaSync, TensorInstruction::kWgmma, TensorInstruction::kTcgen05})
    if (to_string(instruction) == text) return instruction;
  return std::nullopt;
}

std::optional<std::pair<int, int>> parse_compute_capability(std::string_view text) {
  const std::size_t dot = text.find('.');
  if (dot == std::string_view::npos) return std::nullopt;
  auto digits = [](std::string_view part, int* out) {
    if (part.empty() || part.size() > 2) return false;
    *out = 0;
    for (char c : part) {
      if (c < '0' || c > '9') return false;
      *out = *out * 10 + (c - '0');
    }
    return true;
  };
  std::pair<int, int> cc;
  if (!digits(text.substr(0, dot), &cc.first) || !digits(text.substr(dot + 1), &cc.second))
    return std::nullopt;
  return cc;
}

std::string ComputeCeiling::id() const {
  std::string out(to_string(path));
  if (instruction != TensorInstruction::kNone) out += "." + std::string(to_string(instruction));
  return out;
}

std::string ComputeCeiling::label() const {
  std::string out;
  switch (path) {
    case ComputePath::kTensorFp16:
      out = "tensor FP16";
      break;
    case ComputePath::kTensorBf16:
      out = "tensor BF16";
      break;
    case ComputePath::kTensorTf32:
      out = "tensor TF32";
      break;
    case ComputePath::kTensorFp8:
      out = "tensor FP8";
      break;
    case ComputePath::kFp16CudaCore:
      out = "FP16 (CUDA cores)";
      break;
    case ComputePath::kFp32:
      out = "FP32";
      break;
    case ComputePath::kFp64:
      out = "FP64";
      break;
  }
  if (instruction != TensorInstruction::kNone)
    out += " (" + std::string(to_string(instruction)) + ")";
  if (at_power_cap) out += " at the power cap";
  return out;
}

const MemoryLevelSpec* GpuSpec::level(MemoryLevel wanted) const {
  for (const MemoryLevelSpec& entry : memory)
    if (entry.level == wanted) return &entry;
  return nullptr;
}

double GpuSpec::exp2_per_second(double clock_hz) const {
  return at_clock(xu_exp2_per_clock_per_sm, sm_count, clock_hz, boost_clock_mhz);
}

double GpuSpec::shared_bytes_per_second(double clock_hz) const {
  return at_clock(shared_bytes_per_clock_per_sm, sm_count, clock_hz, boost_clock_mhz);
}

const MemoryLevelSpec& GpuSpec::dram() const {
  const MemoryLevelSpec* entry = level(MemoryLevel::kDram);
  if (entry == nullptr) throw InputError(key + ": memory_levels: no dram entry");
  return *entry;
}

const ComputeCeiling* GpuSpec::ceiling(ComputePath path, TensorInstruction instruction) const {
  const ComputeCeiling* best = nullptr;
  for (const ComputeCeiling& entry : compute) {
    if (entry.path != path) continue;
    if (entry.instruction == instruction) return &entry;
    if (best == nullptr || entry.peak_tflops > best->peak_tflops) best = &entry;
  }
  if (instruction != TensorInstruction::kNone) {
    // An exact instruction was asked for; fall back to an instruction-neutral entry only.
    for (const ComputeCeiling& entry : compute)
      if (entry.path == path && entry.instruction == TensorInstruction::kNone) return &entry;
    return nullptr;
  }
  return best;
}

GpuSpec parse_gpu_spec(const json& root, const std::string& origin) {
  const JsonReader read(origin);
  if (!root.is_object()) read.fail("(top level)", "must be a JSON object");
  read.only_keys(root, "",
                 {"name",
                  "aliases",
                  "device_names",
                  "chip",
                  "compute_capability",
                  "sm_count",
                  "boost_clock_mhz",
                  "base_clock_mhz",
                  "l2_cache_bytes",
                  "memory_bytes",
                  "tdp_watts",
                  "xu_exp2_per_clock_per_sm",
                  "shared_bytes_per_clock_per_sm",
                  "launch_floor_us",
                  "node_floor_us",
                  "sources",
                  "memory_levels",
                  "compute_ceilings",
                  "calibrated_from",
                  "sm_limits",
                  "energy_coefficients"});
  GpuSpec spec;
  spec.key = std::filesystem::path(origin).stem().string();
  spec.file = origin;
  spec.name = read.string(root, "", "name");
  spec.aliases = read.strings(root, "", "aliases");
  spec.device_names = read.strings(root, "", "device_names");
  spec.chip = read.string(root, "", "chip");
  spec.compute_capability = read.string(root, "", "compute_capability");
  if (!parse_compute_capability(spec.compute_capability))
    read.fail("compute_capability", "must be MAJOR.MINOR, e.g. \"9.0\" (got " +
                                        quote_text(spec.compute_capability) + ")");
  spec.sm_count = static_cast<int>(read.integer(root, "", "sm_count", 1, kMaxSmCount));
  spec.boost_clock_mhz = read.number(root, "", "boost_clock_mhz", kClockMhz);
  spec.base_clock_mhz = read.number(root, "", "base_clock_mhz", kClockMhz);
  spec.l2_cache_bytes = read.integer(root, "", "l2_cache_bytes", kMinL2Bytes, kMaxL2Bytes);
  spec.memory_bytes = read.integer(root, "", "memory_bytes", kMinMemoryBytes, kMaxMemoryBytes);
  spec.tdp_watts = read.number(root, "", "tdp_watts", kTdpWatts);
  if (spec.base_clock_mhz > spec.boost_clock_mhz)
    read.fail("base_clock_mhz", "must not exceed boost_clock_mhz");
  if (root.contains("calibrated_from"))
    spec.calibrated_from = read.string(root, "", "calibrated_from");
  if (const json* energy = read.optional_member(root, "", "energy_coefficients"); energy != nullptr)
    spec.energy = parse_energy_coefficients(read, *energy, "energy_coefficients");

  if (const json* limits = read.optional_member(root, "", "sm_limits"); limits != nullptr) {
    read.require_object(*limits, "sm_limits");
    read.only_keys(*limits, "sm_limits",
                   {"max_threads", "max_ctas", "registers", "shared_bytes",
                    "reserved_shared_per_cta", "source"});
    SmLimits l;
    l.max_threads = static_cast<int>(read.integer(*limits, "sm_limits", "max_threads", 32, 65536));
    l.max_ctas = static_cast<int>(read.integer(*limits, "sm_limits", "max_ctas", 1, 1024));
    l.registers = static_cast<int>(read.integer(*limits, "sm_limits", "registers", 256, 1 << 24));
    l.shared_bytes = read.integer(*limits, "sm_limits", "shared_bytes", 0, std::int64_t{1} << 30);
    l.reserved_shared_per_cta =
        read.integer(*limits, "sm_limits", "reserved_shared_per_cta", 0, std::int64_t{1} << 20);
    l.source = read.string(*limits, "sm_limits", "source");
    spec.sm_limits = std::move(l);
  }

  const json& sources = read.member(root, "", "sources");
  read.require_object(sources, "sources");
  for (const auto& item : sources.items()) {
    const std::string& key = item.key();
    const auto is_key = [&](const char* name) { return key == name; };
    const bool known =
        std::any_of(std::begin(kIdentityNumbers), std::end(kIdentityNumbers), is_key) ||
        ((std::any_of(std::begin(kPerSmNumbers), std::end(kPerSmNumbers), is_key) ||
          key == kLaunchFloor || key == kNodeFloor) &&
         root.contains(key));
    if (!known) read.fail(key_path("sources", key), "unknown key");
  }
  for (const char* key : kIdentityNumbers) spec.sources[key] = read.string(sources, "sources", key);
  // Added with the exponential roof (issue 23); optional so that specs embedded in older
  // reports still load: absent means no XU roof and the L1 level for shared memory.
  for (const char* key : kPerSmNumbers) {
    if (!root.contains(key)) continue;
    const double value = read.number(root, "", key, kPerSmPerClock);
    (std::string_view(key) == kPerSmNumbers[0] ? spec.xu_exp2_per_clock_per_sm
                                               : spec.shared_bytes_per_clock_per_sm) = value;
    spec.sources[key] = read.string(sources, "sources", key);
  }
  if (root.contains(kLaunchFloor)) {
    spec.launch_floor_us = read.number(root, "", kLaunchFloor, kLaunchFloorUs);
    spec.sources[kLaunchFloor] = read.string(sources, "sources", kLaunchFloor);
  }
  if (root.contains(kNodeFloor)) {
    spec.node_floor_us = read.number(root, "", kNodeFloor, kLaunchFloorUs);
    spec.sources[kNodeFloor] = read.string(sources, "sources", kNodeFloor);
  }

  const json& levels = read.member(root, "", "memory_levels");
  if (!levels.is_array() || levels.empty()) read.fail("memory_levels", "must be a non-empty array");
  for (std::size_t i = 0; i < levels.size(); ++i) {
    const std::string where = index_path("memory_levels", i);
    const json& entry = levels[i];
    read.require_object(entry, where);
    read.only_keys(entry, where,
                   {"level", "bandwidth_gbps", "source", "shares", "shares_source", "stream",
                    "stream_source"});
    const std::string level_name = read.string(entry, where, "level");
    auto level = parse_memory_level(level_name);
    if (!level)
      read.fail(key_path(where, "level"),
                "must be dram, l2 or l1 (got " + quote_text(level_name) + ")");
    if (spec.level(*level) != nullptr)
      read.fail(key_path(where, "level"), "duplicate level " + level_name);
    const double bandwidth = read.number(entry, where, "bandwidth_gbps", kBandwidthGbps);
    spec.memory.push_back({*level, bandwidth, read.string(entry, where, "source")});
    if (const json* shares = read.optional_member(entry, where, "shares"); shares != nullptr)
      parse_shares(read, entry, *shares, where, spec, spec.memory.back());
    else if (entry.contains("shares_source"))
      read.fail(key_path(where, "shares_source"), "without shares");
    if (const json* stream = read.optional_member(entry, where, "stream"); stream != nullptr)
      parse_stream(read, entry, *stream, where, spec.memory.back());
    else if (entry.contains("stream_source"))
      read.fail(key_path(where, "stream_source"), "without stream");
  }
  if (spec.level(MemoryLevel::kDram) == nullptr) read.fail("memory_levels", "no dram entry");

  const json& ceilings = read.member(root, "", "compute_ceilings");
  if (!ceilings.is_array() || ceilings.empty())
    read.fail("compute_ceilings", "must be a non-empty array");
  for (std::size_t i = 0; i < ceilings.size(); ++i) {
    const std::string where = index_path("compute_ceilings", i);
    const json& entry = ceilings[i];
    read.require_object(entry, where);
    read.only_keys(entry, where,
                   {"path", "instruction", "peak_tflops", "clock_mhz", "source", "at_power_cap"});
    const std::string path_name = read.string(entry, where, "path");
    auto path = parse_compute_path(path_name);
    if (!path) read.fail(key_path(where, "path"), "unknown compute path " + quote_text(path_name));
    TensorInstruction instruction = TensorInstruction::kNone;
    if (read.optional_member(entry, where, "instruction") != nullptr) {
      const std::string text = read.string(entry, where, "instruction");
      auto parsed = parse_tensor_instruction(text);
      if (!parsed) read.fail(key_path(where, "instruction"), "must be mma_sync, wgmma or tcgen05");
      if (!is_tensor(*path))
        read.fail(key_path(where, "instruction"), "only tensor paths have one");
      instruction = *parsed;
    }
    const double peak = read.number(entry, where, "peak_tflops", kPeakTflops);
    const double clock = read.number(entry, where, "clock_mhz", kClockMhz);
    ComputeCeiling ceiling{*path, instruction, peak, clock, read.string(entry, where, "source")};
    if (read.optional_member(entry, where, "at_power_cap") != nullptr)
      ceiling.at_power_cap = read.boolean(entry, where, "at_power_cap");
    for (const ComputeCeiling& other : spec.compute)
      if (other.id() == ceiling.id())
        read.fail(key_path(where, "path"), "duplicate ceiling " + ceiling.id());
    spec.compute.push_back(std::move(ceiling));
  }
  return spec;
}

GpuSpec load_gpu_spec_file(const std::filesystem::path& file) {
  return parse_gpu_spec(read_json_file(file), file.string());
}

json to_json(const GpuSpec& spec) {
  json root;
  root["name"] = spec.name;
  root["aliases"] = spec.aliases;
  root["device_names"] = spec.device_names;
  root["chip"] = spec.chip;
  root["compute_capability"] = spec.compute_capability;
  root["sm_count"] = spec.sm_count;
  root["boost_clock_mhz"] = spec.boost_clock_mhz;
  root["base_clock_mhz"] = spec.base_clock_mhz;
  root["l2_cache_bytes"] = spec.l2_cache_bytes;
  root["memory_bytes"] = spec.memory_bytes;
  root["tdp_watts"] = spec.tdp_watts;
  if (spec.xu_exp2_per_clock_per_sm > 0)
    root["xu_exp2_per_clock_per_sm"] = spec.xu_exp2_per_clock_per_sm;
  if (spec.shared_bytes_per_clock_per_sm > 0)
    root["shared_bytes_per_clock_per_sm"] = spec.shared_bytes_per_clock_per_sm;
  if (spec.launch_floor_us > 0) root[kLaunchFloor] = spec.launch_floor_us;
  if (spec.node_floor_us > 0) root[kNodeFloor] = spec.node_floor_us;
  root["sources"] = spec.sources;
  root["memory_levels"] = json::array();
  for (const MemoryLevelSpec& level : spec.memory) {
    json entry = {{"level", to_string(level.level)},
                  {"bandwidth_gbps", level.bandwidth_gbps},
                  {"source", level.source}};
    if (!level.shares.empty()) {
      entry["shares"] = json::array();
      for (const ShareBandwidth& point : level.shares)
        entry["shares"].push_back({{"sms", point.sms}, {"gbps", point.gbps}});
      entry["shares_source"] = level.shares_source;
    }
    if (!level.stream.empty()) {
      entry["stream"] = json::array();
      for (const StreamPoint& point : level.stream)
        entry["stream"].push_back({{"bytes", point.bytes}, {"seconds", point.seconds}});
      entry["stream_source"] = level.stream_source;
    }
    root["memory_levels"].push_back(std::move(entry));
  }
  root["compute_ceilings"] = json::array();
  for (const ComputeCeiling& ceiling : spec.compute) {
    json entry = {{"path", to_string(ceiling.path)},
                  {"peak_tflops", ceiling.peak_tflops},
                  {"clock_mhz", ceiling.clock_mhz},
                  {"source", ceiling.source}};
    if (ceiling.instruction != TensorInstruction::kNone)
      entry["instruction"] = to_string(ceiling.instruction);
    if (ceiling.at_power_cap) entry["at_power_cap"] = true;
    root["compute_ceilings"].push_back(std::move(entry));
  }
  if (!spec.calibrated_from.empty()) root["calibrated_from"] = spec.calibrated_from;
  if (spec.sm_limits)
    root["sm_limits"] = {{"max_threads", spec.sm_limits->max_threads},
                         {"max_ctas", spec.sm_limits->max_ctas},
                         {"registers", spec.sm_limits->registers},
                         {"shared_bytes", spec.sm_limits->shared_bytes},
                         {"reserved_shared_per_cta", spec.sm_limits->reserved_shared_per_cta},
                         {"source", spec.sm_limits->source}};
  if (spec.energy) root["energy_coefficients"] = to_json(*spec.energy);
  return root;
}

void SpecRegistry::add_directory(const std::filesystem::path& dir, SameKey same) {
  std::error_code error;
  if (!std::filesystem::is_directory(dir, error))
    throw InputError(dir.string() + ": not a directory of spec files");
  // Error codes, not exceptions: an unreadable directory or a looping link is the user's.
  std::vector<std::filesystem::path> files;
  std::filesystem::directory_iterator it(dir, error);
  for (; !error && it != std::filesystem::directory_iterator(); it.increment(error)) {
    // Regular .json files, and those that cannot be examined (a looping link): their reading
    // says why.
    std::error_code kind;
    if (it->path().extension() == ".json" && (it->is_regular_file(kind) || kind))
      files.push_back(it->path());
  }
  if (error) throw InputError(one_line("cannot read " + dir.string() + ": " + error.message()));
  std::sort(files.begin(), files.end());
  for (const auto& file : files) add_file(file, same);
}

void SpecRegistry::add_file(const std::filesystem::path& file, SameKey same) {
  add(load_gpu_spec_file(file), same);
}

void SpecRegistry::add(GpuSpec spec, SameKey same_key) {
  std::vector<std::string> names = spec.aliases;
  names.push_back(spec.key);
  names.push_back(spec.name);
  for (const std::string& name : names) {
    if (const GpuSpec* other = try_find(name); other != nullptr && other->key != spec.key) {
      throw InputError(spec.file + ": aliases: " + quote_text(name) + " is already used by " +
                       (other->file.empty() ? other->key : other->file));
    }
  }
  // A user file with the same key replaces the shipped one.
  auto same = std::find_if(specs_.begin(), specs_.end(),
                           [&](const GpuSpec& s) { return s.key == spec.key; });
  if (same != specs_.end() && same_key == SameKey::kRefuse)
    throw InputError(one_line(spec.file + " and " + same->file + " both define the spec " +
                              quote_text(spec.key) + ": give one of them"));
  if (same != specs_.end())
    *same = std::move(spec);
  else
    specs_.push_back(std::move(spec));
}

const GpuSpec* SpecRegistry::try_find(std::string_view name) const {
  for (const GpuSpec& spec : specs_) {
    if (iequals(spec.key, name) || iequals(spec.name, name)) return &spec;
    for (const std::string& alias : spec.aliases)
      if (iequals(alias, name)) return &spec;
  }
  return nullptr;
}

const GpuSpec& SpecRegistry::find(std::string_view name) const {
  if (const GpuSpec* spec = try_find(name)) return *spec;
  // A likely typo gets the names it is near ("h20": h200), not the whole list.
  std::vector<std::string> names;
  for (const GpuSpec& spec : specs_) {
    names.push_back(spec.key);
    names.insert(names.end(), spec.aliases.begin(), spec.aliases.end());
  }
  if (const std::string hint = did_you_mean(name, names); !hint.empty())
    throw InputError("unknown GPU " + quote_text(name) + ": " + hint + " (all " +
                     std::to_string(specs_.size()) + ": cuflash-roofline specs list)");
  throw InputError("unknown GPU " + quote_text(name) + "; known: " + known_names());
}

const GpuSpec* SpecRegistry::find_for_device(std::string_view device_name) const {
  for (const GpuSpec& spec : specs_)
    for (const std::string& name : spec.device_names)
      if (iequals(name, device_name)) return &spec;
  return nullptr;
}

std::string SpecRegistry::known_names() const {
  std::vector<std::string> names;
  for (const GpuSpec& spec : specs_) {
    names.push_back(spec.key);
    for (const std::string& alias : spec.aliases) names.push_back(alias);
  }
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  return join(names, ", ");
}

std::filesystem::path default_specs_dir() {
  if (const char* env = std::getenv("CUFLASH_ROOFLINE_SPECS"); env != nullptr && *env != '\0')
    return env;
  std::error_code error;
  std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", error);
  if (!error) {
    for (const auto& candidate :
         {exe.parent_path().parent_path() / "share" / "cuflash-roofline" / "gpu_specs",
          exe.parent_path() / "gpu_specs"}) {
      if (std::filesystem::is_directory(candidate, error)) return candidate;
    }
  }
#ifdef ROOFLINE_SOURCE_SPECS_DIR
  return ROOFLINE_SOURCE_SPECS_DIR;
#else
  return "gpu_specs";
#endif
}

}  // namespace roofline
