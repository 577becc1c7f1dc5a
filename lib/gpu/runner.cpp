#include "lib/gpu/runner.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <map>
#include <optional>

#include <cuda_profiler_api.h>
#include <spdlog/spdlog.h>

#include "kernels/attention.hpp"
#include "kernels/test_aids.hpp"
#include "lib/core/errors.hpp"
#include "lib/core/metric_catalog.hpp"
#include "lib/core/model.hpp"
#include "lib/core/text.hpp"
#include "lib/core/verification.hpp"
#include "lib/gpu/cuda_check.hpp"
#include "lib/gpu/device.hpp"
#include "lib/gpu/device_memory.hpp"
#include "lib/gpu/range_profiler.hpp"

namespace roofline::gpu {
namespace {

namespace k = ::roofline::kernels;

constexpr std::size_t kMemoryMargin = std::size_t{512} << 20;  // for cuBLAS, CUPTI, the context

k::AttentionShape shape_of(const Workload& w) {
  return {w.batch, w.heads, w.seq_len, w.head_dim, w.causal};
}

k::Pass kernel_pass(Pass pass) {
  return pass == Pass::kForward ? k::Pass::kForward : k::Pass::kBackward;
}

struct Sizes {
  std::size_t tensor = 0;     // one FP16 [B,H,N,d]
  std::size_t row_stats = 0;  // one FP32 [B,H,N]
  std::size_t workspace = 0;
  bool backward = false;
  bool verify = false;

  std::size_t total() const {
    std::size_t bytes = 4 * tensor + row_stats + workspace;                // q, k, v, o, lse
    if (backward) bytes += 4 * tensor;                                     // d_o, d_q, d_k, d_v
    if (verify) bytes += (backward ? 6 : 2) * tensor * 2 + 2 * row_stats;  // FP32 references
    return bytes;
  }
};

Sizes sizes_of(const SweepPoint& p, bool verify) {
  const Workload& w = p.workload;
  Sizes s;
  const std::size_t rows = std::size_t(w.batch) * std::size_t(w.heads) * std::size_t(w.seq_len);
  s.tensor = rows * std::size_t(w.head_dim) * 2;
  s.row_stats = rows * 4;
  s.workspace = k::workspace_bytes(p.kernel, shape_of(w));
  s.backward = w.pass == Pass::kBackward;
  s.verify = verify;
  return s;
}

// Grow-only device buffers reused across the points of a sweep.
struct Arena {
  DeviceBuffer q, k, v, o, lse, d_o, d_q, d_k, d_v, workspace;
  DeviceBuffer ref_o, ref16_o, ref_lse, ref16_lse, ref_dq, ref16_dq, ref_dk, ref16_dk, ref_dv,
      ref16_dv;

  std::array<DeviceBuffer*, 20> all() {
    return {&q,      &k,        &v,         &o,        &lse,     &d_o,     &d_q,
            &d_k,    &d_v,      &workspace, &ref_o,    &ref16_o, &ref_lse, &ref16_lse,
            &ref_dq, &ref16_dq, &ref_dk,    &ref16_dk, &ref_dv,  &ref16_dv};
  }
  std::size_t held() {
    std::size_t bytes = 0;
    for (DeviceBuffer* b : all()) bytes += b->bytes();
    return bytes;
  }
  void release() {
    for (DeviceBuffer* b : all()) b->reset();
  }
  // Every buffer a point needs, with its size.
  std::vector<std::pair<DeviceBuffer*, std::size_t>> plan(const Sizes& s) {
    std::vector<std::pair<DeviceBuffer*, std::size_t>> out = {
        {&q, s.tensor}, {&k, s.tensor},      {&v, s.tensor},
        {&o, s.tensor}, {&lse, s.row_stats}, {&workspace, std::max<std::size_t>(s.workspace, 256)}};
    if (s.backward)
      for (DeviceBuffer* b : {&d_o, &d_q, &d_k, &d_v}) out.emplace_back(b, s.tensor);
    if (s.verify) {
      for (DeviceBuffer* b : {&ref_o, &ref16_o}) out.emplace_back(b, s.tensor * 2);
      for (DeviceBuffer* b : {&ref_lse, &ref16_lse}) out.emplace_back(b, s.row_stats);
      if (s.backward)
        for (DeviceBuffer* b : {&ref_dq, &ref16_dq, &ref_dk, &ref16_dk, &ref_dv, &ref16_dv})
          out.emplace_back(b, s.tensor * 2);
    }
    return out;
  }
  // Bytes allocate(s) would add: buffers that must grow are freed and allocated anew.
  std::size_t growth(const Sizes& s) {
    std::size_t bytes = 0;
    for (const auto& [buffer, need] : plan(s))
      if (need > buffer->bytes()) bytes += need;
    return bytes;
  }
  void allocate(const Sizes& s) {
    for (const auto& [buffer, need] : plan(s)) buffer->ensure(need);
  }
  k::AttentionBuffers view() const {
    k::AttentionBuffers b;
    b.q = q.get();
    b.k = k.get();
    b.v = v.get();
    b.o = o.get();
    b.lse = lse.as<float>();
    b.d_o = d_o.get();
    b.d_q = d_q.get();
    b.d_k = d_k.get();
    b.d_v = d_v.get();
    b.workspace = workspace.get();
    return b;
  }
};

std::string human_bytes(double bytes) {
  return format_si(bytes) + "B";
}

class SweepRunner {
 public:
  SweepRunner(const std::vector<SweepPoint>& points, const RunOptions& options,
              const DeviceInfo& device)
      : points_(points),
        options_(options),
        device_(device),
        stats_(3 * sizeof(double)),
        nonfinite_(sizeof(int)) {}

  RunResult run() {
    RunResult result;
    result.device = device_;
    compute_capability_ = result.device.compute_capability;
    flush_.ensure(std::max<std::size_t>(2 * static_cast<std::size_t>(result.device.l2_cache_bytes),
                                        std::size_t{64} << 20));
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
        collect_counters(result);
      }
      counters_seconds = since(t);
    };
    if (counters_after == 0) counters();
    const Clock::time_point t_later = Clock::now();
    for (int round = 1; round < rounds(); ++round) {
      for (std::size_t i = 0; i < points_.size(); ++i)
        if (result.rows[i].status == RowStatus::kOk && result.rows[i].timing)
          time_later_round(i, round, result.rows[i]);
      if (round == counters_after) {
        release_arena();
        counters();
      }
    }
    release_arena();
    const double later_rounds = since(t_later) - (counters_after > 0 ? counters_seconds : 0);
    spdlog::debug(
        "sweep: first round (set-up, inputs, warm-ups, timing) {:.2f} s, later rounds {:.2f} s, "
        "counters {:.2f} s (after round {})",
        first_round, later_rounds, counters_seconds, counters_after + 1);
    return result;
  }

 private:
  void progress(std::size_t i, const char* phase) {
    if (!options_.progress) return;
    const SweepPoint& p = points_[i];
    options_.progress("[" + std::to_string(i + 1) + "/" + std::to_string(points_.size()) + "] " +
                      p.kernel + " " + p.workload.label() + " — " + phase);
  }

  void check_launch(cudaError_t status, const SweepPoint& p) {
    if (status != cudaSuccess)
      throw CudaError(status, p.kernel + " launch failed: " + cudaGetErrorName(status) + " (" +
                                  cudaGetErrorString(status) + ")");
  }

  // The arena freed: whatever inputs it held are gone with it.
  void release_arena() {
    arena_.release();
    filled_for_.reset();
  }

  // Grow the arena for this point; start over when growing in place would not fit.
  void ensure_arena(const Sizes& s) {
    std::size_t free_bytes = 0, total_bytes = 0;
    ROOFLINE_CUDA_CALL(cudaMemGetInfo(&free_bytes, &total_bytes));
    if (arena_.growth(s) + kMemoryMargin > free_bytes) release_arena();
    arena_.allocate(s);
  }

  void fill_inputs(std::size_t i, const Sizes& s) {
    filled_for_ = points_[i].workload;
    const std::size_t elements = s.tensor / 2;
    // Inputs depend on the workload only, so every kernel sees the same data.
    const std::uint64_t seed = options_.seed ^ (std::uint64_t(points_[i].workload.seq_len) << 20);
    ROOFLINE_CUDA_CALL(
        k::fill_random_half(arena_.q.get(), elements, seed + 1, 1.0f, stream_.get()));
    ROOFLINE_CUDA_CALL(
        k::fill_random_half(arena_.k.get(), elements, seed + 2, 1.0f, stream_.get()));
    ROOFLINE_CUDA_CALL(
        k::fill_random_half(arena_.v.get(), elements, seed + 3, 1.0f, stream_.get()));
    if (s.backward)
      ROOFLINE_CUDA_CALL(
          k::fill_random_half(arena_.d_o.get(), elements, seed + 4, 1.0f, stream_.get()));
  }

  // Inputs filled, forward state ready for a backward launch; outputs poisoned.
  void prepare(std::size_t i, const Sizes& s) {
    const SweepPoint& p = points_[i];
    fill_inputs(i, s);
    ROOFLINE_CUDA_CALL(k::poison(arena_.o.get(), s.tensor, stream_.get()));
    ROOFLINE_CUDA_CALL(k::poison(arena_.lse.get(), s.row_stats, stream_.get()));
    if (s.backward) {
      check_launch(k::launch_attention(p.kernel, k::Pass::kForward, shape_of(p.workload),
                                       arena_.view(), stream_.get()),
                   p);
      for (DeviceBuffer* b : {&arena_.d_q, &arena_.d_k, &arena_.d_v})
        ROOFLINE_CUDA_CALL(k::poison(b->get(), s.tensor, stream_.get()));
    }
  }

  // Counter passes: inputs refilled only when the workload changes (every kernel of a workload
  // reads the same inputs and none writes them), outputs not poisoned (they are overwritten).
  void prepare_for_counters(std::size_t i, const Sizes& s) {
    const SweepPoint& p = points_[i];
    if (!filled_for_ || !(*filled_for_ == p.workload)) fill_inputs(i, s);
    if (s.backward)
      check_launch(k::launch_attention(p.kernel, k::Pass::kForward, shape_of(p.workload),
                                       arena_.view(), stream_.get()),
                   p);
  }

  // Test aid: bytes the counted ranges of point i also read (0 when the aid is off).
  std::size_t extra_bytes(std::size_t i) const {
    const auto it = options_.test_extra_bytes.find(points_[i].kernel);
    if (it == options_.test_extra_bytes.end()) return 0;
    const double model =
        predict(find_kernel_model(points_[i].kernel), points_[i].workload).model_dram_bytes;
    return static_cast<std::size_t>(std::max(0.0, it->second * model));
  }

  cudaError_t launch(std::size_t i) {
    const SweepPoint& p = points_[i];
    return k::launch_attention(p.kernel, kernel_pass(p.workload.pass), shape_of(p.workload),
                               arena_.view(), stream_.get());
  }

  int count_nonfinite(const DeviceBuffer& buffer, std::size_t bytes) {
    ROOFLINE_CUDA_CALL(
        k::count_nonfinite_half(buffer.get(), bytes / 2, nonfinite_.as<int>(), stream_.get()));
    int count = 0;
    ROOFLINE_CUDA_CALL(cudaMemcpyAsync(&count, nonfinite_.get(), sizeof count,
                                       cudaMemcpyDeviceToHost, stream_.get()));
    ROOFLINE_CUDA_CALL(cudaStreamSynchronize(stream_.get()));
    return count;
  }

  std::array<double, 3> error_stats(const void* test_half, const float* test_float,
                                    const float* ref, std::size_t count) {
    if (test_half != nullptr)
      ROOFLINE_CUDA_CALL(
          k::compare_half_to_float(test_half, ref, count, stats_.as<double>(), stream_.get()));
    else
      ROOFLINE_CUDA_CALL(
          k::compare_float_to_float(test_float, ref, count, stats_.as<double>(), stream_.get()));
    std::array<double, 3> out{};
    ROOFLINE_CUDA_CALL(cudaMemcpyAsync(out.data(), stats_.get(), sizeof out, cudaMemcpyDeviceToHost,
                                       stream_.get()));
    ROOFLINE_CUDA_CALL(cudaStreamSynchronize(stream_.get()));
    return out;
  }

  Verification verify(std::size_t i, const Sizes& s) {
    const SweepPoint& p = points_[i];
    const k::AttentionShape shape = shape_of(p.workload);
    const k::Pass pass = kernel_pass(p.workload.pass);
    k::ReferenceOutputs exact{arena_.ref_o.as<float>(), arena_.ref_lse.as<float>(),
                              arena_.ref_dq.as<float>(), arena_.ref_dk.as<float>(),
                              arena_.ref_dv.as<float>()};
    k::ReferenceOutputs fp16{arena_.ref16_o.as<float>(), arena_.ref16_lse.as<float>(),
                             arena_.ref16_dq.as<float>(), arena_.ref16_dk.as<float>(),
                             arena_.ref16_dv.as<float>()};
    ROOFLINE_CUDA_CALL(
        k::launch_reference(pass, shape, arena_.view(), exact, false, stream_.get()));
    ROOFLINE_CUDA_CALL(k::launch_reference(pass, shape, arena_.view(), fp16, true, stream_.get()));
    struct Output {
      const char* name;
      const DeviceBuffer* test;
      const float* ref;
      const float* ref16;
    };
    std::vector<Output> outputs;
    if (pass == k::Pass::kForward)
      outputs.push_back({"o", &arena_.o, exact.o, fp16.o});
    else
      outputs = {{"dq", &arena_.d_q, exact.d_q, fp16.d_q},
                 {"dk", &arena_.d_k, exact.d_k, fp16.d_k},
                 {"dv", &arena_.d_v, exact.d_v, fp16.d_v}};
    std::vector<OutputErrors> errors;
    for (const Output& out : outputs) {
      const std::size_t count = s.tensor / 2;
      const auto kernel_err = error_stats(out.test->get(), nullptr, out.ref, count);
      const auto fp16_err = error_stats(nullptr, out.ref16, out.ref, count);
      errors.push_back(
          {out.name, count, kernel_err[0], kernel_err[1], kernel_err[2], fp16_err[0], fp16_err[1]});
    }
    // flash-attention's rule (at most 2× the error of a plain FP16 implementation) with an
    // absolute floor scaled to the outputs' magnitude (lib/core/verification.hpp).
    const Verification v = judge_verification(errors);
    return v;
  }

  Row measure(std::size_t i) {
    const SweepPoint& p = points_[i];
    Row row;
    row.kernel = p.kernel;
    row.workload = p.workload;
    row.prediction = predict(find_kernel_model(p.kernel), p.workload);
    if (std::string why =
            unsupported_reason(find_kernel_model(p.kernel), p.workload, compute_capability_);
        !why.empty()) {
      row.status = RowStatus::kUnsupported;
      row.message = std::move(why);
      return row;
    }
    const Sizes s = sizes_of(p, options_.verify);

    std::size_t free_bytes = 0, total_bytes = 0;
    ROOFLINE_CUDA_CALL(cudaMemGetInfo(&free_bytes, &total_bytes));
    const std::size_t usable = free_bytes + arena_.held();
    if (s.total() + kMemoryMargin > usable) {
      row.status = RowStatus::kTooLarge;
      row.message = "needs " + human_bytes(double(s.total())) + " of device memory, " +
                    human_bytes(double(usable > kMemoryMargin ? usable - kMemoryMargin : 0)) +
                    " available";
      return row;
    }
    try {
      ensure_arena(s);
      progress(i, "checking");
      prepare(i, s);
      check_launch(launch(i), p);
      ROOFLINE_CUDA_CALL(cudaStreamSynchronize(stream_.get()));
      if (p.workload.pass == Pass::kForward) {
        if (int bad = count_nonfinite(arena_.o, s.tensor); bad > 0)
          throw CudaError(cudaErrorUnknown, "output o not fully written: " + std::to_string(bad) +
                                                " non-finite values");
      } else {
        for (auto [name, buffer] :
             {std::pair{"dq", &arena_.d_q}, {"dk", &arena_.d_k}, {"dv", &arena_.d_v}})
          if (int bad = count_nonfinite(*buffer, s.tensor); bad > 0)
            throw CudaError(cudaErrorUnknown, std::string("output ") + name +
                                                  " not fully written: " + std::to_string(bad) +
                                                  " non-finite values");
      }
      if (options_.verify) {
        progress(i, "verifying");
        row.verification = verify(i, s);
        if (!row.verification->passed) {
          row.status = RowStatus::kIncorrect;
          row.message = describe_failure(*row.verification);
        }
      }
      progress(i, "timing");
      row.timing.emplace();
      row.timing->rounds = rounds();
      const auto slowdown = options_.test_slowdown.find(p.kernel);
      if (slowdown != options_.test_slowdown.end()) {
        for (int w = 0; w < options_.warmup; ++w) check_launch(launch(i), p);
        row.message = calibrate_delay(i, slowdown->second);
      }
      time_round(i, 0, *row.timing);
      if (const std::size_t extra = extra_bytes(i); extra > 0)
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
    release_arena();
    if (cudaDeviceSynchronize() != cudaSuccess)
      throw GpuUnavailableError("the GPU context failed after " + row.kernel + " " +
                                row.workload.label() + ": " + row.message);
  }

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
      const Sizes s = sizes_of(points_[i], false);
      ensure_arena(s);
      prepare_for_counters(i, s);
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
      ROOFLINE_CUDA_CALL(k::flush_l2(flush_.get(), flush_.bytes(), stream_.get()));
      ROOFLINE_CUDA_CALL(cudaEventRecord(start.get(), stream_.get()));
      check_launch(launch(i), points_[i]);
      if (spin) ROOFLINE_CUDA_CALL(k::spin_cycles(*spin, stream_.get()));
      ROOFLINE_CUDA_CALL(cudaEventRecord(stop.get(), stream_.get()));
      ROOFLINE_CUDA_CALL(cudaEventSynchronize(stop.get()));
      float ms = 0;
      ROOFLINE_CUDA_CALL(cudaEventElapsedTime(&ms, start.get(), stop.get()));
      seconds.push_back(ms * 1e-3);
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
    double clock_mhz = current_sm_clock_mhz(options_.device);
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

  void time_round(std::size_t i, int round, Timing& timing) {
    const int warmup = round == 0 ? options_.warmup : std::min(options_.warmup, 1);
    for (int w = 0; w < warmup; ++w) check_launch(launch(i), points_[i]);
    if (round == 0) timing.sm_clock_before_mhz = current_sm_clock_mhz(options_.device);
    const auto delay = delay_cycles_.find(i);
    Event start, stop;
    const bool mark =
        round == 0 && options_.profiler_api_ranges && options_.counters == CounterMode::kOff;
    for (int r = 0; r < reps_in_round(round); ++r) {
      ROOFLINE_CUDA_CALL(k::flush_l2(flush_.get(), flush_.bytes(), stream_.get()));
      if (mark && r == 0) {
        ROOFLINE_CUDA_CALL(cudaStreamSynchronize(stream_.get()));
        ROOFLINE_CUDA_CALL(cudaProfilerStart());
      }
      ROOFLINE_CUDA_CALL(cudaEventRecord(start.get(), stream_.get()));
      check_launch(launch(i), points_[i]);
      if (delay != delay_cycles_.end())
        ROOFLINE_CUDA_CALL(k::spin_cycles(delay->second, stream_.get()));
      ROOFLINE_CUDA_CALL(cudaEventRecord(stop.get(), stream_.get()));
      if (mark && r == 0) {
        ROOFLINE_CUDA_CALL(cudaStreamSynchronize(stream_.get()));
        ROOFLINE_CUDA_CALL(cudaProfilerStop());
      }
      ROOFLINE_CUDA_CALL(cudaEventSynchronize(stop.get()));
      float ms = 0;
      ROOFLINE_CUDA_CALL(cudaEventElapsedTime(&ms, start.get(), stop.get()));
      timing.samples_seconds.push_back(ms * 1e-3);
    }
    if (round == rounds() - 1) timing.sm_clock_after_mhz = current_sm_clock_mhz(options_.device);
  }

  static std::string unavailable_message(const ProfilerError& error) {
    return std::string("counters unavailable: ") + first_line(error.what());
  }

  void mark_unavailable(RunResult& result, const std::string& message) {
    result.counters = "none: " + message;
    for (Row& row : result.rows)
      if (row.status == RowStatus::kOk) {
        row.status = RowStatus::kCountersUnavailable;
        row.message = message;
      }
    if (options_.counters == CounterMode::kRequired) throw GpuUnavailableError(message);
    spdlog::warn("{}; timing and model still reported", message);
  }

  void collect_counters(RunResult& result) {
    std::vector<std::size_t> measured;
    for (std::size_t i = 0; i < result.rows.size(); ++i)
      if (result.rows[i].status == RowStatus::kOk) measured.push_back(i);
    if (measured.empty()) {
      result.counters = "none: no point ran";
      return;
    }
    if (result.device.cc_major * 10 + result.device.cc_minor < 75) {
      mark_unavailable(result, "compute capability " + result.device.compute_capability +
                                   " is below 7.5, which the CUPTI range profiler needs");
      return;
    }
    try {
      result.device.chip = device_chip_name(options_.device);
      if (!has_catalogue(result.device.chip)) {
        mark_unavailable(result, "no metric catalogue for chip " + result.device.chip +
                                     " yet (catalogued: " + join(catalogued_chips(), ", ") + ")");
        return;
      }
      result.counter_set = options_.counter_set;
      result.metrics = catalogue_metrics(result.device.chip, options_.counter_set);
      using Clock = std::chrono::steady_clock;
      const auto t_setup = Clock::now();
      const int repeats = std::max(options_.counter_repeats, 1);
      RangeProfiler profiler(options_.device, result.metrics,
                             static_cast<int>(measured.size()) * repeats);
      result.counter_passes = profiler.num_passes();
      const auto t_passes = Clock::now();
      std::vector<double> pass_seconds;
      int pass = 0;
      do {
        ++pass;
        const auto t_pass = Clock::now();
        filled_for_.reset();
        profiler.begin_pass();
        for (std::size_t n = 0; n < measured.size(); ++n) {
          const std::size_t i = measured[n];
          if (options_.progress)
            options_.progress("counters: pass " + std::to_string(pass) + "/" +
                              std::to_string(result.counter_passes) + ", point " +
                              std::to_string(n + 1) + "/" + std::to_string(measured.size()));
          const Sizes s = sizes_of(points_[i], false);
          ensure_arena(s);
          prepare_for_counters(i, s);
          const std::size_t extra = extra_bytes(i);
          if (extra > 0) extra_.ensure(extra);
          // Range names are "point:repeat"; the point's row is measured[point].
          for (int repeat = 0; repeat < repeats; ++repeat) {
            ROOFLINE_CUDA_CALL(k::flush_l2(flush_.get(), flush_.bytes(), stream_.get()));
            profiler.push_range(std::to_string(n) + ":" + std::to_string(repeat));
            if (extra > 0) ROOFLINE_CUDA_CALL(k::flush_l2(extra_.get(), extra, stream_.get()));
            check_launch(launch(i), points_[i]);
            profiler.pop_range();
          }
        }
        const bool done = profiler.end_pass();
        pass_seconds.push_back(std::chrono::duration<double>(Clock::now() - t_pass).count());
        if (done) break;
      } while (true);
      release_arena();
      extra_.reset();
      const auto t_decode = Clock::now();
      const std::vector<RangeValues> ranges = profiler.decode_and_evaluate();
      const auto t_end = Clock::now();
      auto since = [](Clock::time_point a, Clock::time_point b) {
        return format_fixed(std::chrono::duration<double>(b - a).count(), 2) + " s";
      };
      std::vector<std::string> per_pass;
      for (double seconds : pass_seconds) per_pass.push_back(format_fixed(seconds, 2));
      counter_timing_ = "profiler setup " + since(t_setup, t_passes) + ", passes " +
                        join(per_pass, " + ") + " s, decode and evaluate " + since(t_decode, t_end);
      spdlog::info("counters: {} ranges in {} passes: {}", measured.size(), pass_seconds.size(),
                   counter_timing_);
      if (ranges.size() != measured.size() * static_cast<std::size_t>(repeats))
        throw ProfilerError(ProfilerErrorKind::kOther,
                            "expected " + std::to_string(measured.size() * repeats) +
                                " ranges, decoded " + std::to_string(ranges.size()));
      std::vector<std::map<std::string, std::vector<double>>> counted(measured.size());
      for (const RangeValues& range : ranges)
        for (const auto& [key, value] : combine_metrics(result.device.chip, options_.counter_set,
                                                        result.metrics, range.values))
          counted[std::stoul(range.name)][key].push_back(value);
      for (std::size_t n = 0; n < measured.size(); ++n) {
        Row& row = result.rows[measured[n]];
        for (auto& [key, values] : counted[n]) {
          std::vector<double> sorted = values;
          std::sort(sorted.begin(), sorted.end());
          const std::size_t mid = sorted.size() / 2;
          row.counters[key] =
              sorted.size() % 2 == 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
          if (repeats > 1) row.counter_samples[key] = std::move(values);
        }
        if (row.counters.size() <
            catalogue_quantities(result.device.chip, options_.counter_set).size()) {
          row.status = RowStatus::kCountersUnavailable;
          row.message = "some counters evaluated to NaN (not collected)";
        }
      }
      result.counters_measured = true;
      result.counter_data_image = profiler.counter_data_image();
      for (const RangeValues& range : ranges)
        result.range_rows.push_back(measured[std::stoul(range.name)]);
      result.counters =
          "CUPTI range profiler, counter set " + std::string(to_string(options_.counter_set)) +
          ", user ranges, user replay with an L2 flush before each measured launch; " +
          std::to_string(repeats) + (repeats == 1 ? " range" : " ranges (median kept)") +
          " per point; " + std::to_string(result.counter_passes) +
          " passes for the whole sweep; chip " + result.device.chip + "; " + counter_timing_;
    } catch (const ProfilerError& error) {
      release_arena();
      mark_unavailable(result, unavailable_message(error));
    }
  }

  const std::vector<SweepPoint>& points_;
  const RunOptions& options_;
  const DeviceInfo device_;
  Stream stream_;
  Arena arena_;
  DeviceBuffer flush_;
  DeviceBuffer stats_;                  // 3 doubles: max error, error and reference norms
  DeviceBuffer nonfinite_;              // 1 int: count of NaN/Inf outputs
  std::optional<Workload> filled_for_;  // whose inputs the arena holds
  std::string compute_capability_;      // of the device in use ("9.0"), for unsupported rows
  std::map<std::size_t, long long> delay_cycles_;  // test aid: busy-wait after a point's launches
  DeviceBuffer extra_;                             // test aid: extra bytes read in counted ranges
  std::string counter_timing_;
};

}  // namespace

RunResult run_sweep(const std::vector<SweepPoint>& points, const RunOptions& options,
                    const DeviceInfo& device) {
  ROOFLINE_CUDA_CALL(cudaSetDevice(options.device));
  SweepRunner runner(points, options, device);
  return runner.run();
}

RunResult run_sweep(const std::vector<SweepPoint>& points, const RunOptions& options) {
  // Detect first: no driver or no device must fail before any other CUDA or CUPTI call.
  return run_sweep(points, options, detect_device(options.device));
}

}  // namespace roofline::gpu
