// The report model: rows of (kernel × workload) on a spec, with the model's prediction and what
// was measured, plus the context that says where every number came from. Raw quantities are
// stored; intensities, rates and utilisations are derived by analysis.hpp.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "lib/core/domain/energy.hpp"
#include "lib/core/domain/gpu_spec.hpp"
#include "lib/core/domain/launch.hpp"
#include "lib/core/domain/point_kernels.hpp"
#include "lib/core/domain/sm_share.hpp"
#include "lib/core/domain/stalls.hpp"
#include "lib/core/domain/workload.hpp"
#include "lib/core/model/model.hpp"

namespace roofline {

// The `schema_version` of report JSON (report_read.hpp, writers/report_writers.hpp); readers refuse
// any other. Bump it when a reader of the previous version would misread a report of the new one: a
// key removed or renamed, a value whose meaning or unit changed, a key that readers must
// understand. Adding a key that old readers may ignore does not bump it; this reader then takes the
// key as optional, with the meaning it had before it existed (row_json.cpp's "Added with" notes). A
// bump keeps tests/data/reports/schema_v2.json (a version this reader refuses) one above it.
inline constexpr int kReportSchemaVersion = 1;

// Where a number came from.
// kProjected: derived from measurements on another GPU (analysis.hpp, analyze(row, report)).
enum class Source { kMeasured, kModel, kSpec, kProjected };
std::string_view to_string(Source source);

enum class RowStatus {
  kOk,
  kIncorrect,            // --verify failed: no performance verdict
  kTooLarge,             // did not fit in device memory
  kCountersUnavailable,  // timing and model only; message names the fix
  kError,                // the launch failed; message says how
  kUnsupported,          // the kernel does not run on this GPU or shape; message says why
};
std::string_view to_string(RowStatus status);
std::optional<RowStatus> parse_row_status(std::string_view text);

// The words Timing::clock_limit takes: "none", "power cap", "thermal", "power cap, thermal".
bool is_clock_limit(std::string_view text);

struct Timing {
  std::vector<double> samples_seconds;  // one per timed repetition, in order
  // The SM clock (NVML) before the first timed launch and after the last: 0 when unknown.
  double sm_clock_before_mhz = 0;
  double sm_clock_after_mhz = 0;
  // While the timed launches ran: the median of the SM clock sampled every millisecond (NVML),
  // 0 when unknown, and why the board held the clock below its maximum then ("power cap",
  // "thermal", both, or "none"; empty when unknown). Under load an H200 sits at its power cap:
  // its SM clock fell from 1.98 to 1.47-1.53 GHz under a flash-v3 forward run for a second,
  // while a reading after the launches could be back at 1.98 (2026-12-02).
  double sm_clock_timed_mhz = 0;
  std::string clock_limit{};
  // The sweep was timed in `rounds` interleaved rounds (every point once per round); round r
  // holds samples [floor(r·n / rounds), floor((r+1)·n / rounds)) of the n samples.
  int rounds = 1;

  // The samples of each round, in order; one group when rounds <= 1 or rounds > n.
  std::vector<std::vector<double>> round_samples() const;

  // The mean of the readings before and after the launches (the one after alone when there is
  // no reading before), MHz; 0 when unknown.
  double sm_clock_around_mhz() const;
  // The SM clock the timed launches ran at, MHz: sm_clock_timed_mhz, else (reports before it)
  // sm_clock_around_mhz(); 0 when unknown.
  double sm_clock_mhz() const;

  double median_seconds() const;
  double min_seconds() const;
  double max_seconds() const;
  // Half the distance between the 25th and 75th percentiles, relative to the median.
  double relative_spread() const;
};

struct Verification {
  bool passed = false;
  double relative_l2_error = 0;  // kernel vs FP32 reference, worst output tensor
  double max_abs_error = 0;
  // The plain implementation in the row's dtype (FP16, or BF16 for a BF16 row; the names
  // predate BF16) vs the FP32 reference.
  double fp16_relative_l2_error = 0;
  double fp16_max_abs_error = 0;
  std::string worst_output;  // "o", "dq", ...
};

struct Row {
  std::string kernel;
  Workload workload;
  std::string spec_key;  // which of Report::specs judges this row
  RowStatus status = RowStatus::kOk;
  std::string message;  // why, for any status but ok (and warnings for ok rows)
  Prediction prediction;
  std::optional<Timing> timing;            // measured with CUDA events
  std::map<std::string, double> counters;  // measured; keys from metric_catalog.hpp
  // When each point was counted more than once: every range's value per quantity, in order;
  // `counters` then holds their medians. Empty for one range per point.
  std::map<std::string, std::vector<double>> counter_samples;
  std::optional<Verification> verification;
  // The warp samples of one measured launch (`--stalls`); absent when not sampled.
  std::optional<StallSampling> stalls;
  // Energy per launch over a window of back-to-back launches (`--energy`); absent otherwise.
  std::optional<EnergyMeasurement> energy;
  // The kernels one launch runs, in launch order (`run`'s kernel pass); empty when not recorded.
  std::vector<PointKernel> kernels;
  // The same point measured on a few SMs (`show --share-run`): how a projection onto a share of
  // the SMs reads its bytes in flight; absent otherwise.
  std::optional<ShareRun> share_run;
  // A launch of another program (`profile`); absent for the bundled kernels. Without
  // launch->workload_known, `workload` is meaningless: use has_workload() and row_label().
  std::optional<KernelLaunch> launch;
  // Index into Report::origins when the report gathers rows measured in different contexts
  // (merge of several devices or hosts); absent: Report::context describes the row.
  std::optional<std::size_t> origin;
};

// False for a profiled launch whose NVTX range named no attention workload.
bool has_workload(const Row& row);
// "B1 H8 N1024 d64 causal fwd", or the launch shape for rows without a workload.
std::string row_label(const Row& row);
// The same measured point: equal workloads (rows with one), or, for launches without a
// workload, the same launch shape. Kernel and spec are for the caller to compare.
bool same_point(const Row& a, const Row& b);

struct DeviceInfo {
  std::string name;                // "NVIDIA H200"
  std::string chip;                // "GH100" (from CUPTI), may be empty
  std::string compute_capability;  // "9.0": cc_major.cc_minor
  int sm_count = 0;
  std::int64_t memory_bytes = 0;
  std::int64_t l2_cache_bytes = 0;
  std::string driver_version;
  std::string runtime_version;
  int cc_major = 0;  // compute capability as numbers, for comparisons
  int cc_minor = 0;

  friend bool operator==(const DeviceInfo&, const DeviceInfo&) = default;
};

struct ReportContext {
  std::string command;  // "model", "run"
  // The whole command line that wrote the report, program name first ("cuflash-roofline",
  // "run", "--seq", "1024", ...): enough to run it again. Empty in reports written before it
  // was kept.
  std::vector<std::string> command_line;
  // `profile`: the profiled program and its arguments (the part of command_line after --);
  // empty otherwise.
  std::vector<std::string> program_command;
  std::string tool_version;  // "0.1.0"
  std::string host;
  std::string time_utc;              // ISO 8601
  std::optional<DeviceInfo> device;  // absent for `model`
  bool projection = false;           // measured on one GPU, judged against another's spec
  std::string measured_spec;         // projection: key (in specs) of the GPU measured on
  // `run --sms`: the SMs of the CUDA green context every launch ran in (the driver's count,
  // which may round the asked one up); 0: the whole GPU (device.sm_count).
  int green_context_sms = 0;
  std::string counters;              // provenance: "cupti range profiler ..." or why none
  std::vector<std::string> metrics;  // hardware metric names collected
  int counter_passes = 0;
  // Which ceilings judge the rows: "spec" (the spec sheet) or "calibrated" (calibration.hpp).
  std::string ceilings = "spec";
};

struct Report {
  int schema_version = kReportSchemaVersion;
  ReportContext context;
  std::vector<GpuSpec> specs;  // every spec a row refers to, embedded whole
  std::vector<Row> rows;
  // Contexts that rows refer to by Row::origin: empty unless rows come from several devices or
  // hosts (merge_reports). Report::context then says where the report was assembled.
  std::vector<ReportContext> origins;

  // Throws InputError when the row names a spec the report does not carry.
  const GpuSpec& spec_for(const Row& row) const;
  // Where the row was measured: its origin, else the report's context. Throws InputError for an
  // origin index the report does not carry.
  const ReportContext& context_of(const Row& row) const;
};

// Context fields every command fills the same way: host, time, tool version.
ReportContext make_context(std::string command);

}  // namespace roofline
