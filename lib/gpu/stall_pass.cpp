#include "lib/gpu/stall_pass.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>

#include <spdlog/spdlog.h>

#include "kernels/context_sms.hpp"
#include "lib/core/base/text.hpp"
#include "lib/core/domain/stalls.hpp"
#include "lib/gpu/cuda_check.hpp"
#include "lib/gpu/cupti/cubin_catalog.hpp"
#include "lib/gpu/cupti/pc_sampler.hpp"
#include "lib/gpu/range_profiler.hpp"
#include "lib/gpu/stall_sources.hpp"

namespace roofline::gpu {
namespace {

// A sampled point whose SASS is not read yet.
struct PendingPoint {
  std::size_t row = 0;
  int period = 0;
  StallRangeTotals totals;
  std::vector<PcSample> pcs;
};

}  // namespace

StallSetup::StallSetup() {
  try {
    catalog_ = std::make_unique<cupti::CubinCatalog>();
  } catch (const ProfilerError& error) {
    why_ = first_line(error.what());
  }
}

StallSetup::~StallSetup() = default;

void collect_stalls(RunResult& result, PointLauncher& launcher, const RunOptions& options,
                    const StallSetup& setup) {
  using Clock = std::chrono::steady_clock;
  const auto t0 = Clock::now();
  std::string provenance;
  double sampling_s = 0;
  try {
    cupti::PcSampler sampler;
    const cupti::CubinCatalog* catalog = setup.catalog();
    StallSources sources([catalog](std::uint64_t crc) {
      return catalog != nullptr ? catalog->cubin(crc) : nullptr;
    });
    std::vector<PendingPoint> pending;
    // Every point's period first, then the points sampled in the order of their periods (the
    // sampler sets the period only when it changes), each point's functions' SASS requested as
    // its samples come.
    std::vector<std::pair<int, std::size_t>> order;
    // The SMs the launches run on: a green context's share under --sms.
    int sms = 0;
    ROOFLINE_CUDA_CALL(kernels::current_context_sms(&sms));
    for (std::size_t i = 0; i < result.rows.size(); ++i) {
      const Row& row = result.rows[i];
      if (row.status != RowStatus::kOk || !row.timing) continue;
      const double clock =
          row.timing->sm_clock_mhz() > 0 ? row.timing->sm_clock_mhz() : kStallAssumedClockMhz;
      order.emplace_back(
          stall_period_log2(row.timing->median_seconds(), clock, sms, options.stall_samples), i);
    }
    std::stable_sort(order.begin(), order.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    std::size_t done = 0;
    for (const auto& [period, i] : order) {
      Row& row = result.rows[i];
      if (options.progress)
        options.progress("stalls: point " + std::to_string(++done) + "/" +
                         std::to_string(order.size()));
      launcher.prepare_again(i);
      launcher.flush_l2();
      PendingPoint point;
      point.row = i;
      point.period = period;
      cupti::SampledRange range;
      try {
        const auto t = Clock::now();
        range = sampler.sample(period, [&] { launcher.launch(i); });
        sampling_s += std::chrono::duration<double>(Clock::now() - t).count();
      } catch (const ProfilerError& error) {
        StallSampling failed;
        failed.period_log2 = period;
        failed.note = "not sampled: " + first_line(error.what());
        row.stalls = std::move(failed);
        continue;
      }
      point.totals = stall_totals_of(range);
      point.pcs = pc_samples_of(range);
      sources.request(point.pcs);
      pending.push_back(std::move(point));
    }
    launcher.arena().release();
    // Then each point's instructions, once their listings are in.
    for (PendingPoint& point : pending) {
      sources.fill(point.pcs);
      std::vector<std::string> notes;
      if (catalog == nullptr) notes.push_back("no source lines: " + setup.why_no_catalog());
      notes.push_back(sources.why());
      result.rows[point.row].stalls =
          stall_sampling_of(point.pcs, point.period, point.totals, notes);
    }
    provenance = "; warp stalls: CUPTI PC sampling, one launch per point after an L2 flush, " +
                 std::to_string(pending.size()) + (pending.size() == 1 ? " point" : " points") +
                 " in " +
                 format_fixed(std::chrono::duration<double>(Clock::now() - t0).count(), 2) +
                 " s (sampling " + format_fixed(sampling_s, 2) + " s: configuring " +
                 format_fixed(sampler.seconds().configure, 2) + ", start " +
                 format_fixed(sampler.seconds().start, 2) + ", launches " +
                 format_fixed(sampler.seconds().work, 2) + ", stop " +
                 format_fixed(sampler.seconds().stop, 2) + ", reading " +
                 format_fixed(sampler.seconds().read, 2) + "; source lines " +
                 format_fixed(sources.source_seconds(), 2) + " s, waiting for SASS " +
                 format_fixed(sources.sass_seconds(), 2) + " s)";
  } catch (const ProfilerError& error) {
    launcher.arena().release();
    provenance = "; warp stalls unavailable: " + first_line(error.what());
    spdlog::warn("warp stalls unavailable: {}", first_line(error.what()));
  }
  result.stalls = provenance;
}

}  // namespace roofline::gpu
