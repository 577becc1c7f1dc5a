#include "lib/core/model/tail_effect.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <queue>
#include <tuple>
#include <vector>

#include "kernels/decode_plan.hpp"
#include "lib/core/base/text.hpp"
#include "lib/core/model/model.hpp"
#include "lib/core/model/model_decode.hpp"

namespace roofline {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

std::int64_t ceil_div(std::int64_t a, std::int64_t b) {
  return (a + b - 1) / b;
}

// The makespan bound of the header, in the CTAs' work units, for unequal CTAs given as
// (work, count) groups.
double makespan_bound(std::vector<std::pair<double, std::int64_t>> groups, int sms) {
  std::sort(groups.begin(), groups.end(), std::greater<>());  // largest work first
  // ends[j]: CTAs in groups 0..j; sums[j]: their work.
  std::vector<std::int64_t> ends;
  std::vector<double> sums;
  std::int64_t n = 0;
  double total = 0;
  for (const auto& [work, count] : groups) {
    n += count;
    total += work * static_cast<double>(count);
    ends.push_back(n);
    sums.push_back(total);
  }
  // Work of the i largest CTAs.
  const auto prefix = [&](std::int64_t i) {
    if (i <= 0) return 0.0;
    const auto j =
        static_cast<std::size_t>(std::lower_bound(ends.begin(), ends.end(), i) - ends.begin());
    const double before = j == 0 ? 0.0 : sums[j - 1];
    const std::int64_t start = j == 0 ? 0 : ends[j - 1];
    return before + groups[j].first * static_cast<double>(i - start);
  };
  double bound = std::max(total / sms, groups.front().first);
  for (std::int64_t k = 1; k * sms < n; ++k) {
    // The k + 1 smallest of the k·m + 1 largest: positions k·m − k .. k·m (from 0).
    const std::int64_t last = k * sms;
    bound = std::max(bound, prefix(last + 1) - prefix(last - k));
  }
  return bound;
}

}  // namespace

std::string TailEffect::describe() const {
  std::string out = std::to_string(ctas) + (ctas == 1 ? " CTA" : " CTAs");
  if (ctas_per_sm > 0) out += " (" + std::to_string(ctas_per_sm) + " per SM)";
  out += " on " + std::to_string(sm_count) + " SMs";
  if (waves > 0)
    out += ": " + std::to_string(waves) + (waves == 1 ? " wave" : " waves") +
           (waves > 1 && last_wave_fill < 1
                ? ", the last " + format_fixed(100 * last_wave_fill, 0) + "% full"
                : "");
  out += ", " + format_fixed(100 * efficiency, 0) + "% busy";
  if (!equal_work) out += " (CTAs of unequal work)";
  return out;
}

std::string TailEffect::brief() const {
  return std::to_string(ctas) + (ctas == 1 ? " CTA" : " CTAs") + " on " + std::to_string(sm_count) +
         " SMs, " + format_fixed(100 * efficiency, 0) + "% busy";
}

TailEffect tail_effect(const LaunchGrid& grid, int sm_count) {
  TailEffect t;
  t.ctas = grid.ctas;
  t.sm_count = sm_count;
  t.ctas_per_sm = grid.ctas_per_sm;
  t.origin = grid.origin;
  if (grid.ctas <= 0 || sm_count <= 0) {
    t.efficiency = kNaN;
    return t;
  }
  if (grid.ctas_per_sm > 0) {
    const std::int64_t slots = static_cast<std::int64_t>(sm_count) * grid.ctas_per_sm;
    t.waves = ceil_div(grid.ctas, slots);
    t.last_wave_fill =
        static_cast<double>(grid.ctas - (t.waves - 1) * slots) / static_cast<double>(slots);
  } else {
    t.last_wave_fill = kNaN;
  }
  t.equal_work = grid.cta_work.size() <= 1;
  if (t.equal_work) {
    const std::int64_t per_sm = ceil_div(grid.ctas, sm_count);
    t.efficiency = static_cast<double>(grid.ctas) / (static_cast<double>(per_sm) * sm_count);
  } else {
    double total = 0;
    for (const auto& [work, count] : grid.cta_work) total += work * static_cast<double>(count);
    t.efficiency = total / (sm_count * makespan_bound(grid.cta_work, sm_count));
  }
  return t;
}

double co_resident_rate(int resident, int slots) {
  if (resident <= 0) return 0;
  return std::sqrt(static_cast<double>(resident) / std::max(1, slots));
}

double launch_order_efficiency(const LaunchGrid& grid, int sm_count) {
  if (grid.launch_order.empty() || grid.ctas <= 0 || sm_count <= 0) return kNaN;
  const int slots = std::max(1, grid.ctas_per_sm);
  const auto work_of = [&](std::int64_t i) {
    return grid.launch_order[static_cast<std::size_t>(i) % grid.launch_order.size()];
  };
  // Each SM's resident CTAs (their work left) and when it was last brought up to date; its
  // CTAs progress alike, each at co_resident_rate(j) ÷ j of the SM's rate with j resident.
  struct Sm {
    std::vector<double> left;
    double at = 0;
    std::uint64_t version = 0;
  };
  std::vector<Sm> sms(static_cast<std::size_t>(sm_count));
  // (the time its next CTA ends, SM, the SM's version then): a changed SM pushes a new one.
  using Event = std::tuple<double, int, std::uint64_t>;
  std::priority_queue<Event, std::vector<Event>, std::greater<>> ends;
  const auto schedule = [&](int s) {
    Sm& sm = sms[static_cast<std::size_t>(s)];
    ++sm.version;
    if (sm.left.empty()) return;
    const int j = static_cast<int>(sm.left.size());
    const double per_cta = co_resident_rate(j, slots) / j;
    ends.emplace(sm.at + *std::min_element(sm.left.begin(), sm.left.end()) / per_cta, s,
                 sm.version);
  };
  // The first CTAs spread over the SMs, one each before any gets a second (as the hardware
  // dispatches a grid); then each freed slot takes the next CTA in launch order.
  std::int64_t next = 0;
  double total = 0, makespan = 0;
  for (int round = 0; round < slots && next < grid.ctas; ++round)
    for (int s = 0; s < sm_count && next < grid.ctas; ++s, ++next) {
      sms[static_cast<std::size_t>(s)].left.push_back(work_of(next));
      total += work_of(next);
    }
  for (int s = 0; s < sm_count; ++s) schedule(s);
  while (!ends.empty()) {
    const auto [t, s, version] = ends.top();
    ends.pop();
    Sm& sm = sms[static_cast<std::size_t>(s)];
    if (version != sm.version) continue;  // the SM changed since
    const int j = static_cast<int>(sm.left.size());
    const double done = (t - sm.at) * co_resident_rate(j, slots) / j;
    for (double& left : sm.left) left -= done;
    // The CTA that ended (and any that ended with it, within rounding).
    const double eps = 1e-12 * std::max(1.0, t);
    sm.left.erase(
        std::remove_if(sm.left.begin(), sm.left.end(), [&](double left) { return left <= eps; }),
        sm.left.end());
    sm.at = t;
    makespan = std::max(makespan, t);
    while (static_cast<int>(sm.left.size()) < slots && next < grid.ctas) {
      sm.left.push_back(work_of(next));
      total += work_of(next);
      ++next;
    }
    schedule(s);
  }
  return makespan > 0 ? total / (sm_count * makespan) : kNaN;
}

int resident_ctas_per_sm(const SmLimits& limits, std::int64_t threads_per_cta,
                         int registers_per_thread, std::int64_t shared_bytes_per_cta) {
  if (limits.max_threads <= 0 || threads_per_cta <= 0 || threads_per_cta > limits.max_threads)
    return 0;
  const std::int64_t warps = ceil_div(threads_per_cta, 32);
  std::int64_t ctas = std::min<std::int64_t>(limits.max_ctas, limits.max_threads / (warps * 32));
  if (registers_per_thread > 0) {
    // Registers are allocated per warp, in units of 256.
    const std::int64_t per_warp = ceil_div(std::int64_t{registers_per_thread} * 32, 256) * 256;
    ctas = std::min(ctas, (limits.registers / per_warp) / warps);
  }
  if (limits.shared_bytes > 0) {
    const std::int64_t per_cta = shared_bytes_per_cta + limits.reserved_shared_per_cta;
    if (per_cta > 0) ctas = std::min(ctas, limits.shared_bytes / per_cta);
  }
  return static_cast<int>(std::max<std::int64_t>(ctas, 0));
}

namespace {

// flash-decode's grid: every CTA one (sequence, KV head, row block, part).
std::optional<LaunchGrid> decode_grid(const KernelModel& model, const Workload& w, int sm_count) {
  const int parts = decode_parts(w, sm_count);
  const std::int64_t per_sequence = decode_ctas(w, sm_count) / w.batch;
  LaunchGrid grid;
  grid.ctas = decode_ctas(w, sm_count);
  grid.ctas_per_sm = kernels::decode_ctas_per_sm(w.head_dim);
  grid.origin = model.name + "'s grid (sequences × KV heads × row blocks × " +
                std::to_string(parts) + (parts == 1 ? " part)" : " split-KV parts)");
  // Key tiles of each part: equal parts of equal sequences, else one group per (sequence, part).
  std::vector<std::pair<double, std::int64_t>> work;
  for (int b = 0; b < w.batch; ++b) {
    const int n = w.kv_len(b);
    const int per_part = kernels::decode_keys_per_split(n, parts);
    for (int s = 0; s < parts; ++s) {
      const int keys = std::clamp(n - s * per_part, 0, per_part);
      work.emplace_back(std::ceil(static_cast<double>(keys) / kernels::kDecodeKeysPerTile),
                        per_sequence / parts);
    }
  }
  std::sort(work.begin(), work.end());
  std::vector<std::pair<double, std::int64_t>> merged;
  for (const auto& [tiles, count] : work) {
    if (!merged.empty() && merged.back().first == tiles)
      merged.back().second += count;
    else
      merged.emplace_back(tiles, count);
  }
  if (merged.size() > 1) grid.cta_work = std::move(merged);
  return grid;
}

}  // namespace

std::optional<LaunchGrid> bundled_grid(const KernelModel& model, const Workload& w, int sm_count) {
  if (model.family == KernelFamily::kDecode) return decode_grid(model, w, sm_count);
  if (model.family != KernelFamily::kFlash) return std::nullopt;
  const TileShape tiles = model.tiles(w.head_dim);
  const bool forward = w.pass == Pass::kForward;
  // Forward: one CTA per query tile; backward: one per key tile (flash-v1 launches a second,
  // query-tile grid of the same size for dQ).
  const int own = forward ? tiles.fwd_block_q : tiles.bwd_block_kv;
  const int other = forward ? tiles.fwd_block_kv : tiles.bwd_block_q;
  if (own <= 0 || other <= 0) return std::nullopt;
  const std::int64_t tiles_own = ceil_div(w.seq_len, own);
  const std::int64_t tiles_other = ceil_div(w.seq_len, other);
  const std::int64_t heads = static_cast<std::int64_t>(w.batch) * w.heads;
  LaunchGrid grid;
  grid.ctas = tiles_own * heads;
  grid.ctas_per_sm = forward ? tiles.fwd_ctas_per_sm : tiles.bwd_ctas_per_sm;
  grid.origin = model.name + (forward ? "'s forward grid (query tiles × B·H)"
                                      : "'s backward grid (key tiles × B·H)");
  if (!w.causal) grid.launch_order = {1.0};  // equal CTAs
  if (w.causal) {
    // Tile pairs each CTA computes: forward, the key tiles up to its last query row; backward,
    // the query tiles from its first key on.
    std::vector<std::pair<double, std::int64_t>> work;
    for (std::int64_t i = 0; i < tiles_own; ++i) {
      const std::int64_t first = i * own;
      const std::int64_t end = std::min<std::int64_t>((i + 1) * own, w.seq_len);
      const double pairs = forward ? static_cast<double>(ceil_div(end, other))
                                   : static_cast<double>(tiles_other - first / other);
      work.emplace_back(pairs, heads);  // the same tile of every head
    }
    for (const auto& [pairs, count] : work) grid.launch_order.push_back(pairs);
    std::sort(grid.launch_order.begin(), grid.launch_order.end(), std::greater<>());
    grid.cta_work = std::move(work);
  }
  return grid;
}

std::optional<LaunchGrid> launch_grid(const KernelLaunch& launch, const GpuSpec& spec) {
  if (launch.graph) return std::nullopt;
  LaunchGrid grid;
  grid.ctas = std::int64_t{launch.grid[0]} * launch.grid[1] * launch.grid[2];
  if (grid.ctas <= 0) return std::nullopt;
  grid.origin = "the launch's grid";
  if (spec.sm_limits)
    grid.ctas_per_sm = resident_ctas_per_sm(
        *spec.sm_limits, std::int64_t{launch.block[0]} * launch.block[1] * launch.block[2],
        launch.registers_per_thread, launch.static_shared_bytes + launch.dynamic_shared_bytes);
  return grid;
}

}  // namespace roofline
