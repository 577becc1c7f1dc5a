#include "lib/gpu/energy_window.hpp"

#include <algorithm>
#include <chrono>
#include <deque>
#include <optional>

#include "lib/gpu/cuda_check.hpp"
#include "lib/gpu/device_memory.hpp"
#include "lib/gpu/energy_reader.hpp"
#include "lib/gpu/nvml.hpp"

namespace roofline::gpu {

EnergyMeasurement measure_back_to_back(void* nvml, cudaStream_t stream,
                                       const std::function<void()>& launch,
                                       double seconds_per_launch_hint, const EnergyWindow& window,
                                       BackToBackRun* run) {
  using Clock = EnergyReader::Clock;
  const double hint = std::max(seconds_per_launch_hint, 1e-7);
  // Launches per batch: about a millisecond of work, at least one.
  const int per_batch = std::max(1, static_cast<int>(1e-3 / hint));
  const int batches_ahead =
      std::max(2, static_cast<int>(window.queued_seconds / (per_batch * hint)));
  const Clock::time_point origin = Clock::now();
  const auto since = [origin] {
    return std::chrono::duration<double>(Clock::now() - origin).count();
  };
  std::optional<EnergyReader> reader;
  if (window.read_energy) reader.emplace(nvml, origin);
  std::optional<ClockSampler> sampler;
  std::deque<Event> marks;
  Event first, last;
  long long launches = 0;
  bool counting = false;
  double window_from = 0;
  while (since() < window.settle_seconds + window.window_seconds) {
    if (!counting && since() >= window.settle_seconds) {
      ROOFLINE_CUDA_CALL(cudaEventRecord(first.get(), stream));
      window_from = since();
      counting = true;
      if (run != nullptr) sampler.emplace(nvml, run->clocks);
    }
    for (int k = 0; k < per_batch; ++k) launch();
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
  const double window_to = since();
  if (sampler) sampler->stop();
  ROOFLINE_CUDA_CALL(cudaEventSynchronize(last.get()));
  if (reader) reader->stop();
  const double per_launch =
      launches > 0 ? elapsed_seconds(first, last) / static_cast<double>(launches) : 0;
  if (run != nullptr) {
    run->seconds_per_launch = per_launch;
    run->window_seconds = window_to - window_from;
    run->launches = launches;
  }
  if (!reader) return EnergyMeasurement{0, 0, per_launch, 0, 0, 0};
  EnergyMeasurement measured = energy_from_readings(reader->seconds(), reader->millijoules(),
                                                    window_from, window_to, per_launch);
  measured.temperature_c = gpu::nvml::temperature_c(nvml).value_or(0);
  return measured;
}

}  // namespace roofline::gpu
