#include "lib/gpu/kernel_pass.hpp"

#include <chrono>
#include <optional>
#include <stdexcept>
#include <vector>

#include <spdlog/spdlog.h>

#include "lib/core/base/statistics.hpp"
#include "lib/core/base/text.hpp"
#include "lib/core/domain/point_kernels.hpp"
#include "lib/gpu/cuda_check.hpp"
#include "lib/gpu/cupti/kernel_records.hpp"

namespace roofline::gpu {
namespace {

using Clock = std::chrono::steady_clock;

// One launch of point `i` alone on the GPU, after the L2 flush: its kernels' records (the
// flush's own are taken and dropped first).
std::vector<KernelRecord> one_launch(PointLauncher& launcher, KernelRecords& records,
                                     std::size_t i) {
  launcher.flush_l2();
  ROOFLINE_CUDA_CALL(cudaStreamSynchronize(launcher.stream().get()));
  records.take();
  launcher.launch(i);
  ROOFLINE_CUDA_CALL(cudaStreamSynchronize(launcher.stream().get()));
  return records.take();
}

// The same kernels, in the same order, with the same grids.
bool same_kernels(const std::vector<KernelRecord>& a, const std::vector<KernelRecord>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t k = 0; k < a.size(); ++k)
    if (a[k].name != b[k].name || a[k].grid != b[k].grid) return false;
  return true;
}

// Per kernel of the first launch, the medians over every launch (each ran the same kernels).
std::vector<PointKernel> medians(const std::vector<std::vector<KernelRecord>>& launches) {
  const std::vector<KernelRecord>& first = launches.front();
  std::vector<PointKernel> out;
  for (std::size_t k = 0; k < first.size(); ++k) {
    std::vector<double> seconds, starts;
    for (const std::vector<KernelRecord>& launch : launches) {
      seconds.push_back(static_cast<double>(launch[k].end_ns - launch[k].start_ns) * 1e-9);
      starts.push_back(static_cast<double>(launch[k].start_ns - launch.front().start_ns) * 1e-9);
    }
    PointKernel p;
    p.name = first[k].name;
    p.grid = first[k].grid;
    p.block = first[k].block;
    p.registers_per_thread = first[k].registers_per_thread;
    p.shared_bytes = first[k].shared_bytes;
    p.seconds = median(seconds);
    p.start_seconds = median(starts);
    out.push_back(std::move(p));
  }
  return out;
}

}  // namespace

void collect_kernels(RunResult& result, PointLauncher& launcher, const RunOptions& options) {
  if (result.counters_held_elsewhere) {
    result.counters += "; kernels not recorded: another profiler holds CUPTI";
    return;
  }
  const Clock::time_point t0 = Clock::now();
  std::optional<KernelRecords> records;
  try {
    records.emplace();
  } catch (const std::exception& error) {
    result.counters += std::string("; kernels not recorded: ") + error.what();
    spdlog::warn("the kernels of each launch are not recorded: {}", error.what());
    return;
  }
  std::size_t recorded = 0;
  for (std::size_t i = 0; i < result.rows.size(); ++i) {
    Row& row = result.rows[i];
    // Every timed row, counted or not: in a green context (`run --sms`) CUPTI 13.0 gives no
    // counters, and the rows are timed all the same.
    const bool timed =
        row.status == RowStatus::kOk || row.status == RowStatus::kCountersUnavailable;
    if (!timed || !row.timing) continue;
    if (options.progress)
      options.progress("kernels: point " + std::to_string(i + 1) + "/" +
                       std::to_string(result.rows.size()));
    try {
      launcher.prepare_again(i);
      const int launches =
          row.timing->median_seconds() > kKernelPassLongSeconds ? 1 : kKernelPassLaunches;
      std::vector<std::vector<KernelRecord>> ran;
      for (int n = 0; n < launches; ++n) {
        std::vector<KernelRecord> kernels = one_launch(launcher, *records, i);
        if (kernels.empty() || (!ran.empty() && !same_kernels(ran.front(), kernels))) continue;
        ran.push_back(std::move(kernels));
      }
      if (!ran.empty()) {
        row.kernels = medians(ran);
        ++recorded;
      }
    } catch (const std::runtime_error& error) {
      // The row keeps its time and counters; only its kernels are missing (a launch that failed
      // here failed after being timed: the context is checked by the next point's launch).
      spdlog::warn("{} {}: kernels not recorded: {}", row.kernel, row.workload.label(),
                   first_line(error.what()));
      cudaGetLastError();
    }
  }
  records.reset();
  launcher.arena().release();
  result.counters += "; kernels of each launch: CUPTI's kernel activity records of " +
                     std::to_string(kKernelPassLaunches) + " launches per point (1 above " +
                     format_fixed(kKernelPassLongSeconds * 1e3, 0) + " ms), " +
                     std::to_string(recorded) + (recorded == 1 ? " point" : " points") + " in " +
                     format_fixed(std::chrono::duration<double>(Clock::now() - t0).count(), 2) +
                     " s";
}

}  // namespace roofline::gpu
