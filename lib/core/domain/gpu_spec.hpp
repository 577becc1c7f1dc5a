// GPU spec files: the peaks a kernel is judged against.
//
// One JSON file per GPU in gpu_specs/ (reviewed data: units in key names, a source for every
// figure). Loading validates every key and type; an error names the file and the key.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "lib/core/domain/energy_coefficients.hpp"

namespace roofline {

enum class MemoryLevel { kDram, kL2, kL1 };
inline constexpr MemoryLevel kAllMemoryLevels[] = {MemoryLevel::kDram, MemoryLevel::kL2,
                                                   MemoryLevel::kL1};
std::string_view to_string(MemoryLevel level);  // "dram", "l2", "l1"
std::optional<MemoryLevel> parse_memory_level(std::string_view text);
std::string_view display_name(MemoryLevel level);  // "DRAM", "L2", "L1"

// The arithmetic a kernel uses. A ceiling is a path plus, for tensor paths, the instruction
// family: on Hopper mma.sync peaks at 2/3 of wgmma, so they are different ceilings.
enum class ComputePath {
  kTensorFp16,  // fp16 inputs, fp32 accumulate, dense
  kTensorBf16,
  kTensorTf32,
  kTensorFp8,
  kFp16CudaCore,  // packed HFMA2 on the FP16 pipe
  kFp32,
  kFp64,
};
std::string_view to_string(ComputePath path);  // "tensor_fp16", ..., "fp32"
std::optional<ComputePath> parse_compute_path(std::string_view text);
bool is_tensor(ComputePath path);

enum class TensorInstruction { kNone, kMmaSync, kWgmma, kTcgen05 };
std::string_view to_string(TensorInstruction instruction);  // "", "mma_sync", "wgmma", "tcgen05"
std::optional<TensorInstruction> parse_tensor_instruction(std::string_view text);

// "9.0" -> {9, 0}; nullopt unless MAJOR.MINOR with one or two digits each.
std::optional<std::pair<int, int>> parse_compute_capability(std::string_view text);

// What `sms` SMs drew from a level all SMs share (DRAM, L2) when only they ran: one point of a
// level's share curve (sm_share.hpp projects onto a share of the SMs with it).
struct ShareBandwidth {
  int sms = 0;
  double gbps = 0;

  friend bool operator==(const ShareBandwidth&, const ShareBandwidth&) = default;
};

// A pure read of `bytes` on every SM, timed as `run` times a launch (after `run`'s L2 flush, CUDA
// events around the one launch): one point of the DRAM level's stream curve.
struct StreamPoint {
  double bytes = 0;
  double seconds = 0;

  friend bool operator==(const StreamPoint&, const StreamPoint&) = default;
};

struct MemoryLevelSpec {
  MemoryLevel level;
  double bandwidth_gbps;  // GB/s, 1e9 bytes per second
  std::string source;
  // One kernel's bandwidth on shares of the SMs (`calibrate`, in green contexts), by rising SM
  // count, the last point on every SM of the device: empty when not measured. Its ratios, not
  // its values, scale bandwidth_gbps onto a share (the level's own figure may come from another
  // kernel or the sheet).
  std::vector<ShareBandwidth> shares = {};
  std::string shares_source = {};  // what measured them; empty when `shares` is
  // DRAM only: a pure read of each size on every SM, timed as `run` times a launch (`calibrate`),
  // by rising bytes; empty when not measured. At a few hundred MB and less it takes well over
  // bytes ÷ bandwidth_gbps (the launch, the first bytes' latency, the last CTAs' drain), and
  // stream_floor.hpp makes it the least time a launch timed so takes to move that many bytes.
  std::vector<StreamPoint> stream = {};
  std::string stream_source = {};  // what measured it; empty when `stream` is
};

struct ComputeCeiling {
  ComputePath path;
  TensorInstruction instruction;  // kNone for CUDA-core paths
  double peak_tflops;             // dense, 1e12 FLOP/s, at clock_mhz
  double clock_mhz;               // the SM clock the peak assumes
  std::string source;
  // The rate the pipe sustains at the board's power cap (measured back to back for over a
  // second, `calibrate --power-cap`), at the SM clock the board settled at, not a burst's.
  bool at_power_cap = false;

  // "tensor_fp16" or "tensor_fp16.wgmma"
  std::string id() const;
  // "tensor FP16 (wgmma)"; "tensor FP16 (wgmma) at the power cap" when at_power_cap.
  std::string label() const;
};

// What one SM holds at once (the CUDA C++ Programming Guide's technical specifications per
// compute capability): the occupancy behind the tail effect's waves.
struct SmLimits {
  int max_threads = 0;
  int max_ctas = 0;
  int registers = 0;                         // 32-bit registers
  std::int64_t shared_bytes = 0;             // shared memory usable by CTAs of one SM
  std::int64_t reserved_shared_per_cta = 0;  // the system's share of each CTA's (1 KB from 8.0)
  std::string source;
};

struct GpuSpec {
  std::string key;  // file stem, e.g. "h100-sxm5"
  std::string name;
  std::vector<std::string> aliases;
  std::vector<std::string> device_names;  // what cudaGetDeviceProperties reports
  std::string chip;                       // "GH100"
  std::string compute_capability;         // "9.0"
  int sm_count = 0;
  double boost_clock_mhz = 0;
  double base_clock_mhz = 0;
  std::int64_t l2_cache_bytes = 0;
  std::int64_t memory_bytes = 0;
  double tdp_watts = 0;
  // Per SM and clock (0: the spec does not say; every shipped spec does). The XU pipe's exp2
  // results (MUFU.EX2; CUDA C++ Programming Guide, arithmetic instruction throughput) and the
  // shared-memory bytes per clock. JSON keys "xu_exp2_per_clock_per_sm" and
  // "shared_bytes_per_clock_per_sm", optional; when present, `sources` names their source.
  double xu_exp2_per_clock_per_sm = 0;
  double shared_bytes_per_clock_per_sm = 0;
  // The launch floor: the shortest time a kernel takes on this GPU from its submission to its
  // end (a one-CTA kernel that does nothing much), in µs; no kernel's time, and so no gain, goes
  // below it. JSON "launch_floor_us", optional (0: not measured); `sources` names the
  // measurement when present.
  double launch_floor_us = 0;
  // The same for a kernel node of a CUDA graph, whose time is its execution alone (its start to
  // its end: the graph launch is submitted once), so shorter: the floor of node rows' targets.
  // JSON "node_floor_us", optional (0: not measured); `sources` names the measurement.
  double node_floor_us = 0;
  std::map<std::string, std::string> sources;  // identity figure key -> source
  std::vector<MemoryLevelSpec> memory;
  std::vector<ComputeCeiling> compute;
  std::optional<SmLimits> sm_limits;  // JSON "sm_limits", optional
  std::string file;                   // where it was loaded from; empty when embedded in a report
  // Key of the spec-sheet spec this one was calibrated from (calibration.hpp); empty for a
  // spec sheet. JSON key "calibrated_from", optional.
  std::string calibrated_from;
  // The energy roofline's coefficients (energy_coefficients.hpp), measured by `calibrate
  // --energy` and carried by the calibrated spec; absent otherwise. JSON key
  // "energy_coefficients", optional.
  std::optional<EnergyCoefficients> energy;

  const MemoryLevelSpec* level(MemoryLevel level) const;
  // The whole chip's exp2 results per second at `clock_hz` (boost clock when <= 0 or NaN);
  // 0 when the spec has no XU rate.
  double exp2_per_second(double clock_hz = 0) const;
  // The whole chip's shared-memory bytes per second at `clock_hz` (boost when <= 0 or NaN);
  // 0 when the spec has no shared-memory rate.
  double shared_bytes_per_second(double clock_hz = 0) const;
  const MemoryLevelSpec& dram() const;  // always present (validated)
  // The ceiling for a path. With an instruction, the exact entry, else the entry with no
  // instruction or the highest-peak entry of that path. nullptr when the path has none.
  const ComputeCeiling* ceiling(ComputePath path,
                                TensorInstruction instruction = TensorInstruction::kNone) const;
};

// Parse and validate one spec from JSON. `origin` names the file in error messages.
// Throws InputError("<origin>: <key>: <what is wrong>").
GpuSpec parse_gpu_spec(const nlohmann::json& json, const std::string& origin);
GpuSpec load_gpu_spec_file(const std::filesystem::path& file);
nlohmann::json to_json(const GpuSpec& spec);

// All known specs: the shipped directory plus user files. Names and aliases are unique across
// files (case-insensitive).
class SpecRegistry {
 public:
  // What a spec with the key of one already added does: replace it (a user's file over a
  // shipped one), or be refused with an InputError naming both files (two of the user's).
  enum class SameKey { kReplace, kRefuse };

  // Loads every *.json in dir (sorted by name).
  void add_directory(const std::filesystem::path& dir, SameKey same = SameKey::kReplace);
  void add_file(const std::filesystem::path& file, SameKey same = SameKey::kReplace);
  void add(GpuSpec spec, SameKey same = SameKey::kReplace);

  // By key, name or alias, case-insensitive. Throws InputError listing the known names.
  const GpuSpec& find(std::string_view name) const;
  const GpuSpec* try_find(std::string_view name) const;
  // By the device name the CUDA runtime reports ("NVIDIA H200"), case-insensitive.
  const GpuSpec* find_for_device(std::string_view device_name) const;
  const std::vector<GpuSpec>& all() const { return specs_; }
  std::string known_names() const;  // "a100, a100-pcie, ..."

 private:
  std::vector<GpuSpec> specs_;
};

// The default spec directory: $CUFLASH_ROOFLINE_SPECS, else next to the executable
// (../share/cuflash-roofline/gpu_specs), else the source tree's gpu_specs/.
std::filesystem::path default_specs_dir();

}  // namespace roofline
