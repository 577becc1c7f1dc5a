// A GPU on a share of its SMs: the spec a green context of N SMs is judged against (`run --sms
// N`), and the target a whole-GPU report is projected onto to predict it (`show REPORT --gpu
// NAME --sms N`). What scales with the SMs and what does not (docs/model.md, "A share of the
// SMs"):
//   - scales by N / the spec's SM count: every compute ceiling (each SM has its own pipes) and
//     the L1/shared bandwidth (one L1 per SM); the exponential unit's and shared memory's
//     per-SM rates scale through the SM count itself;
//   - DRAM and L2 bandwidth (shared by all SMs behind the crossbar): what N SMs drew of it when
//     they ran alone, by the level's share curve where it has one (`calibrate` measures it in
//     green contexts; a few SMs cannot keep enough bytes in flight to draw all of it), linear
//     between its points; kept whole where it has none;
//   - kept: L2 size, clocks, memory, power, the launch floor and what one SM holds
//     (sm_limits).
#pragma once

#include <map>
#include <optional>
#include <string>

#include "lib/core/domain/gpu_spec.hpp"
#include "lib/core/domain/spec_choice.hpp"

namespace roofline {

// `spec` on `sms` of its SMs: key "<key>.<sms>sm", name "<name>, <sms> of <count> SMs", no
// aliases or device names (no device reports itself as a share), sources that say so. `spec`
// itself when `sms` is its SM count. Throws InputError when `sms` is below 1 or above the
// spec's SM count.
GpuSpec with_sm_count(const GpuSpec& spec, int sms);

// Whether `share` is `whole` on a share of its SMs (with_sm_count's key "<key>.<sms>sm").
bool is_share_of(const GpuSpec& share, const GpuSpec& whole);

// The level's share curve at `sms` SMs (what its kernel drew there alone), linear between its
// points, taken rising (a measured point below an earlier one does not count). NaN when the
// level has no curve.
double share_curve_gbps(const MemoryLevelSpec& level, double sms);

// The SMs the level's share curve needs to draw `drawn_gbps` (all of the curve's at or past its
// top): a kernel that drew that much on N SMs holds as many bytes in flight per SM as the curve's
// kernel does, times this ÷ N. NaN when the level has no curve or `drawn_gbps` is not positive.
double share_curve_sms(const MemoryLevelSpec& level, double drawn_gbps);

// Whether `drawn_gbps` is past the curve's knee (at least 85% of its top): drawn on all SMs, it
// says only that the kernel's bytes in flight reach that far, not how far beyond (the curve is
// flat there), so share_drawn_gbps takes the least and may draw too little on a share.
bool past_share_knee(const MemoryLevelSpec& level, double drawn_gbps);

// What a kernel that drew `drawn_gbps` from `level` on all `all_sms` SMs of its GPU draws on `sms`
// of them, by Little's law against the level's share curve: its bytes in flight per SM stay
// as they were, and the memory's latency follows the load alone, so it draws on N SMs what the
// curve's kernel draws on N × share_curve_sms(drawn) ÷ all. NaN when the level has no curve or
// `drawn_gbps` is not positive.
double share_drawn_gbps(const MemoryLevelSpec& level, int all_sms, double drawn_gbps, int sms);

// The same row measured on a few SMs of the same GPU (a report whose context has
// green_context_sms: `run --sms N`), beside its measurement on all of them: what a row that
// fills a level on every SM cannot show (past_share_knee), its bytes in flight per SM, which
// fit_share_run reads from the two times (`show --gpu SPEC --sms N --share-run REPORT`).
struct ShareRun {
  int sms = 0;                          // the SMs of the green context
  double seconds = 0;                   // the row's median time there
  std::map<MemoryLevel, double> bytes;  // each counted level's bytes there (DRAM, L2)
  std::string source;                   // the report it came from

  friend bool operator==(const ShareRun&, const ShareRun&) = default;
};

// A row's time on N SMs of its GPU, fitted to its time on all of them and on a share run: its
// level's bytes at what the curve's kernel draws on N × `per_sm` SMs (Little's law: its bytes in
// flight per SM are `per_sm` times that kernel's), plus `fixed_seconds` that no SM count changes
// (the gaps between its kernels, a short kernel's latency). Two measurements, two unknowns.
struct ShareFit {
  double per_sm = 0;
  double fixed_seconds = 0;
};

// The fit through `seconds_all` (moving `bytes_all` on all `all_sms` SMs) and `seconds_few`
// (`bytes_few` on `few_sms`); nullopt without a curve, without a share run slower than all the
// SMs, or where no fit has a fixed part of at least zero.
std::optional<ShareFit> fit_share_run(const MemoryLevelSpec& level, int all_sms, double bytes_all,
                                      double seconds_all, int few_sms, double bytes_few,
                                      double seconds_few);

// The fitted time of `bytes` on `sms` SMs.
double share_fit_seconds(const MemoryLevelSpec& level, const ShareFit& fit, double bytes, int sms);

// The choice of a run measured on `sms` SMs of its device: the measured spec on that share and,
// unless the run is a projection onto another GPU, the judging spec too.
SpecChoice on_sm_share(SpecChoice choice, int sms);

}  // namespace roofline
