#include "lib/gpu/stall_pass.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>

#include <spdlog/spdlog.h>

#include "lib/core/base/text.hpp"
#include "lib/core/domain/stalls.hpp"
#include "lib/gpu/cupti/cubin_catalog.hpp"
#include "lib/gpu/cupti/pc_sampler.hpp"
#include "lib/gpu/range_profiler.hpp"
#include "lib/gpu/sass_disassembler.hpp"

namespace roofline::gpu {
namespace {

// Samples a launch should get: enough that a 5% share is known to about ±0.3 points (binomial),
// few enough that the hardware buffer and the parse stay small.
constexpr double kTargetSamples = 200000;
// The clock assumed for a row whose timing has none.
constexpr double kAssumedClockMhz = 1500;

// The SASS of each sampled function, disassembled once.
class SassCache {
 public:
  explicit SassCache(const cupti::CubinCatalog* catalog) : catalog_(catalog) {}
  std::string instruction(std::uint64_t crc, const std::string& function, std::uint64_t offset) {
    if (catalog_ == nullptr) return "";
    auto [it, added] = listings_.try_emplace({crc, function});
    if (added) {
      if (const std::string* cubin = catalog_->cubin(crc); cubin != nullptr) {
        std::string why;
        it->second = disassemble_cubin(*cubin, function, &why);
        if (!why.empty() && why_.empty()) why_ = why;
      }
    }
    const auto f = it->second.find(function);
    if (f == it->second.end()) return "";
    const auto i = f->second.find(offset);
    return i == f->second.end() ? "" : i->second;
  }
  const std::string& why() const { return why_; }

 private:
  const cupti::CubinCatalog* catalog_;
  std::map<std::pair<std::uint64_t, std::string>, SassListing> listings_;
  std::string why_;
};

// Adds the seconds its scope lasts to `into`.
class Stopwatch {
 public:
  explicit Stopwatch(double& into) : into_(into), t_(std::chrono::steady_clock::now()) {}
  ~Stopwatch() {
    into_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - t_).count();
  }
  Stopwatch(const Stopwatch&) = delete;
  Stopwatch& operator=(const Stopwatch&) = delete;

 private:
  double& into_;
  std::chrono::steady_clock::time_point t_;
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
    std::size_t sampled = 0;
    for (std::size_t i = 0; i < result.rows.size(); ++i) {
      Row& row = result.rows[i];
      if (row.status != RowStatus::kOk || !row.timing) continue;
      if (options.progress)
        options.progress("stalls: point " + std::to_string(i + 1) + "/" +
                         std::to_string(result.rows.size()));
      launcher.prepare_again(i);
      const double clock =
          row.timing->sm_clock_mhz() > 0 ? row.timing->sm_clock_mhz() : kAssumedClockMhz;
      const int period = stall_period_log2(row.timing->median_seconds(), clock,
                                           result.device.sm_count, kTargetSamples);
      launcher.flush_l2();
      cupti::SampledRange range;
      try {
        const Stopwatch watch(sampling_s);
        range = sampler.sample(period, [&] { launcher.launch(i); });
      } catch (const ProfilerError& error) {
        StallSampling failed;
        failed.period_log2 = period;
        failed.note = "not sampled: " + first_line(error.what());
        row.stalls = std::move(failed);
        continue;
      }
      std::vector<PcSample> pcs;
      for (const cupti::SampledPc& pc : range.pcs) {
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
        {
          const Stopwatch watch(sass_s);
          out.sass = sass.instruction(pc.cubin_crc, pc.function, pc.pc_offset);
        }
        pcs.push_back(std::move(out));
      }
      StallSampling s = summarize_stalls(pcs, period, range.dropped_samples);
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
      row.stalls = std::move(s);
      ++sampled;
    }
    launcher.arena().release();
    provenance = "; warp stalls: CUPTI PC sampling, one launch per point after an L2 flush, " +
                 std::to_string(sampled) + (sampled == 1 ? " point" : " points") + " in " +
                 format_fixed(std::chrono::duration<double>(Clock::now() - t0).count(), 2) +
                 " s (sampling " + format_fixed(sampling_s, 2) + " s, source lines " +
                 format_fixed(source_s, 2) + " s, SASS " + format_fixed(sass_s, 2) + " s)";
  } catch (const ProfilerError& error) {
    launcher.arena().release();
    provenance = "; warp stalls unavailable: " + first_line(error.what());
    spdlog::warn("warp stalls unavailable: {}", first_line(error.what()));
  }
  result.stalls = provenance;
}

}  // namespace roofline::gpu
