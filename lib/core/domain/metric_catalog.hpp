// The metric catalogue, defined once: every counter quantity the tool reports, its unit and
// meaning, and for each chip the hardware metrics (CUPTI / Nsight Compute names) that make it.
// It drives collection (lib/gpu asks for exactly these metrics), the reports (quantity ids are
// the keys of Row::counters) and docs/columns.md.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace roofline {

// Which metrics to collect. kRoofline needs no instrumentation and fits in one pass on GA100
// and GH100 (time, clocks, bytes at every level, FP16 tensor FLOPs); kFull adds the
// SASS-instrumented counters (CUDA-core FP32/FP16 FLOPs, shared-memory bytes and wavefronts by
// operation), the XU pipe's instructions and the BF16/TF32 tensor paths: 3 passes, and kernels
// run many times slower in the instrumented pass.
enum class CounterSet { kRoofline, kFull };
std::string_view to_string(CounterSet set);  // "roofline", "full"

struct MetricTerm {
  std::string metric;                      // "lts__t_sectors_srcunit_tex.sum"
  double factor;                           // quantity += factor × metric value
  CounterSet set = CounterSet::kRoofline;  // the smallest set that collects it
};

struct CounterQuantity {
  std::string id;       // "l2_bytes"
  std::string unit;     // "bytes", "seconds", "hz", "flops"
  std::string meaning;  // one sentence for the docs
};

const std::vector<CounterQuantity>& counter_quantities();

// Chips with a catalogue ("GA100", "GH100", ...).
std::vector<std::string> catalogued_chips();
bool has_catalogue(std::string_view chip);

// Terms of one quantity on one chip within a set; empty when the set does not measure it.
std::vector<MetricTerm> metric_terms(std::string_view chip, std::string_view quantity,
                                     CounterSet set = CounterSet::kFull);

// Every hardware metric the set needs on the chip, deduplicated, in a stable order.
// Throws InputError for a chip without a catalogue.
std::vector<std::string> catalogue_metrics(std::string_view chip,
                                           CounterSet set = CounterSet::kFull);

// Quantities the set measures on the chip.
std::vector<std::string> catalogue_quantities(std::string_view chip, CounterSet set);

// The tensor-core paths whose FLOPs the full set counts on the chip and `set` does not, named
// by instruction, inputs and accumulator ("mma.sync FP16 inputs, FP16 accumulator", "wgmma
// TF32 inputs"): a kernel on one of them shows no tensor FLOPs under `set`. Empty for the full
// set or a chip without a catalogue.
std::vector<std::string> tensor_paths_not_counted(std::string_view chip, CounterSet set);
// "; tensor FLOPs not counted in this set: mma.sync FP16 inputs, FP16 accumulator, ...
// (--counter-set full counts them)", or "" when the set counts every path: for a report's
// counter provenance.
std::string tensor_paths_note(std::string_view chip, CounterSet set);

// Combine raw metric values (same order as `metrics`) into the set's quantities. A quantity
// whose terms include a NaN or missing metric is left out of the result.
std::map<std::string, double> combine_metrics(std::string_view chip, CounterSet set,
                                              const std::vector<std::string>& metrics,
                                              const std::vector<double>& values);

// Quantity ids with a fixed meaning, used by the analysis.
namespace quantity {
// A profiled launch's kernel time (kGpuTime): the GPU's own time for its kernels, from CUPTI's
// activity records (lib/inject/kernel_activity.hpp), else from the range around it.
// kKernelExecution: the kernels' execution alone (activity records); kRangeTime: the range's
// (or events') time around the launch; kKernelCount: how many kernels (graph nodes) it ran.
inline constexpr const char* kGpuTime = "gpu_time_seconds";
inline constexpr const char* kRangeTime = "range_time_seconds";
inline constexpr const char* kKernelCount = "kernel_count";
inline constexpr const char* kKernelExecution = "kernel_execution_seconds";
// A counted graph node's replay alone (its submission to its end, after the cold flush), beside
// kGpuTime, its time as the graph ran it.
inline constexpr const char* kReplayTime = "replay_time_seconds";
// A graph launch's time (first node's start to last node's end) when none of its nodes ran.
inline constexpr const char* kGraphIdle = "graph_idle_seconds";
// A kernel node's time (kGpuTime) during which another kernel node of its graph launch ran:
// parallel branches, or the next node starting under its last CTAs. ncu runs nodes one at a time.
inline constexpr const char* kGraphShared = "graph_shared_seconds";
// A node (its row) or a group of them (`show`'s summary) that spent more than this part of its
// time beside other nodes says so: its rates are those of a GPU it shared.
inline constexpr double kGraphSharedNoted = 0.05;
inline constexpr const char* kSmClock = "sm_clock_hz";
inline constexpr const char* kDramClock = "dram_clock_hz";
inline constexpr const char* kL2Clock = "l2_clock_hz";
inline constexpr const char* kDramRead = "dram_read_bytes";
inline constexpr const char* kDramWrite = "dram_write_bytes";
inline constexpr const char* kL2 = "l2_bytes";
inline constexpr const char* kL2Fabric = "l2_all_bytes";
// The SMs' L2 sectors that were reductions or atomics (part of kL2, full set): what the energy
// model prices as a byte reduced in L2.
inline constexpr const char* kL2Reduction = "l2_reduction_bytes";
inline constexpr const char* kL1 = "l1_bytes";
inline constexpr const char* kShared = "shared_bytes";
inline constexpr const char* kXuInstructions = "xu_instructions";
// Integer and control thread instructions (SASS-instrumented, full set): what the energy model
// prices per instruction, beside the FLOPs and bytes.
inline constexpr const char* kIntInstructions = "int_instructions";
inline constexpr const char* kSharedWavefronts = "shared_wavefronts";
inline constexpr const char* kSharedWavefrontsGmma = "shared_wavefronts_gmma";
inline constexpr const char* kFp32Flops = "fp32_flops";
inline constexpr const char* kFp16Flops = "fp16_flops";
inline constexpr const char* kTensorMmaSync = "tensor_mma_sync_flops";
inline constexpr const char* kTensorWgmma = "tensor_wgmma_flops";
inline constexpr const char* kTensorBf16 = "tensor_bf16_flops";  // part of the two above
}  // namespace quantity

// Bytes of one shared-memory wavefront: one 128-byte cycle of an SM's data pipe.
inline constexpr double kSharedWavefrontBytes = 128;

}  // namespace roofline
