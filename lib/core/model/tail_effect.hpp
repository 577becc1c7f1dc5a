// The tail effect (wave quantization): a grid whose CTAs do not spread evenly over the SMs
// leaves SMs idle while the last ones finish, and no schedule can hide it.
//
// The roof it gives is a bound, not an estimate. An SM cannot compute faster than its share of
// the chip's peak (peak ÷ SMs), and a CTA runs on one SM, so the kernel takes at least the
// longest time any SM must spend on the CTAs given to it. With CTAs of work w_1 ≥ w_2 ≥ … ≥ w_G
// (in units of one SM at peak) on m SMs, every schedule's makespan is at least
//   - the total over m (W / m), the largest CTA (w_1), and
//   - for each k ≥ 1 with G > k·m: the k + 1 smallest of the k·m + 1 largest CTAs, since some SM
//     holds k + 1 of those (pigeonhole). With equal CTAs that is ⌈G / m⌉ · w.
// The efficiency is W / (m · makespan bound): the compute roof times it is the tail roof. It
// holds whatever the number of CTAs resident per SM: a lone CTA may run faster than one that
// shares its SM, but never faster than the SM. The waves at the occupancy (CTAs per SM) are
// reported beside it, as ncu does, and do not enter the roof.
//
// Memory roofs are not scaled: a few SMs can still pull most of the DRAM bandwidth.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "lib/core/domain/gpu_spec.hpp"
#include "lib/core/domain/launch.hpp"
#include "lib/core/domain/workload.hpp"

namespace roofline {

struct KernelModel;

// One kernel launch as the tail effect sees it.
struct LaunchGrid {
  std::int64_t ctas = 0;
  // The CTAs' work, relative (any unit), as (work, how many CTAs do it); empty when every CTA
  // does the same work. The counts add up to `ctas`.
  std::vector<std::pair<double, std::int64_t>> cta_work;
  int ctas_per_sm = 0;  // resident at once; 0 when unknown
  std::string origin;   // "the launch's grid", "flash-v2's forward grid (query tiles × B·H)"
  // One period of the CTAs' work in launch order (blockIdx order, or the order a persistent
  // kernel's tile counter hands the work out), repeated up to `ctas` ({1}: equal CTAs); empty
  // when unknown.
  std::vector<double> launch_order;
};

struct TailEffect {
  std::int64_t ctas = 0;
  int sm_count = 0;
  int ctas_per_sm = 0;        // 0 when unknown
  std::int64_t waves = 0;     // ⌈CTAs ÷ (SMs × CTAs per SM)⌉; 0 when CTAs per SM is unknown
  double last_wave_fill = 0;  // share of the last wave's slots that hold a CTA; NaN if unknown
  double efficiency = 1;      // the bound above: the share of the chip's peak reachable
  bool equal_work = true;     // false: the CTAs' work differs (a causal mask)
  std::string origin;

  // "64 CTAs (2 per SM) on 132 SMs: 1 wave, 48% busy";
  // "300 CTAs (2 per SM) on 132 SMs: 2 waves, the last 14% full, 76% busy (CTAs of unequal work)"
  std::string describe() const;
  // "64 CTAs on 132 SMs, 48% busy": for the regime
  std::string brief() const;
};

// Below this efficiency the tail roof is called the binding roof ("tail-bound"); above it the
// row keeps its compute ceiling's name (its bound still uses the tail roof).
inline constexpr double kTailBindsBelow = 0.95;

TailEffect tail_effect(const LaunchGrid& grid, int sm_count);

// What the tail effect's bound leaves out: the share of the chip's peak the grid keeps busy when
// its CTAs are handed out in launch order, one to each SM before any gets a second, then each to
// the slot that frees first, as the hardware dispatches a grid and a persistent kernel's tile
// counter hands out its work. A schedule that runs, not a bound: a causal grid whose heavy CTAs
// land on the same SMs loses more than the bound says, and a different share on another SM
// count; and an SM that holds fewer CTAs than it has slots for runs slower than at its full
// occupancy (co_resident_rate). NaN when the grid has no launch order.
double launch_order_efficiency(const LaunchGrid& grid, int sm_count);

// The rate of an SM holding `resident` of a kernel's CTAs, of its rate with all `slots` full:
// sqrt(resident ÷ slots). A kernel is written for its occupancy: its CTAs hide each other's
// latencies, so one CTA alone does not reach the SM's rate, and two do not take twice one's time.
// Where between the two bounds (as fast as one alone, or at most the SM's rate) a kernel lands is
// not known from one launch; the geometric middle errs by at most sqrt(slots ÷ resident) either
// way. Measured on an H100 and an H200 in green contexts (2026-12-06, docs/model.md): two
// flash-v1 or flash-v2 forward CTAs on one SM took 1.40-1.54 times one alone (sqrt 2: 1.41).
double co_resident_rate(int resident, int slots);

// CTAs of this shape resident on one SM under the spec's per-SM limits (threads, CTAs,
// registers in 256-register warp allocations, shared memory with its per-CTA reservation);
// 0 when the spec has no limits or the CTA does not fit.
int resident_ctas_per_sm(const SmLimits& limits, std::int64_t threads_per_cta,
                         int registers_per_thread, std::int64_t shared_bytes_per_cta);

// The grid of a bundled flash kernel's main launch for this workload (forward: query tiles ×
// B·H; backward: key tiles × B·H), each CTA's work in tile pairs under a causal mask, in launch
// order (each head's tiles heaviest first: the forward kernels walk their query tiles from the
// last, the backward ones their key tiles from the first);
// flash-decode's (sequences × key/value heads × row blocks × split-KV parts, the parts chosen
// for `sm_count` SMs), each CTA's work in key tiles; nullopt for kernels whose launches the
// model does not know (standard: cuBLAS chooses).
std::optional<LaunchGrid> bundled_grid(const KernelModel& model, const Workload& workload,
                                       int sm_count = 0);

// A profiled launch's grid (a graph launch has none: nullopt); CTAs per SM from its block,
// registers and shared memory when the spec has per-SM limits.
std::optional<LaunchGrid> launch_grid(const KernelLaunch& launch, const GpuSpec& spec);

}  // namespace roofline
