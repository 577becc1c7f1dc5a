#include "lib/gpu/stall_pass.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <future>
#include <map>

#include <spdlog/spdlog.h>

#include "lib/core/base/stopwatch.hpp"
#include "lib/core/base/text.hpp"
#include "lib/core/domain/stalls.hpp"
#include "lib/gpu/cupti/cubin_catalog.hpp"
#include "lib/gpu/cupti/pc_sampler.hpp"
#include "lib/gpu/range_profiler.hpp"
#include "lib/gpu/sass_disassembler.hpp"

namespace roofline::gpu {
namespace {

// The clock assumed for a row whose timing has none.
constexpr double kAssumedClockMhz = 1500;

// The SASS of each sampled function, disassembled once, in the background: nvdisasm runs as
// soon as a point's samples name a function (one process per function, several at once) while
// the GPU samples the next points, and the listings are read when every point is sampled.
class SassCache {
 public:
  explicit SassCache(const cupti::CubinCatalog* catalog) : catalog_(catalog) {}
  // Starts disassembling `function` of the module `crc` unless it is under way or done.
  void request(std::uint64_t crc, const std::string& function) {
    if (catalog_ == nullptr) return;
    auto [it, added] = listings_.try_emplace({crc, function});
    if (!added) return;
    const std::string* cubin = catalog_->cubin(crc);
    if (cubin == nullptr) return;  // no future: no listing
    it->second = std::async(std::launch::async, [bytes = *cubin, function] {
                   Disassembly out;
                   out.listing = disassemble_cubin(bytes, function, &out.why);
                   return out;
                 }).share();
  }
  // The instruction at `offset` of a requested function ("" when unknown); waits for nvdisasm.
  std::string instruction(std::uint64_t crc, const std::string& function, std::uint64_t offset) {
    const auto it = listings_.find({crc, function});
    if (it == listings_.end() || !it->second.valid()) return "";
    const Disassembly& done = it->second.get();
    if (!done.why.empty() && why_.empty()) why_ = done.why;
    const auto f = done.listing.find(function);
    if (f == done.listing.end()) return "";
    const auto i = f->second.find(offset);
    return i == f->second.end() ? "" : i->second;
  }
  const std::string& why() const { return why_; }

 private:
  struct Disassembly {
    SassListing listing;
    std::string why;
  };
  const cupti::CubinCatalog* catalog_;
  std::map<std::pair<std::uint64_t, std::string>, std::shared_future<Disassembly>> listings_;
  std::string why_;
};

// A sampled point whose SASS is not read yet.
struct PendingPoint {
  std::size_t row = 0;
  int period = 0;
  cupti::SampledRange range;
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
  double sampling_s = 0, source_s = 0, sass_s = 0;
  try {
    cupti::PcSampler sampler;
    SassCache sass(setup.catalog());
    std::vector<PendingPoint> pending;
    // Every point's period first, then the points sampled in the order of their periods (the
    // sampler sets the period only when it changes), each point's functions' SASS requested as
    // its samples come.
    std::vector<std::pair<int, std::size_t>> order;
    for (std::size_t i = 0; i < result.rows.size(); ++i) {
      const Row& row = result.rows[i];
      if (row.status != RowStatus::kOk || !row.timing) continue;
      const double clock =
          row.timing->sm_clock_mhz() > 0 ? row.timing->sm_clock_mhz() : kAssumedClockMhz;
      order.emplace_back(stall_period_log2(row.timing->median_seconds(), clock,
                                           result.device.sm_count, options.stall_samples),
                         i);
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
      try {
        const Stopwatch watch(sampling_s);
        point.range = sampler.sample(period, [&] { launcher.launch(i); });
      } catch (const ProfilerError& error) {
        StallSampling failed;
        failed.period_log2 = period;
        failed.note = "not sampled: " + first_line(error.what());
        row.stalls = std::move(failed);
        continue;
      }
      for (const cupti::SampledPc& pc : point.range.pcs) {
        PcSample out;
        out.function = pc.function;
        out.pc_offset = pc.pc_offset;
        for (const auto& [name, samples] : pc.reasons)
          if (const std::string reason = ncu_stall_name(name); !reason.empty())
            out.reasons[reason] += samples;
        if (setup.catalog() != nullptr) {
          const Stopwatch watch(source_s);
          const cupti::SourceLocation at =
              setup.catalog()->source(pc.cubin_crc, pc.function, pc.pc_offset);
          out.file = at.file;
          out.line = at.line;
        }
        sass.request(pc.cubin_crc, pc.function);
        point.pcs.push_back(std::move(out));
      }
      pending.push_back(std::move(point));
    }
    launcher.arena().release();
    // Then each point's instructions, once their listings are in.
    for (PendingPoint& point : pending) {
      {
        const Stopwatch watch(sass_s);
        for (std::size_t k = 0; k < point.pcs.size(); ++k) {
          const cupti::SampledPc& pc = point.range.pcs[k];
          point.pcs[k].sass = sass.instruction(pc.cubin_crc, pc.function, pc.pc_offset);
        }
      }
      const cupti::SampledRange& range = point.range;
      StallSampling s = summarize_stalls(point.pcs, point.period, range.dropped_samples);
      std::vector<std::string> notes;
      if (!s.note.empty()) notes.push_back(s.note);
      if (range.hardware_buffer_full) notes.push_back("the hardware buffer filled: samples lost");
      if (range.pcs.empty())
        notes.push_back("no PC records: " + std::to_string(range.total_samples) +
                        " samples in all, " + std::to_string(range.non_user_samples) +
                        " in kernels CUPTI does not attribute");
      if (setup.catalog() == nullptr) notes.push_back("no source lines: " + setup.why_no_catalog());
      if (!sass.why().empty()) notes.push_back(sass.why());
      s.note = join(notes, "; ");
      result.rows[point.row].stalls = std::move(s);
    }
    provenance =
        "; warp stalls: CUPTI PC sampling, one launch per point after an L2 flush, " +
        std::to_string(pending.size()) + (pending.size() == 1 ? " point" : " points") + " in " +
        format_fixed(std::chrono::duration<double>(Clock::now() - t0).count(), 2) +
        " s (sampling " + format_fixed(sampling_s, 2) + " s: configuring " +
        format_fixed(sampler.seconds().configure, 2) + ", start " +
        format_fixed(sampler.seconds().start, 2) + ", launches " +
        format_fixed(sampler.seconds().work, 2) + ", stop " +
        format_fixed(sampler.seconds().stop, 2) + ", reading " +
        format_fixed(sampler.seconds().read, 2) + "; source lines " + format_fixed(source_s, 2) +
        " s, waiting for SASS " + format_fixed(sass_s, 2) + " s)";
  } catch (const ProfilerError& error) {
    launcher.arena().release();
    provenance = "; warp stalls unavailable: " + first_line(error.what());
    spdlog::warn("warp stalls unavailable: {}", first_line(error.what()));
  }
  result.stalls = provenance;
}

}  // namespace roofline::gpu
