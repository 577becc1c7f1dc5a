#include "lib/core/domain/stalls.hpp"

#include <algorithm>
#include <cmath>
#include <tuple>

namespace roofline {
namespace {

// Nsight Compute's warp stall reasons (Kernel Profiling Guide, "Warp Stall Reasons"), with the
// lever each points to.
constexpr StallReasonInfo kReasons[] = {
    {"barrier", "waiting at a CTA barrier for its sibling warps",
     "fewer barriers or less work between them done by some warps only: balance the warps, "
     "deepen the pipeline, or specialise warps (producer and consumer) with mbarriers"},
    {"branch_resolving", "waiting for a branch target or divergent branch to resolve",
     "fewer divergent branches: uniform control flow, predication"},
    {"dispatch_stall", "the dispatcher held the instruction back",
     "a pipeline conflict in the dispatcher: rare; look at the hottest instruction"},
    {"drain", "waiting at exit for its memory writes to drain",
     "fewer, larger stores at the end, or more work per CTA"},
    {"imc_miss", "waiting on the immediate constant cache",
     "fewer divergent constant-memory reads"},
    {"lg_throttle", "the local/global memory instruction queue is full",
     "fewer, wider global accesses (vector loads) and no local-memory spills"},
    {"long_scoreboard", "waiting on a global or local memory load (L1TEX)",
     "more bytes in flight: loads issued earlier, TMA or cp.async into shared memory, more "
     "warps or more independent loads per warp"},
    {"math_pipe_throttle", "a math pipe is busy: the warp's next instruction waits for it",
     "the kernel is at that pipe's rate: fewer instructions on it, or another pipe"},
    {"membar", "waiting on a memory barrier (fence)", "fewer or narrower fences"},
    {"mio_throttle", "the memory input/output queue is full (shared memory, special functions)",
     "fewer shared-memory instructions per FLOP (wider, conflict-free accesses, operands kept "
     "in registers) or fewer MUFU operations"},
    {"misc", "a miscellaneous hardware reason", "look at the hottest instruction"},
    {"no_instructions", "no instruction fetched: instruction cache miss or a jump",
     "smaller hot loops (less unrolling) or fewer jumps"},
    {"not_selected", "ready, but another warp was picked to issue",
     "none needed: enough warps are ready; the issue slot is the limit"},
    {"selected", "issuing an instruction", "none: this is the work itself"},
    {"short_scoreboard", "waiting on a shared-memory or special-function (MUFU) result",
     "fewer shared-memory round trips or MUFU operations per FLOP, bank conflicts removed"},
    {"sleeping", "sleeping (nanosleep) or yielding", "less time spent waiting on a flag"},
    {"tex_throttle", "the texture queue is full", "fewer texture or surface accesses"},
    {"warpgroup_arrive", "waiting at a warpgroup arrive (the fence before a wgmma)",
     "fewer wgmma fences: larger or fewer warpgroup MMA batches, accumulators not read between "
     "them"},
    {"wait", "waiting on a fixed-latency dependency",
     "more independent instructions between a result and its use (ILP, unrolling)"},
};

constexpr std::string_view kCuptiPrefix = "smsp__pcsamp_warps_issue_stalled_";
constexpr std::string_view kNotIssued = "_not_issued";

}  // namespace

double stall_share(const StallSampling& s, std::string_view reason) {
  if (s.samples == 0) return 0;
  const auto it = s.reasons.find(std::string(reason));
  return it == s.reasons.end() ? 0
                               : static_cast<double>(it->second) / static_cast<double>(s.samples);
}

std::string dominant_stall(const StallSampling& s) {
  std::string best;
  std::uint64_t most = 0;
  for (const auto& [name, samples] : s.reasons)
    if (name != "selected" && samples > most) {
      best = name;
      most = samples;
    }
  return best;
}

double stall_half_width(const StallSampling& s) {
  return s.samples > 0 ? 0.98 / std::sqrt(static_cast<double>(s.samples)) : 1.0;
}

std::string stall_lever(const StallSampling& s, std::string_view reason) {
  const StallReasonInfo* info = stall_reason_info(reason);
  if (info == nullptr) return "";
  if (reason != "long_scoreboard") return info->lever;
  std::uint64_t listed = 0, on_barriers = 0;
  for (const StallInstruction& i : s.hottest) {
    if (i.reason != reason) continue;
    listed += i.samples;
    if (!i.waits_on.empty()) on_barriers += i.samples;
  }
  if (listed == 0 || 2 * on_barriers <= listed) return info->lever;
  return "its warps wait on mbarriers (SYNCS.PHASECHK) for asynchronous copies (TMA) to land or "
         "other warps to arrive: more copies in flight (more stages or CTAs per SM), fewer bytes, "
         "or a producer that issues earlier";
}

const StallReasonInfo* stall_reason_info(std::string_view name) {
  for (const StallReasonInfo& info : kReasons)
    if (name == info.name) return &info;
  return nullptr;
}

std::string ncu_stall_name(std::string_view cupti_name) {
  std::string_view name = cupti_name;
  if (name.size() >= kNotIssued.size() &&
      name.substr(name.size() - kNotIssued.size()) == kNotIssued)
    return "";
  // Not a reason: smsp__pcsamp_sample_count, smsp__pcsamp_samples_data_dropped.
  if (name.substr(0, kCuptiPrefix.size()) != kCuptiPrefix) return "";
  name.remove_prefix(kCuptiPrefix.size());
  return std::string(name);
}

std::map<std::string, std::uint64_t> ncu_stall_reasons(
    const std::map<std::string, std::uint64_t>& cupti_reasons) {
  std::map<std::string, std::uint64_t> out;
  for (const auto& [name, samples] : cupti_reasons)
    if (std::string reason = ncu_stall_name(name); !reason.empty()) out[reason] += samples;
  return out;
}

int stall_period_log2(double seconds, double clock_mhz, int sms, double target) {
  const double cycles = seconds * clock_mhz * 1e6 * std::max(sms, 1);
  if (!(cycles > 0) || !(target > 0)) return 5;
  return std::clamp(static_cast<int>(std::floor(std::log2(cycles / target))), 5, 31);
}

int stall_period_on_grid(int period_log2) {
  constexpr int kMin = 5, kStep = 3;
  const int p = std::clamp(period_log2, kMin, 31);
  return kMin + (p - kMin) / kStep * kStep;
}

StallSampling summarize_stalls(const std::vector<PcSample>& pcs, int period_log2,
                               std::uint64_t dropped) {
  StallSampling out;
  out.period_log2 = period_log2;
  out.dropped = dropped;
  std::map<std::tuple<std::string, int>, std::map<std::string, std::uint64_t>> by_line;
  bool unlined = false, unlisted = false;
  for (const PcSample& pc : pcs) {
    StallInstruction ins;
    ins.function = pc.function;
    ins.pc_offset = pc.pc_offset;
    ins.sass = pc.sass;
    ins.waits_on = pc.waits_on;
    ins.file = pc.file;
    ins.line = pc.line;
    std::uint64_t most = 0;
    for (const auto& [reason, samples] : pc.reasons) {
      out.reasons[reason] += samples;
      out.samples += samples;
      ins.samples += samples;
      if (samples > most) {
        most = samples;
        ins.reason = reason;
      }
      if (!pc.file.empty()) by_line[{pc.file, pc.line}][reason] += samples;
    }
    if (ins.samples == 0) continue;
    unlined = unlined || pc.file.empty();
    unlisted = unlisted || pc.sass.empty();
    out.hottest.push_back(std::move(ins));
  }
  const auto hotter = [](const auto& a, const auto& b) {
    return a.samples != b.samples ? a.samples > b.samples : a.pc_offset < b.pc_offset;
  };
  std::sort(out.hottest.begin(), out.hottest.end(), hotter);
  if (out.hottest.size() > kStallListed) out.hottest.resize(kStallListed);
  for (const auto& [where, reasons] : by_line) {
    StallLine line{std::get<0>(where), std::get<1>(where), 0, ""};
    std::uint64_t most = 0;
    for (const auto& [reason, samples] : reasons) {
      line.samples += samples;
      if (samples > most) {
        most = samples;
        line.reason = reason;
      }
    }
    out.lines.push_back(std::move(line));
  }
  std::stable_sort(out.lines.begin(), out.lines.end(),
                   [](const StallLine& a, const StallLine& b) { return a.samples > b.samples; });
  if (out.lines.size() > kStallListed) out.lines.resize(kStallListed);
  std::vector<std::string> notes;
  if (unlined) notes.push_back("some instructions have no line information");
  if (unlisted) notes.push_back("some instructions were not disassembled");
  for (std::size_t i = 0; i < notes.size(); ++i) out.note += (i ? "; " : "") + notes[i];
  return out;
}

StallSampling stall_sampling_of(const std::vector<PcSample>& pcs, int period_log2,
                                const StallRangeTotals& totals,
                                const std::vector<std::string>& notes) {
  StallSampling s = summarize_stalls(pcs, period_log2, totals.dropped);
  std::vector<std::string> all;
  if (!s.note.empty()) all.push_back(s.note);
  if (totals.buffer_full) all.push_back("the hardware buffer filled: samples lost");
  if (pcs.empty())
    all.push_back("no PC records: " + std::to_string(totals.total) + " samples in all, " +
                  std::to_string(totals.non_user) + " in kernels CUPTI does not attribute");
  for (const std::string& note : notes)
    if (!note.empty() && std::find(all.begin(), all.end(), note) == all.end()) all.push_back(note);
  s.note.clear();
  for (std::size_t i = 0; i < all.size(); ++i) s.note += (i ? "; " : "") + all[i];
  return s;
}

std::string stall_brief(const StallSampling& s) {
  const std::string name = dominant_stall(s);
  if (name.empty()) return "";
  return name + " " + std::to_string(static_cast<int>(std::lround(100 * stall_share(s, name)))) +
         "%";
}

}  // namespace roofline
