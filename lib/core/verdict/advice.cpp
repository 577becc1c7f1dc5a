#include "lib/core/verdict/advice.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "lib/core/base/text.hpp"
#include "lib/core/domain/stream_floor.hpp"
#include "lib/core/model/model.hpp"
#include "lib/core/verdict/analysis_exp.hpp"

namespace roofline {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// DRAM bytes above this many times the compulsory ones point to missing reuse.
constexpr double kReuseFactor = 3.0;
// Below this share of the binding level's bandwidth, a short launch is held by its launch and
// ramp-up. (A longer memory-bound launch below kAtRoof gets the bandwidth lever: a threshold
// between it and the latency lever flipped the advice of kernels near it from one counter set,
// or one run, to the next.)
constexpr double kBandwidthLever = 0.6;
// From this share of its roof on, a row is at its roof.
constexpr double kAtRoof = 0.8;
// Below this time a launch far from its roof is held by launch overhead and ramp-up (a kernel
// needs several microseconds to fill the GPU), not by its access pattern.
constexpr double kShortLaunch = 5e-6;
// The launch floor of a GPU whose spec has no measured one (launch_floor_us): no kernel's time,
// and so no lever's target, goes below it. 1 µs is under what was measured on the H200 (1.12 µs)
// and the H100 (1.44 µs; gpu_specs/), so that an assumed floor never hides a gain a measured one
// allows.
constexpr double kAssumedLaunchFloor = 1e-6;
// The same for a graph node (node_floor_us), whose time is its execution alone: under the
// shortest nodes measured, 0.67 µs on the H200 (2026-12-02) and 0.83 µs on the H100 (2026-12-07).
constexpr double kAssumedNodeFloor = 0.5e-6;
// A launch this long that keeps its busiest level below kWaitingShare of its bandwidth, and
// computes nothing the counters see, is waiting (on a flag, a clock, the host), not moving bytes.
constexpr double kWaitingTime = 100e-6;
constexpr double kWaitingShare = 1e-3;
// A pure read's time (the DRAM stream curve) is named in the evidence from this much above the
// row's bytes ÷ bandwidth on.
constexpr double kStreamAbove = 0.005;
// A memory-bound grid that occupies less than this share of the GPU's CTA slots (SMs × CTAs
// resident per SM), or leaves SMs without a CTA, keeps too few bytes in flight to reach the
// bandwidth: a decode kernel at a small batch without split-KV is the common case. Within
// kOccupiedSlack of either a grid is not called so: a grid of whole parts rounds down (on the
// H200 flash-decode's 128 CTAs on 132 SMs at d = 128, half of the slots less four, streamed a
// B1 KV 8k-128k cache as fast as or faster than 264: 2026-12-06).
constexpr double kOccupiedSlots = 0.5;
constexpr double kOccupiedSlack = 0.9;

// The grid's share of the CTA slots, where the grid and its occupancy are known; NaN otherwise.
double slot_share(const RowAnalysis& a) {
  if (!a.tail || a.tail->ctas_per_sm <= 0 || a.tail->sm_count <= 0) return kNaN;
  return static_cast<double>(a.tail->ctas) /
         (static_cast<double>(a.tail->sm_count) * a.tail->ctas_per_sm);
}

const KernelModel* bundled_model(const Row& row) {
  if (row.launch.has_value()) return nullptr;
  for (const KernelModel& model : kernel_models())
    if (model.name == row.kernel) return &model;
  return nullptr;
}

bool is_node(const Row& row) {
  return row.launch.has_value() && row.launch->is_graph_node();
}

// The shortest time a kernel takes on the GPU of `spec`, as `row` is timed: a launch from its
// submission, a graph node its execution alone (the spec's measured floor, else assumed).
double launch_floor_seconds(const GpuSpec& spec, const Row& row) {
  if (is_node(row)) return spec.node_floor_us > 0 ? spec.node_floor_us * 1e-6 : kAssumedNodeFloor;
  return spec.launch_floor_us > 0 ? spec.launch_floor_us * 1e-6 : kAssumedLaunchFloor;
}

std::string launch_floor_text(const GpuSpec& spec, const Row& row) {
  const bool node = is_node(row);
  const bool measured = (node ? spec.node_floor_us : spec.launch_floor_us) > 0;
  return std::string(node ? "no graph node runs in less than " : "no kernel takes less than ") +
         format_fixed(launch_floor_seconds(spec, row) * 1e6, 2) + " µs on " + spec.name +
         (measured ? ""
          : node   ? " (assumed: its spec has no measured node floor)"
                   : " (assumed: its spec has no measured launch floor)");
}

// The row's DRAM level, where its bytes are all counted; null otherwise.
const LevelAnalysis* whole_dram(const RowAnalysis& a) {
  for (const LevelAnalysis& level : a.levels)
    if (level.level == MemoryLevel::kDram && !level.partial) return &level;
  return nullptr;
}

// The least time a pure read of the row's DRAM bytes took on the spec's GPU (its stream curve,
// stream_floor.hpp), for a row timed as `run` times a launch (a profiled launch or graph node is
// timed by CUPTI's records, without the submission `run`'s events include); NaN otherwise.
double stream_seconds(const Row& row, const LevelAnalysis* dram_level, const GpuSpec& spec) {
  const MemoryLevelSpec* dram = spec.level(MemoryLevel::kDram);
  if (row.launch.has_value() || dram == nullptr || dram_level == nullptr) return kNaN;
  return stream_floor_seconds(*dram, dram_level->bytes);
}

double seconds(double amount, double rate) {
  return rate > 0 && std::isfinite(rate) && std::isfinite(amount) ? amount / rate : kNaN;
}

double max_finite(std::initializer_list<double> values) {
  double out = kNaN;
  for (double v : values)
    if (std::isfinite(v)) out = std::isfinite(out) ? std::max(out, v) : v;
  return out;
}

std::string times(double factor) {
  return "×" + format_fixed(factor, factor < 10 ? 2 : 1);
}

std::string tflops(double rate) {
  return format_fixed(rate / 1e12, 1) + " TFLOP/s";
}

// "warps stalled most on barrier (41% of 52k samples): waiting at a CTA barrier ..."
std::string stall_evidence(const StallSampling& s, const std::string& cause) {
  const StallReasonInfo* info = stall_reason_info(cause);
  return "warps stalled most on " + cause + " (" + format_fixed(100 * stall_share(s, cause), 0) +
         "% of " + format_si(static_cast<double>(s.samples)) + " samples)" +
         (info != nullptr ? std::string(": ") + info->meaning : std::string());
}

// The lever of the dominant stall (stall_lever: mbarrier waits have their own); a math pipe's
// throttle names the row's pipe.
std::string stall_action(const StallSampling& s, const std::string& cause, const RowAnalysis& a) {
  if (cause == "math_pipe_throttle")
    return "it is at the rate of a math pipe" +
           (a.ceiling != nullptr ? " (" + a.ceiling->label() + " or another the kernel uses)"
                                 : std::string()) +
           ": fewer instructions on that pipe, or another pipe";
  const std::string lever = stall_lever(s, cause);
  return !lever.empty() ? lever : "look at its hottest instructions (show --source)";
}

struct Roof {
  std::string label;
  double rate;  // FLOP/s; for rows without FLOPs, 1 / time floor
};

}  // namespace

const char* to_string(Lever lever) {
  switch (lever) {
    case Lever::kTail:
      return "more CTAs";
    case Lever::kFusion:
      return "fusion";
    case Lever::kReuse:
      return "reuse";
    case Lever::kTensorCores:
      return "tensor cores";
    case Lever::kWgmma:
      return "wgmma";
    case Lever::kOnChip:
      return "on-chip reuse";
    case Lever::kExp:
      return "fewer exp";
    case Lever::kBandwidth:
      return "bandwidth";
    case Lever::kOccupancy:
      return "bytes in flight";
    case Lever::kAtRoof:
      return "at roof";
    case Lever::kLatency:
      return "latency";
  }
  return "latency";
}

std::string Advice::line() const {
  std::string out = std::string(to_string(lever)) + ": " + evidence;
  if (!action.empty()) out += "; " + action;
  if (std::isfinite(estimated_speedup) && estimated_speedup > 1.005)
    out += "; up to " + times(estimated_speedup);
  for (const LeverAdvice& l : also) {
    out += ". Also " + std::string(to_string(l.lever)) + ": " + l.evidence;
    if (std::isfinite(l.estimated_speedup) && l.estimated_speedup > 1.005)
      out += "; up to " + times(l.estimated_speedup);
  }
  return out;
}

std::string Advice::brief() const {
  std::string out = to_string(lever);
  if (std::isfinite(estimated_speedup) && estimated_speedup > 1.005)
    out += " ≤" + times(estimated_speedup);
  for (const LeverAdvice& l : also) out += ", " + std::string(to_string(l.lever));
  return out;
}

std::optional<Advice> advise(const Row& row, const RowAnalysis& a, const GpuSpec& spec) {
  if (!a.has_verdict || !(a.time_seconds > 0) || !(a.time_floor_seconds > 0)) return std::nullopt;
  Advice v;
  v.roof = a.binding;
  v.of_roof = a.fraction_of_bound;
  const double launch_floor = launch_floor_seconds(spec, row);
  // A DRAM-bound row's floor is no lower than a pure read of its bytes took on this GPU: a roof
  // the read itself does not reach at this size promises no gain.
  const LevelAnalysis* dram_level = whole_dram(a);
  const double stream_floor = stream_seconds(row, dram_level, spec);
  const double roof_floor =
      a.binding == "DRAM" ? max_finite({a.time_floor_seconds, stream_floor}) : a.time_floor_seconds;
  v.gain_to_roof = a.time_seconds / std::max(roof_floor, launch_floor);
  const KernelModel* model = bundled_model(row);
  // The warp samples (--stalls), where there are enough to read shares from.
  const StallSampling* stalls =
      row.stalls && row.stalls->samples >= kStallSamplesForAdvice ? &*row.stalls : nullptr;

  // The roofs, lowest first, and the one above the binding roof.
  std::vector<Roof> roofs;
  if (!a.bandwidth_only) {
    if (a.ceiling != nullptr) roofs.push_back({a.ceiling->label(), a.peak_flops_per_second});
    if (std::isfinite(a.tail_roof_flops_per_second))
      roofs.push_back({"tail", a.tail_roof_flops_per_second});
    for (const LevelAnalysis& level : a.levels)
      if (!level.partial && std::isfinite(level.attainable_flops_per_second))
        roofs.push_back(
            {std::string(display_name(level.level)), level.attainable_flops_per_second});
    if (a.exp.present && std::isfinite(a.exp.roof_flops_per_second))
      roofs.push_back({kExpBinding, a.exp.roof_flops_per_second});
  } else {
    for (const LevelAnalysis& level : a.levels)
      if (!level.partial && level.time_floor_seconds > 0)
        roofs.push_back({std::string(display_name(level.level)), 1 / level.time_floor_seconds});
  }
  std::sort(roofs.begin(), roofs.end(),
            [](const Roof& x, const Roof& y) { return x.rate < y.rate; });
  v.next_roof_ratio = kNaN;
  for (const Roof& roof : roofs)
    if (roof.label != v.roof && !roofs.empty() && roof.rate > roofs.front().rate * (1 + 1e-9)) {
      v.next_roof = roof.label;
      v.next_roof_ratio = roof.rate / roofs.front().rate;
      break;
    }

  // Floors the levers leave in place.
  double dram_floor = kNaN, l2_floor = kNaN, l1_floor = kNaN;
  const LevelAnalysis* l1 = nullptr;
  for (const LevelAnalysis& level : a.levels) {
    if (level.level == MemoryLevel::kDram) dram_floor = level.time_floor_seconds;
    if (level.level == MemoryLevel::kL2) l2_floor = level.time_floor_seconds;
    if (level.level == MemoryLevel::kL1) {
      l1_floor = level.time_floor_seconds;
      l1 = &level;
    }
  }
  const double bandwidth_floor = dram_floor;
  dram_floor = max_finite({dram_floor, stream_floor});
  const double bytes_floor = max_finite({dram_floor, l2_floor, l1_floor});
  // The least work of the operation: what any kernel of it computes at least.
  const double work = model != nullptr && a.algorithmic_flops > 0 && std::isfinite(a.flops)
                          ? std::min(a.flops, a.algorithmic_flops)
                          : a.flops;
  const ComputePath tensor_path = a.ceiling != nullptr && is_tensor(a.ceiling->path)
                                      ? a.ceiling->path
                                      : ComputePath::kTensorFp16;
  const ComputeCeiling* best_tensor = spec.ceiling(tensor_path);  // highest peak of the path
  const double peak = a.peak_flops_per_second;
  const double dram_bw = a.dram() != nullptr ? a.dram()->peak_bandwidth_bytes_per_second : kNaN;
  const double compulsory = row.prediction.compulsory_dram_bytes;
  // On-chip reuse is a lever of kernels that compute (a copy's L1 traffic is its bytes).
  const bool l1_binds = a.binding == "L1" && l1 != nullptr && !l1->partial && !a.bandwidth_only;
  // L1 (with the full set's shared-memory wavefronts) leads only where the kernel is closer to it
  // than it is to the roof behind it; else that roof's levers lead and on-chip reuse follows.
  // The default set, which has no shared-memory count, then gives the same first lever.
  const bool l1_leads = l1_binds && !(a.fraction_of_bound * v.next_roof_ratio < 1);
  // The roof the levers below speak of: the binding one, or the one behind an L1 that does not
  // lead (its share: the kernel's rate over that roof).
  const bool behind_l1 = l1_binds && !l1_leads && !v.next_roof.empty();
  const std::string lead_roof = behind_l1 ? v.next_roof : a.binding;
  const double lead_fraction =
      behind_l1 ? a.fraction_of_bound / v.next_roof_ratio : a.fraction_of_bound;
  const bool lead_compute_bound =
      behind_l1 ? v.next_roof != "DRAM" && v.next_roof != "L2" : a.compute_bound;

  // Every lever the numbers point to, in order of priority; the first is the row's.
  std::vector<LeverAdvice> found;
  const auto add = [&](Lever lever, std::string evidence, std::string action, double target) {
    found.push_back({lever, std::move(evidence), std::move(action), target, 0});
  };
  // A lever that changes the pipe keeps the grid: the tail still scales its roof.
  const double busy =
      a.tail && a.tail->efficiency > 0 && a.tail->efficiency < 1 ? a.tail->efficiency : 1.0;
  // The tail leads only where it costs more than the distance left below its roof (a kernel at
  // 20% of a 79%-busy grid's roof is slow for other reasons): else the levers of the roof behind
  // it lead, and the tail follows them. Either way every counter set gets the same first lever,
  // since a roof that only the full set counts (shared memory) cannot push the tail first.
  const bool tail_leads = a.tail_bound && !(a.fraction_of_bound < busy);
  // How a grid gets more CTAs without more work: a bundled kernel is attention (its keys split);
  // a profiled one may be anything with a reduction (a GEMM's K, attention's keys).
  const std::string split =
      model != nullptr ? "split the keys (split-KV)" : "split the reduction (split-K, split-KV)";
  // More CTAs fill the idle SMs and nothing else: at most 1/busy, never past the roof behind.
  const auto add_tail = [&] {
    add(Lever::kTail, a.tail->describe(),
        "more CTAs: smaller tiles, " + split + " or a persistent schedule",
        max_finite({bytes_floor, seconds(a.flops, peak), a.time_seconds * busy}));
  };
  // Latency/occupancy-bound: the row's bytes at the full DRAM bandwidth take longer than its
  // least work at the compute of the SMs its grid keeps busy (so neither the pipe nor the tail
  // holds it), it reaches little of the bandwidth, and its grid fills few of the GPU's CTA
  // slots (SMs × CTAs resident per SM) or leaves SMs without a CTA: too few loads in flight.
  // More CTAs (split-KV for decode) is the lever, bounded by the DRAM roof; it replaces the
  // tail's, whose compute roof is not what holds such a grid.
  const double share = slot_share(a);
  // A short launch without a compute ceiling (an element-wise kernel of a few CTAs) is held by
  // its launch and ramp-up, and a long one that moves almost nothing and computes nothing waits:
  // the latency levers below, not more CTAs.
  const bool computes = !a.bandwidth_only && a.flops > 0;
  const bool waiting = !computes && a.time_seconds >= kWaitingTime && lead_fraction < kWaitingShare;
  const bool short_without_pipe = a.ceiling == nullptr && a.time_seconds < kShortLaunch;
  const bool occupancy =
      dram_level != nullptr && !short_without_pipe && !waiting &&
      (a.bandwidth_only || !(work > 0) || seconds(work, peak * busy) < dram_floor) &&
      dram_level->bandwidth_utilisation < kAtRoof && std::isfinite(share) &&
      (share < kOccupiedSlots * kOccupiedSlack ||
       static_cast<double>(a.tail->ctas) < kOccupiedSlack * a.tail->sm_count);
  if (occupancy)
    add(Lever::kOccupancy,
        "latency/occupancy-bound: DRAM at " +
            format_fixed(100 * dram_level->bandwidth_utilisation, 0) + "% of its bandwidth with " +
            std::to_string(a.tail->ctas) + (a.tail->ctas == 1 ? " CTA" : " CTAs") + " for " +
            std::to_string(std::int64_t{a.tail->sm_count} * a.tail->ctas_per_sm) + " CTA slots (" +
            std::to_string(a.tail->ctas_per_sm) + " per SM on " + std::to_string(a.tail->sm_count) +
            " SMs, " + format_fixed(100 * share, 0) + "% occupied): too few bytes in flight",
        "more CTAs: " + split +
            " or smaller tiles; or more bytes in flight per CTA (deeper load pipelines, 16-byte "
            "loads)",
        max_finite({dram_floor, l2_floor}));
  else if (tail_leads)
    add_tail();
  if (model != nullptr && model->family == KernelFamily::kStandard)
    add(Lever::kFusion,
        "DRAM moves " + times(a.dram()->bytes / compulsory) + " the compulsory bytes (" +
            format_si(a.dram()->bytes) + "B against " + format_si(compulsory) +
            "B): S and P go through DRAM between its kernels",
        "one fused kernel (FlashAttention) keeps them on chip",
        max_finite(
            {seconds(compulsory, dram_bw),
             seconds(work, best_tensor != nullptr ? best_tensor->peak_tflops * 1e12 : peak)}));
  if (!a.bandwidth_only && a.ceiling != nullptr && !is_tensor(a.ceiling->path) &&
      model != nullptr && best_tensor != nullptr)
    add(Lever::kTensorCores,
        "its FLOPs run on " + a.ceiling->label() + " (" + tflops(peak) + "); " +
            best_tensor->label() + " peaks at " + tflops(best_tensor->peak_tflops * 1e12) + " (" +
            times(best_tensor->peak_tflops * 1e12 / peak) + ")",
        "the matrix products on tensor cores",
        max_finite({dram_floor, l2_floor, seconds(work, best_tensor->peak_tflops * 1e12 * busy)}));
  const ComputeCeiling* wgmma =
      a.ceiling != nullptr ? spec.ceiling(a.ceiling->path, TensorInstruction::kWgmma) : nullptr;
  // Compute-bound, or bound by the on-chip traffic mma.sync's operand loads make (what the full
  // counter set's shared-memory wavefronts show): the same lever under every counter set.
  if (!a.bandwidth_only && (a.compute_bound || l1_binds) && !occupancy && a.ceiling != nullptr &&
      a.ceiling->instruction == TensorInstruction::kMmaSync && wgmma != nullptr &&
      wgmma->peak_tflops > a.ceiling->peak_tflops)
    // wgmma reads its operands from shared memory, past the L1 counters: DRAM and L2 remain.
    add(Lever::kWgmma,
        "mma.sync's roof is " + tflops(peak) + ", wgmma's " + tflops(wgmma->peak_tflops * 1e12) +
            " (" + times(wgmma->peak_tflops * 1e12 / peak) + ")",
        "warpgroup MMA (wgmma) fed by TMA",
        max_finite({dram_floor, l2_floor, seconds(work, wgmma->peak_tflops * 1e12 * busy)}));
  if (a.binding == "DRAM" && model != nullptr && model->family == KernelFamily::kFlash &&
      a.dram_bytes_vs_compulsory > kReuseFactor)
    add(Lever::kReuse, "DRAM moves " + times(a.dram_bytes_vs_compulsory) + " the compulsory bytes",
        "larger tiles or an L2-friendly order, so that K and V are read once",
        max_finite({seconds(compulsory, dram_bw), l2_floor, l1_floor, seconds(a.flops, peak)}));
  const auto add_on_chip = [&] {
    add(Lever::kOnChip,
        "L1 moves " + times(l1->bytes / a.dram()->bytes) + " the DRAM bytes, at " +
            format_fixed(100 * l1->bandwidth_utilisation, 0) + "% of its bandwidth",
        "fewer on-chip reads per FLOP: operands kept in registers, larger MMA tiles",
        max_finite({dram_floor, l2_floor, seconds(a.flops, peak)}));
  };
  if (l1_leads) add_on_chip();
  if (a.exp_bound && a.exp.present)
    // The floor without the exponential roof: the pipe's and the memory levels'.
    add(Lever::kExp,
        "the exponential unit binds: " + format_si(a.exp.exponentials) + " exp2 at " +
            format_fixed(a.exp.flops_per_exponential, 0) + " FLOPs each, a roof of " +
            tflops(a.exp.roof_flops_per_second) + " under the " + tflops(peak) + " of " +
            (a.ceiling != nullptr ? a.ceiling->label() : std::string("the pipe")),
        "fewer MUFU exponentials per FLOP: part of them as a polynomial on the FMA pipe, or "
        "the softmax of one tile overlapped with the other's matrix products",
        max_finite({bytes_floor, seconds(a.flops, peak * busy)}));
  if (found.empty()) {
    // No specific lever: how far from its roof the row is says what kind of work is left.
    if (a.time_seconds < kShortLaunch && lead_fraction < kBandwidthLever)
      add(Lever::kLatency,
          std::string(is_node(row) ? "a graph node of " : "a launch of ") +
              format_fixed(a.time_seconds * 1e6, 1) + " µs at " +
              format_fixed(100 * lead_fraction, 0) + "% of " + lead_roof +
              ": at this size the launch and the ramp-up dominate (" +
              launch_floor_text(spec, row) + ")",
          "fewer, larger launches: fuse it with its neighbours", roof_floor);
    else if (waiting)
      // No roof applies: the time is spent waiting, and no lever on bytes or FLOPs shortens it.
      add(Lever::kLatency,
          format_fixed(a.time_seconds * 1e6, 0) + " µs at " + format_fixed(100 * lead_fraction, 2) +
              "% of " + lead_roof +
              ", computing nothing the counters see: it waits (on a flag, a clock or the host)",
          "find what it waits for (its warp stalls, the work it waits on): no roof applies",
          a.time_seconds);
    else if (!lead_compute_bound && lead_fraction < kAtRoof)
      add(Lever::kBandwidth,
          lead_roof + " at " + format_fixed(100 * lead_fraction, 0) + "% of its bandwidth",
          "coalesced, vectorised accesses and more bytes in flight, or fewer bytes by fusing "
          "with its neighbours",
          roof_floor);
    else if (lead_fraction >= kAtRoof)
      add(Lever::kAtRoof, "at " + format_fixed(100 * lead_fraction, 0) + "% of " + lead_roof,
          v.next_roof.empty() ? "only less work helps"
                              : "only less work or a higher roof helps (next: " + v.next_roof +
                                    ", " + times(v.next_roof_ratio) + ")",
          roof_floor);
    else if (const std::string cause = stalls != nullptr ? dominant_stall(*stalls) : "";
             !cause.empty())
      // The warp samples say why it is below its roof: the cause and the lever that fits it.
      add(Lever::kLatency,
          "at " + format_fixed(100 * lead_fraction, 0) + "% of " + lead_roof + "; " +
              stall_evidence(*stalls, cause),
          stall_action(*stalls, cause, a), roof_floor);
    else
      add(Lever::kLatency,
          "at " + format_fixed(100 * lead_fraction, 0) + "% of " + lead_roof +
              ", and no counter points elsewhere",
          "latency, occupancy or synchronisation: sample the warp stalls (run --stalls; profile "
          "--stalls for another program)",
          roof_floor);
  }
  // Every other lever keeps its evidence and gains the samples' (they add, never decide).
  if (stalls != nullptr && found.front().lever != Lever::kLatency)
    if (const std::string cause = dominant_stall(*stalls); !cause.empty())
      found.front().evidence += "; " + stall_evidence(*stalls, cause);
  if (behind_l1) add_on_chip();
  if (a.tail_bound && !tail_leads && !occupancy) add_tail();
  for (LeverAdvice& l : found) {
    if (!(l.target_time_seconds > 0)) l.target_time_seconds = roof_floor;
    l.target_time_seconds = std::max(l.target_time_seconds, launch_floor);
    l.estimated_speedup = std::max(1.0, a.time_seconds / l.target_time_seconds);
  }
  // Where the pure read's time is the target, the evidence says so: the roof alone would promise
  // more.
  LeverAdvice& lead = found.front();
  if (std::isfinite(stream_floor) && stream_floor > bandwidth_floor * (1 + kStreamAbove) &&
      std::abs(lead.target_time_seconds - stream_floor) <= 1e-9 * stream_floor)
    lead.evidence += "; a pure read of its " + format_si(dram_level->bytes) + "B took " +
                     format_fixed(stream_floor * 1e6, 1) + " µs on this GPU (" +
                     format_fixed(100 * bandwidth_floor / stream_floor, 0) +
                     "% of the bandwidth: calibrate's stream), the least it can take";
  const LeverAdvice& first = found.front();
  v.lever = first.lever;
  v.evidence = first.evidence;
  v.action = first.action;
  v.target_time_seconds = first.target_time_seconds;
  v.estimated_speedup = first.estimated_speedup;
  v.also.assign(found.begin() + 1, found.end());
  return v;
}

}  // namespace roofline
