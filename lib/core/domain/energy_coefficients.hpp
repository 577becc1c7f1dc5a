// The energy roofline's coefficients of one GPU (`calibrate --energy`, calibration.hpp): the
// static power and the dynamic energy per unit of work of each pipe and memory level, each
// from a micro-kernel run back to back while NVML's energy counter was read:
//   joules per unit = (P_kernel − P_static) × seconds per launch ÷ work per launch.
// A coefficient holds everything the micro-kernel's work cost beyond the static power: for a
// byte read from DRAM, its trip across L2 and the load path to the registers as well; for a
// FLOP, the instruction issue and register reads of the FMA that made it.
#pragma once

#include <map>
#include <string>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

namespace roofline {

enum class MemoryLevel;  // gpu_spec.hpp, which holds these coefficients
class JsonReader;

struct EnergyCoefficients {
  // The board's power while the GPU runs but does no work ("active idle": one thread spinning
  // on the cycle counter, back to back), watts.
  double static_watts = 0;
  // By ceiling id ("fp32", "fp16_cuda_core", "tensor_fp16.mma_sync", "tensor_fp16.wgmma"):
  // joules per FLOP.
  std::map<std::string, double> joules_per_flop;
  // Joules per exp2 result of the exponential unit (MUFU.EX2); 0 when not measured.
  double joules_per_exp2 = 0;
  // Joules per integer or control thread instruction (the calibration's xor-and-add chains: an
  // instruction's issue, register reads and ALU work), for the instructions that are neither
  // FLOPs nor bytes (energy_model.hpp); 0 when not measured.
  double joules_per_int_instruction = 0;
  // By memory level: joules per byte moved at that level (DRAM: read from DRAM; L2: read from
  // L2 by the SMs; L1: read from shared memory).
  std::map<MemoryLevel, double> joules_per_byte;
  // Joules per DRAM byte read by bulk copies into shared memory (TMA on Hopper: the
  // calibration's dram_read_bulk, one lane per SM issuing them): the trip across L2 into shared
  // memory without the load instructions, the L1 path and the register writes that
  // joules_per_byte's DRAM reads pay. 0 when not measured. The model charges the bytes that did
  // not pass through L1 at the DRAM and L2 prices less that difference (energy_model.hpp).
  double joules_per_bulk_dram_byte = 0;
  // Joules per DRAM byte written (the calibration's dram_write: 16-byte stores, their trip to L2
  // and the write-back to DRAM); 0 when not measured: written bytes then pay the read's price.
  double joules_per_dram_write_byte = 0;
  // Joules per byte reduced in L2 (the calibration's l2_reduce: FP32 reductions into a buffer
  // resident in L2, the slice reading, adding and writing each sector); 0 when not measured:
  // reduced bytes then pay an L2 read's price.
  double joules_per_l2_reduction_byte = 0;
  // The power limit the board enforced while calibrated (NVML), watts; 0 when not known. Its
  // average power is held at or below it (by the clocks), so no launch draws more over a window
  // of NVML's: the model's energy of a launch is at most this × its time (energy_model.hpp).
  double power_limit_watts = 0;
  // Where they come from ("calibrated on NVIDIA H200 (2026-...): NVML energy counter ...").
  std::string source;

  // The coefficient of `ceiling_id`, or of its FP16 twin for a BF16 tensor id
  // ("tensor_bf16.wgmma" → "tensor_fp16.wgmma": the same instruction on the same pipe);
  // nullptr when not measured.
  const double* flop(const std::string& ceiling_id) const;
  const double* byte(MemoryLevel level) const;

  friend bool operator==(const EnergyCoefficients&, const EnergyCoefficients&) = default;
};

// The dynamic energy per unit of a micro-kernel's work: (watts − static_watts) ×
// seconds_per_launch ÷ work_per_launch. NaN when the inputs are not finite, the time or work is
// not positive, or the kernel's power is not above the static power (nothing to attribute).
double dynamic_joules_per_unit(double watts, double static_watts, double seconds_per_launch,
                               double work_per_launch);

// JSON (in a spec and a calibration file alike):
//   {"static_watts": W, "joules_per_flop": {"<ceiling id>": J, ...}, "joules_per_exp2": J
//    (optional), "joules_per_int_instruction": J (optional), "joules_per_byte":
//    {"dram"|"l2"|"l1": J, ...}, "joules_per_bulk_dram_byte", "joules_per_dram_write_byte",
//    "joules_per_l2_reduction_byte": J (each optional), "power_limit_watts": W (optional),
//    "source": "..."}
nlohmann::json to_json(const EnergyCoefficients& coefficients);
// Every coefficient finite, not negative and at most 1 µJ per unit; the static power positive;
// a ceiling id or level name that is not one is an error. Throws InputError naming the key.
EnergyCoefficients parse_energy_coefficients(const JsonReader& read, const nlohmann::json& json,
                                             std::string_view path);

}  // namespace roofline
