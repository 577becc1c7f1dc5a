// The JSON of the values every file this tool writes shares (reports, comparisons, profile
// records, calibration files), each type's writer beside its reader, so that a field is added in
// one place: one spelling of a number, a workload, a profiled launch and a device everywhere.
// Readers throw InputError naming the key path, through JsonReader (json_reader.hpp).
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "lib/core/base/json_reader.hpp"
#include "lib/core/domain/launch.hpp"
#include "lib/core/domain/workload.hpp"
#include "lib/core/report/report.hpp"

namespace roofline {

// JSON has no NaN or infinity: such numbers are written as null.
nlohmann::json json_number(double value);

// {"batch", "heads", "seq_len", "head_dim", "causal", "pass", "dtype"}
nlohmann::json workload_json(const Workload& workload);
// Checked with the command line's rules (Workload::validate).
Workload workload_from_json(const JsonReader& read, const nlohmann::json& json,
                            const std::string& path);

// Every field of a profiled launch (KernelLaunch), under its own name.
nlohmann::json launch_json(const KernelLaunch& launch);
KernelLaunch launch_from_json(const JsonReader& read, const nlohmann::json& json,
                              const std::string& path);

// A launch's warp samples (StallSampling): {"period_log2", "samples", "dropped", "reasons":
// {name: samples}, "hottest": [{"function", "pc_offset", "sass", "samples", "reason", "file",
// "line"}], "lines": [{"file", "line", "samples", "reason"}], "note"}. The reader checks that the
// reasons sum to "samples".
nlohmann::json stalls_json(const StallSampling& stalls);
StallSampling stalls_from_json(const JsonReader& read, const nlohmann::json& json,
                               const std::string& path);

// A launch's energy (EnergyMeasurement): {"joules_per_launch", "watts", "seconds_per_launch",
// "window_seconds", "updates", "relative_spread"}.
nlohmann::json energy_json(const EnergyMeasurement& energy);
EnergyMeasurement energy_from_json(const JsonReader& read, const nlohmann::json& json,
                                   const std::string& path);

// The row on a few SMs (Row::share_run, sm_share.hpp): {"sms", "seconds", "bytes": {"dram",
// "l2"}, "source"}, a level's bytes absent when not counted.
nlohmann::json share_run_json(const ShareRun& run);
ShareRun share_run_from_json(const JsonReader& read, const nlohmann::json& json,
                             const std::string& path);

// The kernels of one launch (Row::kernels), in launch order: [{"name", "grid", "block",
// "registers_per_thread", "shared_bytes", "seconds", "start_seconds"}].
nlohmann::json kernels_json(const std::vector<PointKernel>& kernels);
std::vector<PointKernel> kernels_from_json(const JsonReader& read, const nlohmann::json& json,
                                           const std::string& path);

// Which fields of a DeviceInfo a file carries.
enum class DeviceFields {
  kAll,          // reports (context.device) and profile records (the "device" record)
  kCalibration,  // calibration files: no memory sizes; chip and versions may be absent or null
};
// {"name", "chip", "compute_capability", "sm_count", "memory_bytes", "l2_cache_bytes",
//  "driver_version", "runtime_version"}, less the memory sizes for kCalibration.
nlohmann::json device_json(const DeviceInfo& device, DeviceFields fields = DeviceFields::kAll);
// kAll also checks compute_capability (MAJOR.MINOR) and fills cc_major and cc_minor from it.
DeviceInfo device_from_json(const JsonReader& read, const nlohmann::json& json,
                            const std::string& path, DeviceFields fields = DeviceFields::kAll);

}  // namespace roofline
