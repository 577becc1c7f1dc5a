// Warp sampling of what runs between start and stop, through CUPTI's PC sampling API
// (cupti_pcsampling.h; sm_70 and newer): every 2^period cycles each SM reports one warp's PC and
// why it did or did not issue. Kernel-serialized collection with start/stop control: one
// session, enabled at the first range and disabled with the sampler, each range started and
// stopped around its launches and read to the end before the next starts (so that a range's
// samples are its launches' alone), the period set before a range when it changes. Enabling costs
// far more than a range, so a sweep pays it once. The reasons keep CUPTI's names
// ("smsp__pcsamp_warps_issue_stalled_barrier", and a "_not_issued" twin of each).
//
// Sampling serialises kernels and perturbs none of their results; it cannot run beside another
// CUPTI PC-sampling or profiling session in the context. Two users: the stall pass of `run`
// (stall_pass.hpp), which hands sample() the launch, and `profile --stalls` (lib/inject), whose
// launch happens between its driver call's entry and exit callbacks: start() at the entry,
// stop() at the exit.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "lib/core/domain/stalls.hpp"

namespace roofline::gpu::cupti {

struct SampledPc {
  std::string function;  // mangled, as the module names it
  std::uint64_t cubin_crc = 0;
  std::uint64_t pc_offset = 0;
  std::map<std::string, std::uint64_t> reasons;  // CUPTI's names -> samples
};

struct SampledRange {
  std::vector<SampledPc> pcs;
  std::uint64_t total_samples = 0;     // every sample of the range, the unattributed included
  std::uint64_t dropped_samples = 0;   // dropped by the hardware (buffer full)
  std::uint64_t non_user_samples = 0;  // in kernels CUPTI gives no PCs for (its own, the driver's)
  bool hardware_buffer_full = false;
};

// Host seconds the sampler spent, by phase, over every range so far: where a stall pass's time
// goes (the work itself, the launches and the device waits around them, counts as `work`).
struct SamplerSeconds {
  double configure = 0;  // enabling, and setting the period when it changes
  double start = 0;      // cuptiPCSamplingStart
  double work = 0;       // the launches, with the device waits before and after them
  double stop = 0;       // cuptiPCSamplingStop
  double read = 0;       // cuptiPCSamplingGetData and the records' attribution
};

// A range's PCs as the stall rows take them (reasons under ncu's names, no SASS or line yet),
// and its totals.
std::vector<PcSample> pc_samples_of(const SampledRange& range);
StallRangeTotals stall_totals_of(const SampledRange& range);

struct PcSession;

class PcSampler {
 public:
  // In the calling thread's current context (the runtime's primary context: create it first).
  // Throws ProfilerError when the device or the process cannot sample.
  PcSampler();
  // In `context` (a CUcontext), which must be current on the threads that call start() and
  // stop(); the runtime is not used.
  explicit PcSampler(void* context);
  ~PcSampler();  // disables sampling
  PcSampler(const PcSampler&) = delete;
  PcSampler& operator=(const PcSampler&) = delete;

  // Samples at one sample per SM every 2^period_log2 cycles (5 to 31) while `work` runs (it
  // launches on the GPU; sample waits for the device before and after it), and returns what
  // was sampled. Enables sampling on the first call. Throws ProfilerError, after which the
  // session is disabled (the next call enables it again).
  SampledRange sample(int period_log2, const std::function<void()>& work);
  const SamplerSeconds& seconds() const { return seconds_; }

  // The two halves of sample(): start() waits for the context's work and starts a range at
  // that period (enabling sampling first when needed); stop() waits for the context's work,
  // stops the range and returns what it sampled. Each throws ProfilerError, after which the
  // session is disabled (the next start() enables it again). stop() only after a start() that
  // returned.
  void start(int period_log2);
  SampledRange stop();

 private:
  void read_reasons();
  void open_session(int period_log2);
  void synchronize() const;
  SampledRange stop_and_read();

  void* context_ = nullptr;  // CUcontext
  int period_log2_ = 0;      // the period set last (0: none yet)
  SamplerSeconds seconds_;
  std::unique_ptr<PcSession> session_;
  std::vector<std::uint32_t> reason_indices_;
  std::vector<std::string> reason_names_;  // by position in reason_indices_
};

}  // namespace roofline::gpu::cupti
