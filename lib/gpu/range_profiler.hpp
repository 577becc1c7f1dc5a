// Hardware counters through the CUPTI Range Profiler (CUDA 13), behind a small RAII interface.
//
// This header includes no CUPTI or nvperf header (the implementation, in range_profiler.cpp and
// cupti/, does). Two halves, as in CUPTI itself:
//   - MetricHost: the host half. Needs libcupti only, no GPU and no driver: chip support,
//     metric checks, config image and pass count, and evaluation of a counter-data image
//     recorded earlier on a GPU (which is how CI tests the analysis path).
//   - RangeProfiler: the target half. User ranges (push/pop around each measured launch, so a
//     multi-kernel workload is one range) and user replay (the caller re-runs the whole
//     begin_pass()..end_pass() block once per pass, flushing L2 before each measured launch).
//   - KernelRangeProfiler: the target half for another program's kernels (the injection
//     library), on a context the program owns: auto range (one range per kernel launch) and
//     kernel replay (CUPTI replays a multi-pass config inside the launch), or a batch (one
//     user-replay pass over many launches, a user range around each).
#pragma once

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace roofline::gpu {

// Why counters could not be read. Each value maps to a row status and a fix in the report.
enum class ProfilerErrorKind {
  kNoDevice,                // no GPU or no driver: the target API is never called
  kInsufficientPrivileges,  // CUPTI_ERROR_INSUFFICIENT_PRIVILEGES: counters admin-only
  kMultipleSubscribers,     // another profiler (ncu, nsys) holds the device
  kUnsupportedDevice,       // compute capability < 7.5 or chip unknown to this CUPTI
  kUnknownMetric,           // a metric name the chip does not have
  kBadCounterData,          // a counter-data image that does not parse or fails its checksum
  kOther,                   // any other CUPTI failure (message carries call, file:line, text)
};

class ProfilerError : public std::runtime_error {
 public:
  ProfilerError(ProfilerErrorKind kind, const std::string& message)
      : std::runtime_error(message), kind_(kind) {}
  ProfilerErrorKind kind() const { return kind_; }

 private:
  ProfilerErrorKind kind_;
};

// One decoded range: its name (as pushed) and one value per metric, in the order the metrics
// were given. A metric that was not collected evaluates to NaN; callers must check.
struct RangeValues {
  std::string name;
  std::vector<double> values;
};

// Host half. Move-only RAII owner of a CUPTI profiler host object for one chip.
class MetricHost {
 public:
  // chip: "GA100", "GH100", ... (case-sensitive, as CUPTI names them).
  // Throws ProfilerError(kUnsupportedDevice) when this CUPTI does not know the chip.
  explicit MetricHost(const std::string& chip);
  ~MetricHost();
  MetricHost(MetricHost&&) noexcept;
  MetricHost& operator=(MetricHost&&) noexcept;
  MetricHost(const MetricHost&) = delete;
  MetricHost& operator=(const MetricHost&) = delete;

  // Chips this CUPTI's host library supports.
  static std::vector<std::string> supported_chips();

  const std::string& chip() const;

  // True when the chip has a metric of that name (base metric with rollup/submetric,
  // e.g. "dram__bytes_read.sum").
  bool has_metric(const std::string& name) const;

  // Config image for these metrics; throws kUnknownMetric naming the first bad metric.
  std::vector<std::uint8_t> config_image(const std::vector<std::string>& metrics) const;

  // Number of replay passes the config needs.
  int num_passes(const std::vector<std::uint8_t>& config_image) const;

  // Evaluate every range of a counter-data image recorded with these metrics.
  std::vector<RangeValues> evaluate(const std::vector<std::uint8_t>& counter_data_image,
                                    const std::vector<std::string>& metrics) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Chip name of a device, e.g. "GH100". Throws kNoDevice if no device with that ordinal exists
// (checked with the runtime API before any CUPTI target call).
std::string device_chip_name(int device);

// Target half. Move-only RAII owner of an enabled range-profiler session on the current
// CUDA context of `device`. One per process at a time.
//
// Use:
//   RangeProfiler p(device, metrics, max_ranges);
//   do {
//     p.begin_pass();
//     for each point: { flush L2; p.push_range(name); launch...; p.pop_range(); }
//   } while (!p.end_pass());
//   std::vector<RangeValues> values = p.decode_and_evaluate();
// begin_pass..end_pass must issue the same ranges in the same order in every pass.
class RangeProfiler {
 public:
  RangeProfiler(int device, const std::vector<std::string>& metrics, int max_ranges);
  ~RangeProfiler();
  RangeProfiler(RangeProfiler&&) noexcept;
  RangeProfiler& operator=(RangeProfiler&&) noexcept;
  RangeProfiler(const RangeProfiler&) = delete;
  RangeProfiler& operator=(const RangeProfiler&) = delete;

  int num_passes() const;
  void begin_pass();
  void push_range(const std::string& name);
  void pop_range();
  // Returns true once every pass has been submitted.
  bool end_pass();
  // Decode the collected passes and evaluate each range. Throws if ranges were dropped.
  std::vector<RangeValues> decode_and_evaluate();
  // The raw counter-data image after decode_and_evaluate (to record test fixtures).
  const std::vector<std::uint8_t>& counter_data_image() const;
  const std::string& chip() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Target half on a context the caller does not own, one kernel at a time: start() before a
// launch, stop(), decode() and evaluate() after it. Auto range makes each kernel launched in
// between one range and serialises it; kernel replay runs a multi-pass config by saving and
// restoring the memory the kernel writes and re-running it inside the launch (caches are not reset
// between passes). Makes no CUDA runtime call: `context` is a CUcontext, `device` its CUdevice,
// both from the driver that launched the kernel. One per process at a time (as RangeProfiler).
class KernelRangeProfiler {
 public:
  // Throws ProfilerError: kUnsupportedDevice, kInsufficientPrivileges, kMultipleSubscribers,
  // kUnknownMetric, or kOther.
  KernelRangeProfiler(void* context, int device, const std::vector<std::string>& metrics);
  ~KernelRangeProfiler();
  KernelRangeProfiler(KernelRangeProfiler&&) noexcept;
  KernelRangeProfiler& operator=(KernelRangeProfiler&&) noexcept;
  KernelRangeProfiler(const KernelRangeProfiler&) = delete;
  KernelRangeProfiler& operator=(const KernelRangeProfiler&) = delete;

  int num_passes() const;
  const std::string& chip() const;
  // Before a kernel launch: one range, kernel replay.
  void start();
  // After the launches: stop() ends the ranges, decode() turns what the GPU collected into the
  // counter-data image, evaluate() gives one RangeValues per kernel launched since start()
  // (none when nothing ran), in launch order, and readies the image for the next start().
  // Three calls so that a caller can time each phase.
  void stop();
  void decode();
  std::vector<RangeValues> evaluate();

  // A batch: one user-replay pass that spans many launches (one-pass counter sets only; throws
  // kOther otherwise). begin_batch() starts the pass with room for `ranges` ranges (user range
  // mode); each measured launch goes between push_range(name) and pop_range(); launches outside
  // a range are not counted. The pass ends with stop(), decode() and evaluate() as above, which
  // give one RangeValues per pushed range, named as pushed. The caller keeps other launches of the
  // context out of a range (it serialises them), as the docs do not say how a range bounds
  // work on other streams.
  void begin_batch(std::size_t ranges);
  bool batch_open() const;  // a batch is started and not stopped
  bool batch_full() const;  // an open batch has no room for another range
  void push_range(const std::string& name);
  void pop_range();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Chip name of a CUdevice whose driver is loaded and initialised (no runtime call).
std::string chip_name_of_loaded_device(int device);

}  // namespace roofline::gpu
