// Why a kernel's warps did not issue: the warp samples of a launch (CUPTI's PC sampling, the
// data Nsight Compute's warp-state sampling and source page show), by stall reason, by SASS
// instruction and by source line. The reasons carry Nsight Compute's names (long_scoreboard,
// barrier, mio_throttle, ...); each has what it means and the lever that fits it.
//
// A sample is one warp of one SM, caught every 2^period_log2 cycles in whatever state it was:
// issuing ("selected") or stalled for one reason. Shares are of all the launch's samples, as
// ncu's "Warp Stall Sampling (All Samples)". Samples of one warp are not independent, so the
// binomial interval that `half_width` gives is a floor on the uncertainty, not its measure.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace roofline {

// One sampled SASS instruction.
struct StallInstruction {
  std::string function;         // the kernel (mangled name) it belongs to
  std::uint64_t pc_offset = 0;  // bytes from the function's start
  std::string sass;             // "HGMMA.64x128x16.F32 gdesc[UR4], RZ, !UPT ;"; empty unknown
  std::uint64_t samples = 0;
  std::string reason;  // its most-sampled reason ("selected" included)
  std::string file;    // its source file (base name); empty without line information
  int line = 0;
  // The mbarrier wait it is, or whose predicate it branches on (sass_listing.hpp's
  // mbarrier_wait_of): its warps wait for an mbarrier's phase (TMA copies landing, other warps
  // arriving). Empty otherwise or unknown.
  std::string waits_on;

  friend bool operator==(const StallInstruction&, const StallInstruction&) = default;
};

// One source line: its instructions' samples together.
struct StallLine {
  std::string file;
  int line = 0;
  std::uint64_t samples = 0;
  std::string reason;  // the most-sampled reason over its instructions

  friend bool operator==(const StallLine&, const StallLine&) = default;
};

struct StallSampling {
  int period_log2 = 0;                           // one sample per SM every 2^period_log2 cycles
  std::uint64_t samples = 0;                     // the kernel's samples: the sum over `reasons`
  std::uint64_t dropped = 0;                     // samples the hardware dropped (buffer full)
  std::map<std::string, std::uint64_t> reasons;  // ncu's name -> samples
  std::vector<StallInstruction> hottest;         // most samples first, at most kStallListed
  std::vector<StallLine> lines;                  // most samples first, at most kStallListed
  std::string note;  // why the data is partial (no line information, no SASS); empty if whole

  friend bool operator==(const StallSampling&, const StallSampling&) = default;
};

// How many instructions and lines a row keeps.
inline constexpr std::size_t kStallListed = 10;
// Below this many samples a row's shares are not used by the advice (±10 points at 95%).
inline constexpr std::uint64_t kStallSamplesForAdvice = 100;

// The reason's share of the samples (0 when there are none).
double stall_share(const StallSampling& s, std::string_view reason);
// The reason with the most samples, "selected" (issuing, not a stall) left out; empty when
// there is none.
std::string dominant_stall(const StallSampling& s);
// The half-width of a 95% binomial interval on a share, at its widest (p = 0.5): 0.98/√n.
double stall_half_width(const StallSampling& s);

// What a reason means and what lifts it.
struct StallReasonInfo {
  const char* name;     // ncu's: "long_scoreboard"
  const char* meaning;  // "waiting on a global or local memory load (L1TEX)"
  const char* lever;    // "more bytes in flight: loads issued earlier, TMA or cp.async ..."
};
// nullptr for a reason the catalogue does not know (a newer GPU's).
const StallReasonInfo* stall_reason_info(std::string_view name);

// The lever of `reason` for these samples: the reason's own (stall_reason_info), except for
// long_scoreboard when most of its listed samples are on mbarrier waits (waits_on): those warps
// already wait on asynchronous copies (TMA) or other warps, not on their own loads.
std::string stall_lever(const StallSampling& s, std::string_view reason);

// ncu's name of a CUPTI stall-reason name: "smsp__pcsamp_warps_issue_stalled_long_scoreboard"
// -> "long_scoreboard". Empty for the "_not_issued" counts, which repeat the samples of the
// others for the warps that did not issue, and for the totals CUPTI lists beside the reasons
// (smsp__pcsamp_sample_count, smsp__pcsamp_samples_data_dropped): they are not reasons.
std::string ncu_stall_name(std::string_view cupti_name);

// log2 of the sampling period (cycles per sample per SM) that gives a launch of `seconds` on
// `sms` SMs at `clock_mhz` about `target` samples, within CUPTI's 5..31: a shorter launch gets
// the shortest period and fewer samples.
int stall_period_log2(double seconds, double clock_mhz, int sms, double target);
// A period on a coarse grid (5, 8, 11, ...: rounded down, so a launch gets 1 to 8 times its
// target), for `profile --stalls`, whose launches of many kernels in program order would
// otherwise change the period at nearly every launch, and a change costs about 0.4 s at the
// next sampled launch (H100, CUPTI 13.0).
int stall_period_on_grid(int period_log2);

// Samples a launch should get by default (the `target` of stall_period_log2 for `profile
// --stalls`, and `run --stalls` unless --stall-samples says otherwise): a 50% share is known to
// ±0.44 points (binomial, 95%) at 50,000; more are tighter and take no longer to read, but
// fill the hardware buffer sooner.
inline constexpr double kStallTargetSamples = 50000;
// The SM clock assumed when a launch's own is unknown.
inline constexpr double kStallAssumedClockMhz = 1500;
// The time assumed for a launch of a kernel not seen before (`profile --stalls`, which learns a
// kernel's time from its previous launch): 1 ms gives a 20 µs launch thousands of samples on
// an H100 and a 10 ms one a few million.
inline constexpr double kStallDefaultSeconds = 1e-3;

// The samples of a PC by ncu's reason names, from CUPTI's (ncu_stall_name; the entries that are
// no reason left out).
std::map<std::string, std::uint64_t> ncu_stall_reasons(
    const std::map<std::string, std::uint64_t>& cupti_reasons);

// One sampled PC as the sampler gives it, before the row's summary.
struct PcSample {
  std::string function;
  std::uint64_t pc_offset = 0;
  std::map<std::string, std::uint64_t> reasons;  // ncu's names
  std::string sass;
  std::string file;
  int line = 0;
  std::uint64_t cubin_crc = 0;  // the module's (cuptiGetCubinCrc): where its SASS and lines are
  std::string waits_on;         // StallInstruction::waits_on

  friend bool operator==(const PcSample&, const PcSample&) = default;
};
// The row's summary of a launch's samples (one function's, or every function's of the launch):
// the reasons summed, the kStallListed hottest instructions and lines.
StallSampling summarize_stalls(const std::vector<PcSample>& pcs, int period_log2,
                               std::uint64_t dropped);

// What a sampled range counted beside its PCs (CUPTI's totals).
struct StallRangeTotals {
  std::uint64_t total = 0;     // every sample, the unattributed included
  std::uint64_t dropped = 0;   // dropped by the hardware
  std::uint64_t non_user = 0;  // in kernels CUPTI gives no PCs for
  bool buffer_full = false;    // the hardware buffer filled

  friend bool operator==(const StallRangeTotals&, const StallRangeTotals&) = default;
};
// A row's StallSampling from a range's PCs (their SASS and lines filled where known): the
// summary, its note saying what is partial (the buffer filled, no PC records, and each of
// `notes`, joined with "; ").
StallSampling stall_sampling_of(const std::vector<PcSample>& pcs, int period_log2,
                                const StallRangeTotals& totals,
                                const std::vector<std::string>& notes);

// "long_scoreboard 41%": the dominant reason and its share; empty without samples.
std::string stall_brief(const StallSampling& s);

}  // namespace roofline
