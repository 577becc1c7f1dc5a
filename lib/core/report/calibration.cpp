#include "lib/core/report/calibration.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <utility>

#include <nlohmann/json.hpp>

#include "lib/core/base/errors.hpp"
#include "lib/core/base/json_reader.hpp"
#include "lib/core/base/limits.hpp"
#include "lib/core/base/output.hpp"
#include "lib/core/base/statistics.hpp"
#include "lib/core/base/text.hpp"
#include "lib/core/report/json_values.hpp"

namespace roofline {
namespace {

using nlohmann::json;

constexpr const char* kFormatName = "cuflash-roofline calibration";
// The most launches and clock samples a power-cap window is read with.
constexpr std::int64_t kCountMax = std::numeric_limits<int>::max();

// `object[key]` when it is a string (empty allowed), "" when absent or null.
std::string optional_string(const JsonReader& read, const json& object, std::string_view path,
                            const char* key) {
  const json* value = read.optional_member(object, path, key);
  if (value == nullptr || value->is_null()) return "";
  return read.string(object, path, key, true);
}

// `value` as JSON text for a message: on one line, at most 40 bytes.
std::string shortened_dump(const json& value) {
  const std::string text = one_line(value.dump());
  return text.size() > 40 ? text.substr(0, 40) + "..." : text;
}

// A ceiling id ("fp32", "tensor_fp16.mma_sync") as path and instruction.
std::optional<std::pair<ComputePath, TensorInstruction>> parse_ceiling_id(std::string_view id) {
  const std::size_t dot = id.find('.');
  auto path = parse_compute_path(id.substr(0, dot));
  if (!path) return std::nullopt;
  if (dot == std::string_view::npos) return std::make_pair(*path, TensorInstruction::kNone);
  auto instruction = parse_tensor_instruction(id.substr(dot + 1));
  if (!instruction || !is_tensor(*path)) return std::nullopt;
  return std::make_pair(*path, *instruction);
}

std::string describe(const CalibrationOverlay& overlay, const CalibrationMeasurement& m) {
  std::string out = "calibrated on " + overlay.device.name + " (" + overlay.time_utc +
                    "): " + m.method + "; median of " + std::to_string(m.samples_seconds.size());
  if (m.sm_clock_mhz > 0) out += " at " + format_fixed(m.sm_clock_mhz, 0) + " MHz SM clock";
  return out;
}

// The back-to-back figure's source: what ran, the window, the clock it settled at, and the burst
// figure it stands below (at the power cap) or above (the burst ran at a lower clock).
std::string describe_power_cap(const CalibrationOverlay& overlay, const CalibrationMeasurement& m,
                               const std::string& label) {
  const PowerCapMeasurement& p = *m.power_cap;
  const bool capped = m.power_cap_rate_per_second() < m.rate_per_second();
  std::string out =
      "calibrated on " + overlay.device.name + " (" + overlay.time_utc + "): " + label +
      (capped ? " at the power cap: " : " back to back, above its burst: ") +
      format_fixed(m.power_cap_rate_per_second() / 1e12, 1) + " TFLOP/s at " +
      format_fixed(p.sm_clock_mhz, 0) + " MHz (calibrate, " + format_fixed(p.window_seconds, 1) +
      " s back to back, " + std::to_string(p.launches) + " launches; median of " +
      std::to_string(p.clock_samples) + " NVML SM clock samples";
  if (!p.clock_limit.empty()) out += ", clock held down by: " + p.clock_limit;
  out += "); burst " + format_fixed(m.rate_per_second() / 1e12, 1) + " TFLOP/s";
  if (m.sm_clock_mhz > 0) out += " at " + format_fixed(m.sm_clock_mhz, 0) + " MHz";
  return out + "; " + m.method;
}

// The share curve of `level` from the share measurements of its read kernel (`dram_read`,
// `l2_read`: the curve carries a row's bytes in flight as loads), else of the kernel with the most
// of them (the best rate per SM count), and that kernel's whole-device rate on all the device's
// SMs. Other kernels' shares (`dram_copy`: loads and stores) stay measurements of the file.
void add_shares(const CalibrationOverlay& overlay, MemoryLevelSpec& level) {
  const std::string target(to_string(level.level));
  std::map<std::string, std::map<int, double>> by_kernel;  // share_of -> SMs -> GB/s
  for (const CalibrationMeasurement& m : overlay.measurements)
    if (m.sms > 0 && m.target == target && m.rate_per_second() > 0) {
      double& gbps = by_kernel[m.share_of][m.sms];
      gbps = std::max(gbps, m.rate_per_second() / 1e9);
    }
  const CalibrationMeasurement* whole = nullptr;
  const std::map<int, double>* points = nullptr;
  for (const auto& entry : by_kernel) {
    const std::string& kernel = entry.first;  // (a lambda may not capture a structured binding)
    const std::map<int, double>& measured = entry.second;
    const auto it =
        std::find_if(overlay.measurements.begin(), overlay.measurements.end(),
                     [&](const CalibrationMeasurement& m) { return m.sms == 0 && m.id == kernel; });
    if (it == overlay.measurements.end() || !(it->rate_per_second() > 0)) continue;
    // The read kernel first, then the most shares (a tie keeps the first).
    const auto rank = [&](const std::string& id, std::size_t shares) {
      return std::pair(id == target + "_read", shares);
    };
    if (points == nullptr || rank(kernel, measured.size()) > rank(whole->id, points->size())) {
      whole = &*it;
      points = &measured;
    }
  }
  const int all = overlay.device.sm_count;
  if (points == nullptr || all <= 0) return;
  for (const auto& [sms, gbps] : *points)
    if (sms < all) level.shares.push_back({sms, gbps});
  level.shares.push_back({all, whole->rate_per_second() / 1e9});
  level.shares_source = "calibrated on " + overlay.device.name + " (" + overlay.time_utc +
                        "): " + whole->method + ", alone on a green context of each count of " +
                        "SMs, then on all " + std::to_string(all);
}

// The DRAM level's stream curve: per size, the least median time of the stream measurements
// (calibrate measures one kernel's; a file may hold more).
void add_stream(const CalibrationOverlay& overlay, MemoryLevelSpec& level) {
  if (level.level != MemoryLevel::kDram) return;
  std::map<double, const CalibrationMeasurement*> by_bytes;
  for (const CalibrationMeasurement& m : overlay.measurements)
    if (!m.stream_of.empty() && m.target == to_string(level.level) && m.median_seconds() > 0) {
      const CalibrationMeasurement*& best = by_bytes[m.work];
      if (best == nullptr || m.median_seconds() < best->median_seconds()) best = &m;
    }
  if (by_bytes.empty()) return;
  for (const auto& [bytes, m] : by_bytes) level.stream.push_back({bytes, m->median_seconds()});
  level.stream_source = "calibrated on " + overlay.device.name + " (" + overlay.time_utc +
                        "): " + by_bytes.begin()->second->stream_of +
                        ", one pass over each size after run's L2 flush, timed as run times a "
                        "launch (the median of each of " +
                        std::to_string(by_bytes.size()) + " sizes)";
}

void sort_levels(std::vector<MemoryLevelSpec>& levels) {
  std::stable_sort(levels.begin(), levels.end(),
                   [](const MemoryLevelSpec& a, const MemoryLevelSpec& b) {
                     return static_cast<int>(a.level) < static_cast<int>(b.level);
                   });
}

}  // namespace

double CalibrationMeasurement::median_seconds() const {
  return percentile(samples_seconds, 0.5);
}

double CalibrationMeasurement::rate_per_second() const {
  return work / median_seconds();
}

double CalibrationMeasurement::power_cap_rate_per_second() const {
  return power_cap && power_cap->seconds_per_launch > 0 ? work / power_cap->seconds_per_launch : 0;
}

double CalibrationMeasurement::relative_range() const {
  return (percentile(samples_seconds, 1.0) - percentile(samples_seconds, 0.0)) / median_seconds();
}

void derive_ceilings(CalibrationOverlay& overlay) {
  overlay.memory.clear();
  overlay.compute.clear();
  // The best measurement per target: several kernels may measure the same roof.
  std::vector<const CalibrationMeasurement*> best;
  for (const CalibrationMeasurement& m : overlay.measurements) {
    if (!(m.rate_per_second() > 0) || m.sms > 0 || !m.stream_of.empty() || m.id == kL2ReduceId)
      continue;
    auto same = std::find_if(best.begin(), best.end(), [&](const CalibrationMeasurement* b) {
      return b->target == m.target;
    });
    if (same == best.end())
      best.push_back(&m);
    else if (m.rate_per_second() > (*same)->rate_per_second())
      *same = &m;
  }
  overlay.xu_exp2_per_clock_per_sm = 0;
  overlay.xu_source.clear();
  for (const CalibrationMeasurement* m : best) {
    if (m->target == kIntTarget) continue;  // an energy coefficient alone
    if (m->target == kXuTarget) {
      if (!(m->sm_clock_mhz > 0) || overlay.device.sm_count <= 0)
        throw InputError("calibration " + m->id + ": no SM clock or SM count for the XU rate");
      overlay.xu_exp2_per_clock_per_sm =
          m->rate_per_second() / (m->sm_clock_mhz * 1e6 * overlay.device.sm_count);
      overlay.xu_source = describe(overlay, *m);
      continue;
    }
    if (auto level = parse_memory_level(m->target)) {
      if (m->flops) throw InputError("calibration " + m->id + ": a memory level measures bytes");
      overlay.memory.push_back({*level, m->rate_per_second() / 1e9, describe(overlay, *m)});
      continue;
    }
    auto ceiling = parse_ceiling_id(m->target);
    if (!ceiling)
      throw InputError("calibration " + m->id + ": unknown target \"" + m->target + "\"");
    if (!m->flops) throw InputError("calibration " + m->id + ": a compute ceiling measures FLOPs");
    if (!(m->sm_clock_mhz > 0))
      throw InputError("calibration " + m->id + ": no SM clock measured for a compute ceiling");
    ComputeCeiling burst{ceiling->first, ceiling->second, m->rate_per_second() / 1e12,
                         m->sm_clock_mhz, describe(overlay, *m)};
    // The power-capped roof where the window settled below the burst. A window above it means
    // the burst ran at a clock the kernel before it had left held down (mma_sync_bf16 after
    // mma_sync's window on an H100: a burst at 1575 MHz, the window at 1725): a roof is the
    // most the kernel was measured to do, so the window's rate, not marked capped.
    const double sustained = m->power_cap_rate_per_second();
    if (sustained > 0 && sustained != m->rate_per_second() && m->power_cap->sm_clock_mhz > 0) {
      ComputeCeiling roof = burst;
      roof.peak_tflops = sustained / 1e12;
      roof.clock_mhz = m->power_cap->sm_clock_mhz;
      roof.at_power_cap = sustained < m->rate_per_second();
      roof.source = describe_power_cap(overlay, *m, burst.label());
      overlay.compute.push_back(std::move(roof));
    } else {
      overlay.compute.push_back(std::move(burst));
    }
  }
  for (MemoryLevelSpec& level : overlay.memory) {
    add_shares(overlay, level);
    add_stream(overlay, level);
  }
  sort_levels(overlay.memory);
}

std::vector<std::string> drop_above_sheet(CalibrationOverlay& overlay, const GpuSpec& sheet) {
  std::vector<std::string> dropped;
  const MemoryLevelSpec* dram = sheet.level(MemoryLevel::kDram);
  if (dram == nullptr || !(dram->bandwidth_gbps > 0)) return dropped;
  const double limit = dram->bandwidth_gbps * 1e9 * (1 + kAboveSheetTolerance);
  auto& all = overlay.measurements;
  std::set<std::string> gone;  // the ids left out
  all.erase(std::remove_if(
                all.begin(), all.end(),
                [&](const CalibrationMeasurement& m) {
                  if (parse_memory_level(m.target) != MemoryLevel::kDram ||
                      !(m.rate_per_second() > limit))
                    return false;
                  gone.insert(m.id);
                  dropped.push_back(
                      m.id + ": " + format_fixed(m.rate_per_second() / 1e9, 1) + " GB/s, " +
                      format_fixed(100 * m.rate_per_second() / (dram->bandwidth_gbps * 1e9), 1) +
                      "% of the spec sheet's " + format_fixed(dram->bandwidth_gbps, 1) +
                      " GB/s DRAM bandwidth, more than the memory delivers");
                  return true;
                }),
            all.end());
  // A stream or share of a kernel left out goes with it (its whole-device reading was impossible,
  // and a file naming a measurement it lacks is refused).
  std::map<std::string, int> orphans;
  all.erase(std::remove_if(all.begin(), all.end(),
                           [&](const CalibrationMeasurement& m) {
                             const std::string& of = m.stream_of.empty() ? m.share_of : m.stream_of;
                             if (of.empty() || gone.count(of) == 0) return false;
                             ++orphans[of];
                             return true;
                           }),
            all.end());
  for (const auto& [id, count] : orphans)
    dropped.push_back(std::to_string(count) + " stream and share measurements of " + id +
                      ": with it");
  return dropped;
}

json to_json(const CalibrationOverlay& overlay) {
  json root;
  root["format"] = kFormatName;
  root["format_version"] = kCalibrationFormatVersion;
  root["tool_version"] = overlay.tool_version;
  root["time_utc"] = overlay.time_utc;
  root["host"] = overlay.host;
  root["spec"] = overlay.spec_key;
  root["device"] = device_json(overlay.device, DeviceFields::kCalibration);
  root["duration_seconds"] = overlay.duration_seconds;
  root["measurements"] = json::array();
  for (const CalibrationMeasurement& m : overlay.measurements)
    root["measurements"].push_back({{"id", m.id},
                                    {"target", m.target},
                                    {"method", m.method},
                                    {"unit", m.target == kXuTarget    ? "results"
                                             : m.target == kIntTarget ? "instructions"
                                             : m.flops                ? "flops"
                                                                      : "bytes"},
                                    {"work", m.work},
                                    {"samples_seconds", m.samples_seconds},
                                    {"sm_clock_mhz", m.sm_clock_mhz}});
  for (std::size_t i = 0; i < overlay.measurements.size(); ++i)
    if (const CalibrationMeasurement& m = overlay.measurements[i]; m.sms > 0) {
      root["measurements"][i]["sms"] = m.sms;
      root["measurements"][i]["share_of"] = m.share_of;
    }
  for (std::size_t i = 0; i < overlay.measurements.size(); ++i)
    if (const CalibrationMeasurement& m = overlay.measurements[i]; !m.stream_of.empty())
      root["measurements"][i]["stream_of"] = m.stream_of;
  for (std::size_t i = 0; i < overlay.measurements.size(); ++i)
    if (const auto& energy = overlay.measurements[i].energy)
      root["measurements"][i]["energy"] = energy_json(*energy);
  for (std::size_t i = 0; i < overlay.measurements.size(); ++i)
    if (const auto& p = overlay.measurements[i].power_cap)
      root["measurements"][i]["power_cap"] = {{"seconds_per_launch", p->seconds_per_launch},
                                              {"window_seconds", p->window_seconds},
                                              {"launches", p->launches},
                                              {"sm_clock_mhz", p->sm_clock_mhz},
                                              {"clock_samples", p->clock_samples},
                                              {"clock_limit", p->clock_limit}};
  if (overlay.static_power) {
    root["static_power"] = {{"method", overlay.static_power->method},
                            {"energy", energy_json(overlay.static_power->energy)}};
    if (overlay.static_power->power_limit_watts > 0)
      root["static_power"]["power_limit_watts"] = overlay.static_power->power_limit_watts;
  }
  if (overlay.energy) root["energy_coefficients"] = to_json(*overlay.energy);
  // The same entries as a spec file's.
  GpuSpec levels_only;
  levels_only.memory = overlay.memory;
  levels_only.compute = overlay.compute;
  const json as_spec = to_json(levels_only);
  root["memory_levels"] = as_spec["memory_levels"];
  root["compute_ceilings"] = as_spec["compute_ceilings"];
  return root;
}

CalibrationOverlay parse_calibration(const json& root, const std::string& origin) {
  const JsonReader read(origin);
  read.require_object(root, "");
  const json* format = read.optional_member(root, "", "format");
  if (format == nullptr || *format != kFormatName)
    read.fail("format", std::string("missing or not \"") + kFormatName +
                            "\" (not a file written by `cuflash-roofline calibrate`?)");
  const json& version = read.member(root, "", "format_version");
  if (!version.is_number_integer() || version.get<std::int64_t>() != kCalibrationFormatVersion)
    read.fail("format_version", shortened_dump(version) + " is not supported (this tool reads " +
                                    std::to_string(kCalibrationFormatVersion) + ")");
  // Every key is one that `calibrate` writes: a misspelt one is an error, not ignored.
  read.only_keys(root, "",
                 {"format", "format_version", "tool_version", "time_utc", "host", "spec", "device",
                  "duration_seconds", "measurements", "memory_levels", "compute_ceilings",
                  "static_power", "energy_coefficients"});
  CalibrationOverlay overlay;
  overlay.file = origin;
  overlay.tool_version = read.string(root, "", "tool_version");
  overlay.time_utc = read.string(root, "", "time_utc");
  overlay.host = optional_string(read, root, "", "host");
  overlay.spec_key = read.string(root, "", "spec");
  overlay.duration_seconds = read.number(root, "", "duration_seconds", kCalibrationSeconds);
  const json& d = read.member(root, "", "device");
  read.only_keys(
      d, "device",
      {"name", "chip", "compute_capability", "sm_count", "driver_version", "runtime_version"});
  overlay.device = device_from_json(read, d, "device", DeviceFields::kCalibration);

  const json& measurements = read.member(root, "", "measurements");
  read.require_array(measurements, "measurements");
  for (std::size_t i = 0; i < measurements.size(); ++i) {
    const std::string where = index_path("measurements", i);
    const json& entry = measurements[i];
    read.only_keys(entry, where,
                   {"id", "target", "method", "unit", "work", "samples_seconds", "sm_clock_mhz",
                    "energy", "power_cap", "sms", "share_of", "stream_of"});
    CalibrationMeasurement m;
    m.id = read.string(entry, where, "id");
    m.target = read.string(entry, where, "target");
    m.method = read.string(entry, where, "method");
    const std::string unit = read.string(entry, where, "unit");
    if (unit != "flops" && unit != "bytes" && unit != "results" && unit != "instructions")
      read.fail(key_path(where, "unit"),
                "must be flops, bytes, results or instructions (got " + quote_text(unit) + ")");
    if ((unit == "results") != (m.target == kXuTarget))
      read.fail(key_path(where, "unit"), "results is the unit of the xu target alone");
    if ((unit == "instructions") != (m.target == kIntTarget))
      read.fail(key_path(where, "unit"), "instructions is the unit of the int target alone");
    m.flops = unit != "bytes";
    m.work = read.number(entry, where, "work", kCalibrationWork);
    const std::string samples_path = key_path(where, "samples_seconds");
    const json& samples = read.member(entry, where, "samples_seconds");
    read.require_array(samples, samples_path);
    if (samples.empty()) read.fail(samples_path, "must not be empty");
    if (samples.size() > static_cast<std::size_t>(kMaxSamples))
      read.fail(samples_path, "must hold at most " + std::to_string(kMaxSamples) + " samples");
    for (std::size_t k = 0; k < samples.size(); ++k)
      m.samples_seconds.push_back(
          read.number_value(samples[k], index_path(samples_path, k), kSampleSeconds));
    m.sm_clock_mhz = read.number(entry, where, "sm_clock_mhz", kCalibrationClockMhz);
    if (const json* energy = read.optional_member(entry, where, "energy"); energy != nullptr) {
      read.require_object(*energy, key_path(where, "energy"));
      m.energy = energy_from_json(read, *energy, key_path(where, "energy"));
    }
    if (const json* p = read.optional_member(entry, where, "power_cap"); p != nullptr) {
      const std::string p_where = key_path(where, "power_cap");
      read.require_object(*p, p_where);
      read.only_keys(*p, p_where,
                     {"seconds_per_launch", "window_seconds", "launches", "sm_clock_mhz",
                      "clock_samples", "clock_limit"});
      if (!m.flops) read.fail(p_where, "only a compute measurement has one");
      PowerCapMeasurement cap;
      cap.seconds_per_launch = read.number(*p, p_where, "seconds_per_launch", kSampleSeconds);
      cap.window_seconds = read.number(*p, p_where, "window_seconds", kCalibrationSeconds);
      cap.launches = read.integer(*p, p_where, "launches", 1, kCountMax);
      cap.sm_clock_mhz = read.number(*p, p_where, "sm_clock_mhz", kCalibrationClockMhz);
      cap.clock_samples =
          static_cast<int>(read.integer(*p, p_where, "clock_samples", 0, kCountMax));
      cap.clock_limit = read.string(*p, p_where, "clock_limit", true);
      m.power_cap = std::move(cap);
    }
    if (entry.contains("sms") || entry.contains("share_of")) {
      m.sms = static_cast<int>(
          read.integer(entry, where, "sms", 1, std::max(1, overlay.device.sm_count)));
      m.share_of = read.string(entry, where, "share_of");
      // A share measures a memory level's share curve, or a compute pipe's energy below the
      // power cap the whole device ran it at (calibration_energy.hpp).
      const bool level = !m.flops && parse_memory_level(m.target);
      const bool pipe_energy =
          m.flops && m.energy && m.target != kXuTarget && m.target != kIntTarget && !m.power_cap;
      if (!level && !pipe_energy)
        read.fail(key_path(where, "sms"),
                  "a share of the SMs measures a memory level, or a compute pipe's energy "
                  "below the power cap (with an energy, without a power_cap window)");
    }
    if (entry.contains("stream_of")) {
      m.stream_of = read.string(entry, where, "stream_of");
      if (m.flops || parse_memory_level(m.target) != MemoryLevel::kDram || m.sms > 0)
        read.fail(key_path(where, "stream_of"),
                  "a stream measures DRAM bytes on the whole device (no sms)");
    }
    overlay.measurements.push_back(std::move(m));
  }
  for (std::size_t i = 0; i < overlay.measurements.size(); ++i) {
    const CalibrationMeasurement& m = overlay.measurements[i];
    if (m.stream_of.empty()) continue;
    const bool found = std::any_of(overlay.measurements.begin(), overlay.measurements.end(),
                                   [&](const CalibrationMeasurement& w) {
                                     return w.sms == 0 && w.stream_of.empty() &&
                                            w.id == m.stream_of && w.target == m.target;
                                   });
    if (!found)
      read.fail(key_path(index_path("measurements", i), "stream_of"),
                quote_text(m.stream_of) + " names no whole-device measurement of " + m.target);
  }
  for (std::size_t i = 0; i < overlay.measurements.size(); ++i) {
    const CalibrationMeasurement& m = overlay.measurements[i];
    if (m.sms == 0) continue;
    const bool found =
        std::any_of(overlay.measurements.begin(), overlay.measurements.end(),
                    [&](const CalibrationMeasurement& w) {
                      return w.sms == 0 && w.id == m.share_of && w.target == m.target;
                    });
    if (!found)
      read.fail(key_path(index_path("measurements", i), "share_of"),
                quote_text(m.share_of) + " names no whole-device measurement of " + m.target);
  }
  if (const json* p = read.optional_member(root, "", "static_power"); p != nullptr) {
    read.require_object(*p, "static_power");
    read.only_keys(*p, "static_power", {"method", "energy", "power_limit_watts"});
    const json& energy = read.member(*p, "static_power", "energy");
    read.require_object(energy, "static_power.energy");
    overlay.static_power =
        CalibrationOverlay::StaticPower{read.string(*p, "static_power", "method"),
                                        energy_from_json(read, energy, "static_power.energy")};
    if (read.optional_member(*p, "static_power", "power_limit_watts") != nullptr)
      overlay.static_power->power_limit_watts =
          read.number(*p, "static_power", "power_limit_watts", kPowerLimitWatts);
  }
  if (const json* e = read.optional_member(root, "", "energy_coefficients"); e != nullptr)
    overlay.energy = parse_energy_coefficients(read, *e, "energy_coefficients");
  const json& memory_levels = read.member(root, "", "memory_levels");
  read.require_array(memory_levels, "memory_levels");
  const json& compute_ceilings = read.member(root, "", "compute_ceilings");
  read.require_array(compute_ceilings, "compute_ceilings");

  // The ceilings are validated exactly as a spec file's, through a spec carrying only them.
  json as_spec = {{"name", "calibration"},
                  {"aliases", json::array()},
                  {"device_names", json::array()},
                  {"chip", "x"},
                  {"compute_capability", "0.0"},
                  {"sm_count", std::max(1, overlay.device.sm_count)},
                  {"boost_clock_mhz", 1000},
                  {"base_clock_mhz", 1000},
                  {"l2_cache_bytes", std::int64_t{1} << 20},
                  {"memory_bytes", std::int64_t{1} << 30},
                  {"tdp_watts", 1},
                  {"sources",
                   {{"sm_count", "-"},
                    {"boost_clock_mhz", "-"},
                    {"base_clock_mhz", "-"},
                    {"l2_cache_bytes", "-"},
                    {"memory_bytes", "-"},
                    {"tdp_watts", "-"}}},
                  {"memory_levels", memory_levels},
                  {"compute_ceilings", compute_ceilings}};
  if (as_spec["memory_levels"].empty() && as_spec["compute_ceilings"].empty())
    read.fail("memory_levels", "no level and no ceiling: nothing was calibrated");
  // A spec needs a DRAM level and a ceiling; an overlay may hold only some of them, so the
  // placeholders below are validated and then dropped.
  const bool has_dram = std::any_of(
      as_spec["memory_levels"].begin(), as_spec["memory_levels"].end(),
      [](const json& level) { return level.is_object() && level.value("level", "") == "dram"; });
  if (!has_dram)
    as_spec["memory_levels"].push_back(
        {{"level", "dram"}, {"bandwidth_gbps", 1}, {"source", "placeholder"}});
  const bool has_ceiling = !as_spec["compute_ceilings"].empty();
  if (!has_ceiling)
    as_spec["compute_ceilings"].push_back(
        {{"path", "fp64"}, {"peak_tflops", 1}, {"clock_mhz", 1000}, {"source", "placeholder"}});
  GpuSpec parsed = parse_gpu_spec(as_spec, origin);
  if (!has_dram)
    parsed.memory.erase(std::remove_if(parsed.memory.begin(), parsed.memory.end(),
                                       [](const MemoryLevelSpec& level) {
                                         return level.level == MemoryLevel::kDram;
                                       }),
                        parsed.memory.end());
  if (!has_ceiling) parsed.compute.clear();
  overlay.memory = std::move(parsed.memory);
  overlay.compute = std::move(parsed.compute);
  // The XU rate is derived from its measurement (the file has no spec entry for it).
  const CalibrationMeasurement* xu = nullptr;
  for (const CalibrationMeasurement& m : overlay.measurements)
    if (m.target == kXuTarget && m.sm_clock_mhz > 0 && m.rate_per_second() > 0 &&
        (xu == nullptr || m.rate_per_second() > xu->rate_per_second()))
      xu = &m;
  if (xu != nullptr && overlay.device.sm_count > 0) {
    overlay.xu_exp2_per_clock_per_sm =
        xu->rate_per_second() / (xu->sm_clock_mhz * 1e6 * overlay.device.sm_count);
    overlay.xu_source = describe(overlay, *xu);
  }
  return overlay;
}

CalibrationOverlay load_calibration_file(const std::filesystem::path& file) {
  return parse_calibration(read_json_file(file), file.string());
}

bool calibrates(const CalibrationOverlay& overlay, const GpuSpec& spec) {
  if (iequals(overlay.spec_key, spec.key)) return true;
  return std::any_of(spec.device_names.begin(), spec.device_names.end(),
                     [&](const std::string& name) { return iequals(name, overlay.device.name); });
}

GpuSpec apply_calibration(const GpuSpec& spec, const CalibrationOverlay& overlay) {
  GpuSpec out = spec;
  out.key = spec.key + ".calibrated";
  out.name = spec.name + " (calibrated)";
  out.aliases.clear();
  out.device_names.clear();
  out.calibrated_from = spec.key;
  out.file = overlay.file;
  for (const MemoryLevelSpec& level : overlay.memory) {
    auto same = std::find_if(out.memory.begin(), out.memory.end(),
                             [&](const MemoryLevelSpec& m) { return m.level == level.level; });
    if (same != out.memory.end())
      *same = level;
    else
      out.memory.push_back(level);
  }
  sort_levels(out.memory);
  if (overlay.xu_exp2_per_clock_per_sm > 0) {
    out.xu_exp2_per_clock_per_sm = overlay.xu_exp2_per_clock_per_sm;
    out.sources["xu_exp2_per_clock_per_sm"] = overlay.xu_source;
  }
  if (overlay.energy) out.energy = overlay.energy;
  for (const ComputeCeiling& ceiling : overlay.compute) {
    auto same = std::find_if(out.compute.begin(), out.compute.end(),
                             [&](const ComputeCeiling& c) { return c.id() == ceiling.id(); });
    if (same != out.compute.end())
      *same = ceiling;
    else
      out.compute.push_back(ceiling);
  }
  return out;
}

std::string_view to_string(Ceilings ceilings) {
  return ceilings == Ceilings::kCalibrated ? "calibrated" : "spec";
}

void apply_ceilings(Report& report, Ceilings choice,
                    const std::vector<CalibrationOverlay>& overlays) {
  auto find = [&](const std::string& key) -> const GpuSpec* {
    for (const GpuSpec& spec : report.specs)
      if (spec.key == key) return &spec;
    return nullptr;
  };
  // The sheet spec of every row (a calibrated spec's calibrated_from, when the report has it).
  std::vector<std::string> sheet_keys;
  for (const Row& row : report.rows) {
    const GpuSpec& spec = report.spec_for(row);
    const std::string key = !spec.calibrated_from.empty() && find(spec.calibrated_from) != nullptr
                                ? spec.calibrated_from
                                : spec.key;
    if (std::find(sheet_keys.begin(), sheet_keys.end(), key) == sheet_keys.end())
      sheet_keys.push_back(key);
  }
  for (const std::string& sheet_key : sheet_keys) {
    const GpuSpec sheet = *find(sheet_key);  // a copy: report.specs may grow below
    std::string twin_key;
    if (!sheet.calibrated_from.empty()) {
      twin_key = sheet.key;  // only the calibrated spec is in the report: it judges both ways
    } else {
      // A calibration given now replaces the one the report carries (its ceilings and its
      // energy coefficients judge the rows again); without one, the recorded twin stays.
      auto overlay =
          std::find_if(overlays.begin(), overlays.end(),
                       [&](const CalibrationOverlay& o) { return calibrates(o, sheet); });
      auto twin = std::find_if(report.specs.begin(), report.specs.end(), [&](const GpuSpec& spec) {
        return spec.calibrated_from == sheet.key;
      });
      if (overlay != overlays.end()) {
        GpuSpec calibrated = apply_calibration(sheet, *overlay);
        twin_key = calibrated.key;
        if (twin != report.specs.end())
          *twin = std::move(calibrated);
        else
          report.specs.push_back(std::move(calibrated));
      } else if (twin != report.specs.end()) {
        twin_key = twin->key;
      }
    }
    if (choice == Ceilings::kCalibrated && twin_key.empty()) {
      std::string have;
      for (const CalibrationOverlay& o : overlays)
        have += (have.empty() ? "" : "; ") + (o.file.empty() ? "calibration" : o.file) +
                " calibrates " + o.spec_key + " (" + o.device.name + ")";
      throw InputError("--ceilings calibrated: no calibration for " + sheet.key +
                       (have.empty() ? std::string(" (give --calibration FILE, written by "
                                                   "`cuflash-roofline calibrate`)")
                                     : "; " + have));
    }
    if (choice == Ceilings::kSpec && !sheet.calibrated_from.empty())
      throw InputError("--ceilings spec: the report carries only the calibrated ceilings of " +
                       sheet.calibrated_from + ", not its spec sheet");
    const std::string target = choice == Ceilings::kCalibrated ? twin_key : sheet.key;
    for (Row& row : report.rows) {
      const std::string& key = row.spec_key;
      if (key == sheet.key || (!twin_key.empty() && key == twin_key)) row.spec_key = target;
    }
  }
  report.context.ceilings = std::string(to_string(choice));
}

}  // namespace roofline
