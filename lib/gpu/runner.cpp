// The Runner: SweepRunner measures the points of a sweep one by one (support and memory
// checks, the first launch and its output checks, optional verification, the first timing
// round), then times the later rounds and runs the counter pass after the round the options
// name. Its pieces: the input arena (input_arena.hpp), the points' launches
// (point_launcher.hpp), the output checks (output_check.hpp), the counter pass
// (counter_pass.hpp).
#include "lib/gpu/runner.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <memory>
#include <optional>

#include <cuda_profiler_api.h>
#include <spdlog/spdlog.h>

#include "kernels/attention.hpp"
#include "kernels/test_aids.hpp"
#include "lib/core/base/errors.hpp"
#include "lib/core/base/text.hpp"
#include "lib/core/model/model.hpp"
#include "lib/core/report/verification.hpp"
#include "lib/gpu/clock_sampler.hpp"
#include "lib/gpu/counter_pass.hpp"
#include "lib/gpu/cuda_check.hpp"
#include "lib/gpu/device.hpp"
#include "lib/gpu/device_memory.hpp"
#include "lib/gpu/energy_pass.hpp"
#include "lib/gpu/green_context.hpp"
#include "lib/gpu/input_arena.hpp"
#include "lib/gpu/kernel_pass.hpp"
#include "lib/gpu/nvml.hpp"
#include "lib/gpu/output_check.hpp"
#include "lib/gpu/point_launcher.hpp"
#include "lib/gpu/stall_pass.hpp"

namespace roofline::gpu {
namespace {

std::string human_bytes(double bytes) {
  return format_si(bytes) + "B";
}

class SweepRunner {
 public:
  SweepRunner(const std::vector<SweepPoint>& points, const RunOptions& options,
              const DeviceInfo& device, const StallSetup* stalls)
      : stalls_(stalls),
        points_(points),
        options_(options),
        device_(device),
        launcher_(points, options.seed, device.l2_cache_bytes),
        check_(launcher_.stream()),
        nvml_(nvml::device_handle(options.device)) {}

  RunResult run() {
    RunResult result;
    result.device = device_;
    compute_capability_ = result.device.compute_capability;
    using Clock = std::chrono::steady_clock;
    const auto since = [](Clock::time_point t) {
      return std::chrono::duration<double>(Clock::now() - t).count();
    };
    const Clock::time_point t_first = Clock::now();
    for (std::size_t i = 0; i < points_.size(); ++i) result.rows.push_back(measure(i));
    const double first_round = since(t_first);
    // The counters after the round options_.counters_after_round names (the last by default):
    // they need the first round's statuses, and nothing after them depends on them.
    const int counters_after = options_.counters_after_round >= 0
                                   ? std::min(options_.counters_after_round, rounds() - 1)
                                   : rounds() - 1;
    double counters_seconds = 0;
    auto counters = [&] {
      const Clock::time_point t = Clock::now();
      if (options_.counters == CounterMode::kOff) {
        result.counters = "off (--no-counters): bytes and FLOPs from the analytic model";
      } else {
        collect_counters(result, launcher_, options_);
      }
      counters_seconds = since(t);
    };
    // The stall pass before the counters: it needs the first round's statuses and times, and a
    // PC-sampling session after the range profiler's in the same context gave no PC records on
    // the H200 (2026-12-02, CUDA 13.0).
    if (stalls_ != nullptr) {
      launcher_.arena().release();
      collect_stalls(result, launcher_, options_, *stalls_);
    }
    if (counters_after == 0) counters();
    const Clock::time_point t_later = Clock::now();
    for (int round = 1; round < rounds(); ++round) {
      for (std::size_t i = 0; i < points_.size(); ++i)
        if (result.rows[i].status == RowStatus::kOk && result.rows[i].timing)
          time_later_round(i, round, result.rows[i]);
      if (round == counters_after) {
        launcher_.arena().release();
        counters();
      }
    }
    launcher_.arena().release();
    result.counters += result.stalls;
    // Which kernels each launch runs: CUPTI's activity records, so not with --no-counters.
    if (options_.counters != CounterMode::kOff) collect_kernels(result, launcher_, options_);
    if (options_.energy) collect_energy(result, launcher_, options_, nvml_);
    const double later_rounds = since(t_later) - (counters_after > 0 ? counters_seconds : 0);
    spdlog::debug(
        "sweep: first round (set-up, inputs, warm-ups, timing) {:.2f} s, later rounds {:.2f} s, "
        "counters {:.2f} s (after round {})",
        first_round, later_rounds, counters_seconds, counters_after + 1);
    return result;
  }

 private:
  cudaStream_t stream() const { return launcher_.stream().get(); }

  void progress(std::size_t i, const char* phase) {
    if (!options_.progress) return;
    const SweepPoint& p = points_[i];
    options_.progress("[" + std::to_string(i + 1) + "/" + std::to_string(points_.size()) + "] " +
                      p.kernel + " " + p.workload.label() + " — " + phase);
  }

  Row measure(std::size_t i) {
    const SweepPoint& p = points_[i];
    Row row;
    row.kernel = p.kernel;
    row.workload = p.workload;
    if (std::string why =
            unsupported_reason(find_kernel_model(p.kernel), p.workload, compute_capability_);
        !why.empty()) {
      row.status = RowStatus::kUnsupported;
      row.message = std::move(why);
      return row;
    }
    const PointSizes s = sizes_of(p.kernel, p.workload, options_.verify);

    std::size_t free_bytes = 0, total_bytes = 0;
    ROOFLINE_CUDA_CALL(cudaMemGetInfo(&free_bytes, &total_bytes));
    const std::size_t usable = free_bytes + launcher_.arena().held();
    constexpr std::size_t kMemoryMargin = InputArena::kMemoryMargin;
    if (s.total() + kMemoryMargin > usable) {
      row.status = RowStatus::kTooLarge;
      row.message = "needs " + human_bytes(double(s.total())) + " of device memory, " +
                    human_bytes(double(usable > kMemoryMargin ? usable - kMemoryMargin : 0)) +
                    " available";
      return row;
    }
    try {
      launcher_.arena().ensure(s);
      progress(i, "checking");
      launcher_.prepare_first(i, s);
      launcher_.launch(i);
      ROOFLINE_CUDA_CALL(cudaStreamSynchronize(launcher_.stream().get()));
      check_.require_written(p.workload, launcher_.arena(), s);
      if (options_.verify) {
        progress(i, "verifying");
        row.verification = check_.verify(p.workload, launcher_.arena(), s);
        if (!row.verification->passed) {
          row.status = RowStatus::kIncorrect;
          row.message = describe_failure(*row.verification, row.workload.dtype);
        }
      }
      progress(i, "timing");
      row.timing.emplace();
      row.timing->rounds = rounds();
      const auto slowdown = options_.test_slowdown.find(p.kernel);
      if (slowdown != options_.test_slowdown.end()) {
        for (int w = 0; w < options_.warmup; ++w) launcher_.launch(i);
        row.message = calibrate_delay(i, slowdown->second);
      }
      time_round(i, 0, *row.timing);
      if (const std::size_t extra = test_extra_bytes(p, options_); extra > 0)
        row.message += std::string(row.message.empty() ? "" : "; ") +
                       "test aid --test-extra-bytes: each counted range also reads " +
                       human_bytes(double(extra)) + " (" +
                       format_fixed(100 * options_.test_extra_bytes.at(p.kernel), 1) +
                       "% of the model's DRAM bytes) outside L2; timed launches unchanged";
    } catch (const CudaError& error) {
      fail_row(row, error);
    }
    return row;
  }

  // A failed launch or CUDA call: the row says how, and the sweep goes on when it can.
  void fail_row(Row& row, const CudaError& error) {
    row.status =
        error.code() == cudaErrorMemoryAllocation ? RowStatus::kTooLarge : RowStatus::kError;
    row.message = first_line(error.what());
    row.timing.reset();
    spdlog::warn("{} {}: {}", row.kernel, row.workload.label(), row.message);
    // A sticky error leaves the context unusable; a plain one is cleared.
    cudaGetLastError();
    launcher_.arena().release();
    if (cudaDeviceSynchronize() != cudaSuccess)
      throw GpuUnavailableError("the GPU context failed after " + row.kernel + " " +
                                row.workload.label() + ": " + row.message);
  }

  // The SM clock now, through the NVML handle found once (0 without NVML).
  double clock_now_mhz() const { return nvml::sm_clock_mhz(nvml_).value_or(0); }

  int rounds() const { return std::clamp(options_.rounds, 1, std::max(options_.reps, 1)); }

  // Repetitions of round `round`: the reps split as evenly as Timing::round_samples reads them.
  int reps_in_round(int round) const {
    const long long n = options_.reps;
    const long long r = rounds();
    return static_cast<int>((round + 1) * n / r - round * n / r);
  }

  // Rounds after the first: the point's inputs are restored (the arena may hold another
  // point's), then it is timed again.
  void time_later_round(std::size_t i, int round, Row& row) {
    try {
      if (options_.progress)
        options_.progress("timing: round " + std::to_string(round + 1) + "/" +
                          std::to_string(rounds()) + ", point " + std::to_string(i + 1) + "/" +
                          std::to_string(points_.size()));
      launcher_.prepare_again(i);
      time_round(i, round, *row.timing);
    } catch (const CudaError& error) {
      fail_row(row, error);
      row.message = "round " + std::to_string(round + 1) + ": " + row.message;
    }
  }

  // Median time of `count` launches (L2 flushed before each), optionally each followed by a
  // busy-wait of `spin` cycles inside the timed region.
  double median_launch_seconds(std::size_t i, int count, std::optional<long long> spin) {
    Event start, stop;
    std::vector<double> seconds;
    for (int r = 0; r < count; ++r) {
      launcher_.flush_l2();
      ROOFLINE_CUDA_CALL(cudaEventRecord(start.get(), stream()));
      launcher_.launch(i);
      if (spin) ROOFLINE_CUDA_CALL(kernels::spin_cycles(*spin, stream()));
      ROOFLINE_CUDA_CALL(cudaEventRecord(stop.get(), stream()));
      seconds.push_back(elapsed_seconds(start, stop));
    }
    std::sort(seconds.begin(), seconds.end());
    return seconds[seconds.size() / 2];
  }

  // Test aid: the busy-wait after each timed launch that makes the point `fraction` slower,
  // from this process's own time of the point and the gap a second launch adds.
  std::string calibrate_delay(std::size_t i, double fraction) {
    constexpr int kCalibrationLaunches = 7;
    const double alone = median_launch_seconds(i, kCalibrationLaunches, std::nullopt);
    const double gap = std::max(0.0, median_launch_seconds(i, kCalibrationLaunches, 0) - alone);
    double clock_mhz = clock_now_mhz();
    if (!(clock_mhz > 0)) {
      int khz = 0;
      ROOFLINE_CUDA_CALL(cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, options_.device));
      clock_mhz = khz / 1e3;
    }
    const double wait = std::max(0.0, fraction * alone - gap);
    delay_cycles_[i] = std::llround(wait * clock_mhz * 1e6);
    return "test aid --test-slowdown: each timed launch followed by a " +
           format_fixed(wait * 1e6, 2) + " µs busy-wait (+" + format_fixed(100 * fraction, 1) +
           "% of " + format_fixed(alone * 1e6, 1) + " µs, launch gap " +
           format_fixed(gap * 1e6, 2) + " µs included)";
  }

  // --settle: the point launched as it is timed (an L2 flush before each launch, one at a time)
  // for that long, so that its timed launches start in the power state it sets itself.
  void settle(std::size_t i) {
    using Clock = std::chrono::steady_clock;
    const Clock::time_point until =
        Clock::now() + std::chrono::duration_cast<Clock::duration>(
                           std::chrono::duration<double>(options_.settle_seconds));
    do {
      launcher_.flush_l2();
      launcher_.launch(i);
      ROOFLINE_CUDA_CALL(cudaStreamSynchronize(stream()));
    } while (Clock::now() < until);
  }

  void time_round(std::size_t i, int round, Timing& timing) {
    const int warmup = round == 0 ? options_.warmup : std::min(options_.warmup, 1);
    for (int w = 0; w < warmup; ++w) launcher_.launch(i);
    if (options_.settle_seconds > 0) settle(i);
    if (round == 0) timing.sm_clock_before_mhz = clock_now_mhz();
    const auto delay = delay_cycles_.find(i);
    Event start, stop;
    const bool mark =
        round == 0 && options_.profiler_api_ranges && options_.counters == CounterMode::kOff;
    ClockSamples& clocks = clock_samples_[i];
    ClockSampler sampler(nvml_, clocks);
    for (int r = 0; r < reps_in_round(round); ++r) {
      launcher_.flush_l2();
      if (mark && r == 0) {
        ROOFLINE_CUDA_CALL(cudaStreamSynchronize(stream()));
        ROOFLINE_CUDA_CALL(cudaProfilerStart());
      }
      ROOFLINE_CUDA_CALL(cudaEventRecord(start.get(), stream()));
      launcher_.launch(i);
      if (delay != delay_cycles_.end())
        ROOFLINE_CUDA_CALL(kernels::spin_cycles(delay->second, stream()));
      ROOFLINE_CUDA_CALL(cudaEventRecord(stop.get(), stream()));
      if (mark && r == 0) {
        ROOFLINE_CUDA_CALL(cudaStreamSynchronize(stream()));
        ROOFLINE_CUDA_CALL(cudaProfilerStop());
      }
      timing.samples_seconds.push_back(elapsed_seconds(start, stop));
    }
    sampler.stop();
    if (round == rounds() - 1) {
      timing.sm_clock_after_mhz = clock_now_mhz();
      timing.sm_clock_timed_mhz = clocks.median_mhz();
      timing.clock_limit = clocks.limit();
    }
  }

  const StallSetup* stalls_;  // null without --stalls
  const std::vector<SweepPoint>& points_;
  const RunOptions& options_;
  const DeviceInfo device_;
  PointLauncher launcher_;
  OutputCheck check_;
  std::string compute_capability_;  // of the device in use ("9.0"), for unsupported rows
  std::map<std::size_t, long long> delay_cycles_;  // test aid: busy-wait after a point's launches
  void* nvml_;  // NVML's handle of the device (nullptr without NVML): clocks while timed
  std::map<std::size_t, ClockSamples> clock_samples_;  // per point, over its rounds
};

}  // namespace

RunResult run_sweep(const std::vector<SweepPoint>& points, const RunOptions& options,
                    const DeviceInfo& device) {
  ROOFLINE_CUDA_CALL(cudaSetDevice(options.device));
  // Current before anything that launches or makes a stream exists, and ended after them (a
  // green context's streams must go before it does).
  std::optional<GreenContext> green;
  if (options.sms > 0) {
    green.emplace(options.device, options.sms);
    spdlog::info("--sms {}: every launch runs in {}", options.sms, green->description());
  }
  // Before the first launch: the cubins arrive once, as their modules load (stall_pass.hpp).
  std::unique_ptr<StallSetup> stalls;
  if (options.stalls) stalls = std::make_unique<StallSetup>();
  RunResult result = SweepRunner(points, options, device, stalls.get()).run();
  if (green) {
    result.green_context_sms = green->sm_count();
    result.counters = "in " + green->description() + "; " + result.counters;
  }
  return result;
}

RunResult run_sweep(const std::vector<SweepPoint>& points, const RunOptions& options) {
  // Detect first: no driver or no device must fail before any other CUDA or CUPTI call.
  return run_sweep(points, options, detect_device(options.device));
}

}  // namespace roofline::gpu
