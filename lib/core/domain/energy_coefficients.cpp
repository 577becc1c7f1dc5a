#include "lib/core/domain/energy_coefficients.hpp"

#include <cmath>
#include <limits>
#include <utility>

#include <nlohmann/json.hpp>

#include "lib/core/base/json_reader.hpp"
#include "lib/core/base/limits.hpp"
#include "lib/core/base/text.hpp"
#include "lib/core/domain/gpu_spec.hpp"

namespace roofline {
namespace {

using nlohmann::json;

// "fp32", "tensor_fp16.wgmma": a compute path, and for a tensor path optionally an instruction.
bool is_ceiling_id(std::string_view id) {
  const std::size_t dot = id.find('.');
  const auto path = parse_compute_path(id.substr(0, dot));
  if (!path) return false;
  if (dot == std::string_view::npos) return true;
  return is_tensor(*path) && parse_tensor_instruction(id.substr(dot + 1)).has_value();
}

}  // namespace

const double* EnergyCoefficients::flop(const std::string& ceiling_id) const {
  if (auto it = joules_per_flop.find(ceiling_id); it != joules_per_flop.end()) return &it->second;
  constexpr std::string_view kBf16 = "tensor_bf16";
  if (ceiling_id.rfind(kBf16, 0) == 0) return flop("tensor_fp16" + ceiling_id.substr(kBf16.size()));
  return nullptr;
}

const double* EnergyCoefficients::byte(MemoryLevel level) const {
  auto it = joules_per_byte.find(level);
  return it == joules_per_byte.end() ? nullptr : &it->second;
}

double dynamic_joules_per_unit(double watts, double static_watts, double seconds_per_launch,
                               double work_per_launch) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  if (!std::isfinite(watts) || !std::isfinite(static_watts) || !std::isfinite(seconds_per_launch) ||
      !std::isfinite(work_per_launch) || !(seconds_per_launch > 0) || !(work_per_launch > 0) ||
      !(watts > static_watts))
    return nan;
  return (watts - static_watts) * seconds_per_launch / work_per_launch;
}

json to_json(const EnergyCoefficients& c) {
  json out = {{"static_watts", c.static_watts},
              {"joules_per_flop", json::object()},
              {"joules_per_byte", json::object()},
              {"source", c.source}};
  for (const auto& [id, joules] : c.joules_per_flop) out["joules_per_flop"][id] = joules;
  if (c.joules_per_exp2 > 0) out["joules_per_exp2"] = c.joules_per_exp2;
  if (c.joules_per_int_instruction > 0)
    out["joules_per_int_instruction"] = c.joules_per_int_instruction;
  if (c.joules_per_bulk_dram_byte > 0)
    out["joules_per_bulk_dram_byte"] = c.joules_per_bulk_dram_byte;
  if (c.joules_per_dram_write_byte > 0)
    out["joules_per_dram_write_byte"] = c.joules_per_dram_write_byte;
  if (c.joules_per_l2_reduction_byte > 0)
    out["joules_per_l2_reduction_byte"] = c.joules_per_l2_reduction_byte;
  if (c.power_limit_watts > 0) out["power_limit_watts"] = c.power_limit_watts;
  for (const auto& [level, joules] : c.joules_per_byte)
    out["joules_per_byte"][std::string(to_string(level))] = joules;
  return out;
}

EnergyCoefficients parse_energy_coefficients(const JsonReader& read, const json& j,
                                             std::string_view path) {
  read.require_object(j, path);
  read.only_keys(
      j, path,
      {"static_watts", "joules_per_flop", "joules_per_exp2", "joules_per_int_instruction",
       "joules_per_byte", "joules_per_bulk_dram_byte", "joules_per_dram_write_byte",
       "joules_per_l2_reduction_byte", "power_limit_watts", "source"});
  EnergyCoefficients c;
  c.static_watts = read.number(j, path, "static_watts", kStaticWatts);
  const std::string flops_path = key_path(path, "joules_per_flop");
  const json& flops = read.member(j, path, "joules_per_flop");
  read.require_object(flops, flops_path);
  for (const auto& [id, value] : flops.items()) {
    if (!is_ceiling_id(id))
      read.fail(key_path(flops_path, id),
                "not a ceiling id (a compute path, e.g. fp32, or path.instruction, e.g. "
                "tensor_fp16.wgmma)");
    c.joules_per_flop[id] = read.number_value(value, key_path(flops_path, id), kJoulesPerUnit);
  }
  if (read.optional_member(j, path, "joules_per_exp2") != nullptr)
    c.joules_per_exp2 = read.number(j, path, "joules_per_exp2", kJoulesPerUnit);
  if (read.optional_member(j, path, "joules_per_int_instruction") != nullptr)
    c.joules_per_int_instruction =
        read.number(j, path, "joules_per_int_instruction", kJoulesPerUnit);
  const std::string bytes_path = key_path(path, "joules_per_byte");
  const json& bytes = read.member(j, path, "joules_per_byte");
  read.require_object(bytes, bytes_path);
  for (const auto& [name, value] : bytes.items()) {
    const auto level = parse_memory_level(name);
    if (!level)
      read.fail(key_path(bytes_path, name),
                "must be dram, l2 or l1 (got " + quote_text(name) + ")");
    c.joules_per_byte[*level] =
        read.number_value(value, key_path(bytes_path, name), kJoulesPerUnit);
  }
  for (auto [key, field] :
       {std::pair{"joules_per_bulk_dram_byte", &c.joules_per_bulk_dram_byte},
        std::pair{"joules_per_dram_write_byte", &c.joules_per_dram_write_byte},
        std::pair{"joules_per_l2_reduction_byte", &c.joules_per_l2_reduction_byte}})
    if (read.optional_member(j, path, key) != nullptr)
      *field = read.number(j, path, key, kJoulesPerUnit);
  if (read.optional_member(j, path, "power_limit_watts") != nullptr)
    c.power_limit_watts = read.number(j, path, "power_limit_watts", kPowerLimitWatts);
  c.source = read.string(j, path, "source");
  return c;
}

}  // namespace roofline
