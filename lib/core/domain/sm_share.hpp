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

// What a kernel that drew `drawn_gbps` from `level` on all `all_sms` SMs of its GPU draws on `sms`
// of them, by Little's law against the level's share curve: its bytes in flight per SM stay
// as they were, and the memory's latency follows the load alone, so it draws on N SMs what the
// curve's kernel draws on N × (the SMs that kernel needs to draw `drawn_gbps`) ÷ all. The curve
// is taken rising (a measured point below an earlier one does not count). NaN when the level
// has no curve or `drawn_gbps` is not positive.
double share_drawn_gbps(const MemoryLevelSpec& level, int all_sms, double drawn_gbps, int sms);

// The choice of a run measured on `sms` SMs of its device: the measured spec on that share and,
// unless the run is a projection onto another GPU, the judging spec too.
SpecChoice on_sm_share(SpecChoice choice, int sms);

}  // namespace roofline
