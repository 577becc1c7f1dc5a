#include "lib/gpu/energy_pass.hpp"

#include <atomic>
#include <chrono>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

#include <spdlog/spdlog.h>

#include "lib/core/base/text.hpp"
#include "lib/core/domain/energy.hpp"
#include "lib/gpu/cuda_check.hpp"
#include "lib/gpu/device_memory.hpp"
#include "lib/gpu/nvml.hpp"

namespace roofline::gpu {
namespace {

using Clock = std::chrono::steady_clock;

// The loop: a settling start (the clock and power reach the kernel's own state within a
// fraction of a second), then the window over which the counter's updates are used.
constexpr double kSettleSeconds = 0.3;
constexpr double kWindowSeconds = 1.2;
// Work kept queued ahead of the GPU, so that it never waits for the host.
constexpr double kQueuedSeconds = 0.02;

double since(Clock::time_point origin) {
  return std::chrono::duration<double>(Clock::now() - origin).count();
}

// Reads the counter on a thread of its own until stopped, keeping (host seconds, mJ) at each
// change of its value.
class EnergyReader {
 public:
  EnergyReader(void* handle, Clock::time_point origin) : handle_(handle), origin_(origin) {
    thread_ = std::thread([this] {
      std::uint64_t last = 0;
      bool have = false;
      while (!stopping_.load()) {
        const std::optional<std::uint64_t> mj = nvml::total_energy_mj(handle_);
        const double t = since(origin_);
        if (mj && (!have || *mj != last)) {
          const std::lock_guard<std::mutex> lock(mutex_);
          seconds_.push_back(t);
          millijoules_.push_back(static_cast<double>(*mj));
          last = *mj;
          have = true;
        }
        std::this_thread::sleep_for(std::chrono::microseconds(200));
      }
    });
  }
  ~EnergyReader() { stop(); }
  EnergyReader(const EnergyReader&) = delete;
  EnergyReader& operator=(const EnergyReader&) = delete;
  void stop() {
    stopping_.store(true);
    if (thread_.joinable()) thread_.join();
  }
  const std::vector<double>& seconds() const { return seconds_; }
  const std::vector<double>& millijoules() const { return millijoules_; }

 private:
  void* handle_;
  Clock::time_point origin_;
  std::atomic<bool> stopping_{false};
  std::mutex mutex_;
  std::vector<double> seconds_, millijoules_;
  std::thread thread_;
};

EnergyMeasurement measure_point(PointLauncher& launcher, std::size_t i, double median_seconds,
                                void* handle) {
  const cudaStream_t stream = launcher.stream().get();
  // Launches per batch: about a millisecond of work, at least one.
  const int per_batch = std::max(1, static_cast<int>(1e-3 / std::max(median_seconds, 1e-7)));
  const int batches_ahead =
      std::max(2, static_cast<int>(kQueuedSeconds / (per_batch * std::max(median_seconds, 1e-7))));
  const Clock::time_point origin = Clock::now();
  EnergyReader reader(handle, origin);
  std::deque<Event> marks;
  Event first, last;
  long long launches = 0;
  bool counting = false;
  double window_from = 0;
  while (since(origin) < kSettleSeconds + kWindowSeconds) {
    if (!counting && since(origin) >= kSettleSeconds) {
      ROOFLINE_CUDA_CALL(cudaEventRecord(first.get(), stream));
      window_from = since(origin);
      counting = true;
    }
    for (int k = 0; k < per_batch; ++k) launcher.launch(i);
    if (counting) launches += per_batch;
    marks.emplace_back();
    ROOFLINE_CUDA_CALL(cudaEventRecord(marks.back().get(), stream));
    if (static_cast<int>(marks.size()) > batches_ahead) {
      ROOFLINE_CUDA_CALL(cudaEventSynchronize(marks.front().get()));
      marks.pop_front();
    }
  }
  ROOFLINE_CUDA_CALL(cudaEventRecord(last.get(), stream));
  // The GPU was busy until the queue drained: the window ends when the last mark was enqueued,
  // before any of the queued work ran out.
  const double window_to = since(origin);
  ROOFLINE_CUDA_CALL(cudaEventSynchronize(last.get()));
  reader.stop();
  const double per_launch =
      launches > 0 ? elapsed_seconds(first, last) / static_cast<double>(launches) : 0;
  return energy_from_readings(reader.seconds(), reader.millijoules(), window_from, window_to,
                              per_launch);
}

}  // namespace

void collect_energy(RunResult& result, PointLauncher& launcher, const RunOptions& options,
                    void* nvml) {
  if (nvml == nullptr || !nvml::total_energy_mj(nvml)) {
    result.counters += "; energy unavailable: NVML or its energy counter is not available";
    spdlog::warn("energy per launch unavailable: NVML or its energy counter is not available");
    return;
  }
  const Clock::time_point t0 = Clock::now();
  std::size_t measured = 0;
  for (std::size_t i = 0; i < result.rows.size(); ++i) {
    Row& row = result.rows[i];
    if (row.status != RowStatus::kOk || !row.timing) continue;
    if (options.progress)
      options.progress("energy: point " + std::to_string(i + 1) + "/" +
                       std::to_string(result.rows.size()));
    launcher.prepare_again(i);
    const EnergyMeasurement e = measure_point(launcher, i, row.timing->median_seconds(), nvml);
    if (e.watts > 0) {
      row.energy = e;
      ++measured;
    }
  }
  launcher.arena().release();
  result.counters += "; energy: NVML's energy counter over " + format_fixed(kWindowSeconds, 1) +
                     " s of back-to-back launches per point (after " +
                     format_fixed(kSettleSeconds, 1) + " s to settle), " +
                     std::to_string(measured) + (measured == 1 ? " point" : " points") + " in " +
                     format_fixed(since(t0), 1) + " s";
}

}  // namespace roofline::gpu
