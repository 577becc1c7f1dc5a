#include "lib/gpu/calibration_runner.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <optional>
#include <set>
#include <vector>

#include <cuda_runtime_api.h>

#include <spdlog/spdlog.h>

#include "kernels/attention.hpp"
#include "kernels/calibration.hpp"
#include "kernels/test_aids.hpp"
#include "lib/core/base/errors.hpp"
#include "lib/core/base/statistics.hpp"
#include "lib/core/base/text.hpp"
#include "lib/core/report/calibration_energy.hpp"
#include "lib/gpu/cuda_check.hpp"
#include "lib/gpu/device_memory.hpp"
#include "lib/gpu/energy_window.hpp"
#include "lib/gpu/green_context.hpp"
#include "lib/gpu/nvml.hpp"

namespace roofline::gpu {
namespace {

using kernels::MicroKernel;

struct Plan {
  MicroKernel kernel;
  const char* id;
  const char* target;
  bool flops;
  std::string method;
  // Measured under NVML's energy counter with --energy. The bulk-copy stream, the write stream
  // and the reductions price bytes of their own (calibration_energy.cpp: bytes that bypass L1,
  // DRAM writes, L2 reductions) beside the read's; the copy's bytes are priced by the read's and
  // the write's, so it is not measured so.
  bool energy = true;
};

// The active idle load: one thread of one block spinning on the SM's cycle counter for this
// many cycles per launch (about half a millisecond), launched back to back.
constexpr long long kIdleSpinCycles = 1000000;
// Longer than a micro-kernel's settling: the power falls back from the last kernel's.
constexpr double kIdleSettleSeconds = 1.0;
// The SM counts of the share curve (calibrate's green contexts), those below the device's.
constexpr int kShareSms[] = {8, 16, 24, 32, 48, 64, 96};

std::string watts_line(const EnergyMeasurement& e) {
  return format_fixed(e.watts, 1) + " W over " + format_fixed(e.window_seconds, 2) + " s (" +
         std::to_string(e.updates) + " counter updates, spread " +
         format_fixed(100 * e.relative_spread, 1) + "%)";
}

// A measurement's rate for the progress lines: "989.0 TFLOP/s", "3074.1 GB/s" or, for the XU
// and the integer chains, a count per second and per clock and SM: "2.345 T exp2/s (15.99 per
// clock and SM)", "32.09 T instructions/s (122.8 per clock and SM)".
std::string rate_text(const CalibrationMeasurement& m, double rate, int sms, double clock_mhz) {
  const bool xu = m.target == kXuTarget;
  if (!xu && m.target != kIntTarget)
    return format_fixed(rate / (m.flops ? 1e12 : 1e9), 1) + (m.flops ? " TFLOP/s" : " GB/s");
  return format_fixed(rate / 1e12, xu ? 3 : 2) + (xu ? " T exp2/s" : " T instructions/s") +
         (clock_mhz > 0 ? " (" + format_fixed(rate / (sms * clock_mhz * 1e6), xu ? 2 : 1) +
                              " per clock and SM)"
                        : std::string());
}

std::string mib(std::size_t bytes) {
  return format_fixed(static_cast<double>(bytes) / (1 << 20), 0) + " MiB";
}

// One launch timed with events; returns seconds and the SM clock (MHz) block 0 measured.
struct Sample {
  double seconds = 0;
  double clock_mhz = 0;
};

class Timer {
 public:
  Timer(const Stream& stream, const DeviceBuffer& clock) : stream_(stream), clock_(clock) {}

  Sample run(MicroKernel kernel, const kernels::MicroKernelArgs& args) {
    ROOFLINE_CUDA_CALL(cudaEventRecord(start_.get(), stream_.get()));
    ROOFLINE_CUDA_CALL(kernels::launch_micro_kernel(kernel, args, stream_.get()));
    ROOFLINE_CUDA_CALL(cudaEventRecord(stop_.get(), stream_.get()));
    Sample sample;
    sample.seconds = elapsed_seconds(start_, stop_);
    unsigned long long probe[2] = {0, 0};
    ROOFLINE_CUDA_CALL(cudaMemcpy(probe, clock_.get(), sizeof probe, cudaMemcpyDeviceToHost));
    // cycles per nanosecond × 1000 = MHz
    if (probe[1] > 0)
      sample.clock_mhz = static_cast<double>(probe[0]) / static_cast<double>(probe[1]) * 1e3;
    return sample;
  }

 private:
  const Stream& stream_;
  const DeviceBuffer& clock_;
  Event start_, stop_;
};

// `plan`'s kernel sized to run about options.sample_seconds per launch (args.iterations set),
// then timed options.reps times: the measurement without energy or power cap.
CalibrationMeasurement timed(const Plan& plan, kernels::MicroKernelArgs& args, Timer& timer,
                             const CalibrateOptions& options) {
  // Size the launch: grow the loop count until a launch takes a quarter of the target, then
  // scale it to the target (the first launches also warm the clocks up).
  args.iterations = 1;
  double seconds = timer.run(plan.kernel, args).seconds;
  while (seconds < options.sample_seconds / 4 && args.iterations < (1LL << 40)) {
    const double grow = seconds > 0 ? options.sample_seconds / 2 / seconds : 16;
    args.iterations = static_cast<long long>(
        std::ceil(static_cast<double>(args.iterations) * std::clamp(grow, 2.0, 64.0)));
    seconds = timer.run(plan.kernel, args).seconds;
  }
  args.iterations = std::max<long long>(
      1, std::llround(static_cast<double>(args.iterations) * options.sample_seconds / seconds));
  timer.run(plan.kernel, args);  // warm-up at the final size

  CalibrationMeasurement m;
  m.id = plan.id;
  m.target = plan.target;
  m.method = plan.method;
  m.flops = plan.flops;
  m.work = kernels::micro_kernel_work(plan.kernel, args);
  std::vector<double> clocks;
  for (int rep = 0; rep < options.reps; ++rep) {
    const Sample sample = timer.run(plan.kernel, args);
    m.samples_seconds.push_back(sample.seconds);
    if (sample.clock_mhz > 0) clocks.push_back(sample.clock_mhz);
  }
  m.sm_clock_mhz = clocks.empty() ? 0 : median(clocks);
  return m;
}

// `plan`'s kernel timed on the `got` SMs of the green context current on this thread (`timer`'s
// stream is that context's), as a share of the whole-device measurement: "dram_read.16sm".
template <class ArgsFor>
CalibrationMeasurement timed_share(const Plan& plan, int got, const ArgsFor& args_for, Timer& timer,
                                   const CalibrateOptions& options,
                                   kernels::MicroKernelArgs& args) {
  int per_sm = 0;
  ROOFLINE_CUDA_CALL(kernels::micro_kernel_blocks_per_sm(plan.kernel, &per_sm));
  args = args_for(plan, per_sm * got);
  CalibrationMeasurement m = timed(plan, args, timer, options);
  m.id = std::string(plan.id) + "." + std::to_string(got) + "sm";
  m.method = plan.method + "; alone on a green context of " + std::to_string(got) + " SMs";
  m.sms = got;
  m.share_of = plan.id;
  return m;
}

// Shares of the SMs: the DRAM and L2 read kernels, the DRAM copy (loads and stores) and the
// DRAM write (stores alone), alone on a green context of each count of kShareSms below the device's
// (the driver rounds a count up to its granularity; a count it rounds to twice is measured once).
// What a few SMs draw of a level all SMs share is less than the whole device's: the level's share
// curve (sm_share.hpp, from the read kernels). The copy's and the write's shares are kept beside
// it: a share limits stores far below loads (on 40 of an H100's 132 SMs a GEMM's stores of S drew
// 39 GB/s per SM, its loads of P the whole DRAM), which a curve of loads cannot say. The buffers
// are the primary context's, which a green context shares; the stream and events are the green
// context's own, so every launch runs on its SMs. Without green contexts: a warning, and no curve.
template <class ArgsFor>
void measure_shares(const CalibrateOptions& options, int sms, const std::vector<Plan>& plans,
                    const ArgsFor& args_for, const DeviceBuffer& clock,
                    CalibrationOverlay& overlay) {
  std::set<int> measured;
  for (const int asked : kShareSms) {
    if (asked >= sms) break;
    std::optional<GreenContext> green;
    try {
      green.emplace(options.device, asked);
    } catch (const GpuUnavailableError& error) {
      spdlog::warn("calibrate: no bandwidth on a share of the SMs (no green context: {})",
                   error.what());
      return;
    }
    const int got = green->sm_count();
    if (got >= sms || !measured.insert(got).second) continue;
    const Stream stream;
    Timer timer(stream, clock);
    for (const Plan& plan : plans) {
      if (plan.kernel != MicroKernel::kDramRead && plan.kernel != MicroKernel::kDramCopy &&
          plan.kernel != MicroKernel::kDramWrite && plan.kernel != MicroKernel::kL2Read)
        continue;
      kernels::MicroKernelArgs args;
      CalibrationMeasurement m = timed_share(plan, got, args_for, timer, options, args);
      if (options.progress)
        options.progress(m.id + ": " + rate_text(m, m.rate_per_second(), got, m.sm_clock_mhz) +
                         " on " + std::to_string(got) + " of " + std::to_string(sms) + " SMs");
      overlay.measurements.push_back(std::move(m));
    }
  }
}

// The DRAM level's stream curve (gpu_spec.hpp, MemoryLevelSpec::stream): `plan`'s read kernel
// over one pass of kStreamFirstBytes, twice that, ... up to `max_bytes`, each launch after
// `run`'s L2 flush (kernels::flush_l2 over twice the L2, at least 64 MiB) on the same stream and
// timed by CUDA events around it, as `run` times a launch: options.reps launches after an untimed
// one. What a kernel timed so can take at least to move that many bytes: far above bytes ÷
// bandwidth at a few MB, within a few percent at 1 GiB.
constexpr std::size_t kStreamFirstBytes = std::size_t{4} << 20;

void measure_stream(const CalibrateOptions& options, const Plan& plan,
                    kernels::MicroKernelArgs args, std::size_t l2, std::size_t max_bytes,
                    Timer& timer, const Stream& stream, CalibrationOverlay& overlay) {
  DeviceBuffer flush(std::max<std::size_t>(2 * l2, std::size_t{64} << 20));
  ROOFLINE_CUDA_CALL(cudaMemsetAsync(flush.get(), 0, flush.bytes(), stream.get()));
  std::string line;
  for (std::size_t bytes = kStreamFirstBytes; bytes <= max_bytes; bytes *= 2) {
    args.bytes = bytes;
    args.iterations = 1;
    CalibrationMeasurement m;
    m.id = std::string(plan.id) + "." + std::to_string(bytes >> 20) + "MiB";
    m.target = plan.target;
    m.method = "one pass over " + mib(bytes) + " by " + plan.id +
               ", after run's L2 flush, timed as run times a launch";
    m.work = kernels::micro_kernel_work(plan.kernel, args);
    m.stream_of = plan.id;
    std::vector<double> clocks;
    for (int rep = 0; rep <= options.reps; ++rep) {
      ROOFLINE_CUDA_CALL(kernels::flush_l2(flush.get(), flush.bytes(), stream.get()));
      const Sample sample = timer.run(plan.kernel, args);
      if (rep == 0) continue;  // the first launch of a size warms its code and TLB entries
      m.samples_seconds.push_back(sample.seconds);
      if (sample.clock_mhz > 0) clocks.push_back(sample.clock_mhz);
    }
    m.sm_clock_mhz = clocks.empty() ? 0 : median(clocks);
    line += (line.empty() ? "" : ", ") + mib(bytes) + " " +
            format_fixed(m.median_seconds() * 1e6, 1) + " µs";
    overlay.measurements.push_back(std::move(m));
  }
  if (options.progress && !line.empty())
    options.progress(std::string(plan.id) + " stream (one pass, as run times a launch): " + line);
}

// `calibrate --energy`: a compute kernel that drew the board's power limit on the whole device
// ran at the cap's lower clock and voltage, where a FLOP costs less than at the full clock a
// kernel below the cap runs at. Its energy is measured again alone on a green context of half
// the SMs, then a quarter, then an eighth, until the board draws less than kAtPowerLimit of the
// limit at the full clock (within 2% of the fastest NVML clock any compute kernel held back to
// back in this calibration: on an H100 the wgmma kernel on 72 SMs drew 619 W, yet heat held it
// at 1770 MHz): the price of its FLOP at the clock of a kernel that is not capped
// (calibration_energy.cpp prefers the last share, the fewest SMs; the energy model bounds a
// launch whose terms would draw more by the limit). Each share is a measurement of its own
// (share_of the whole-device one), whatever it drew.
template <class ArgsFor>
void measure_below_cap(const CalibrateOptions& options, int sms, const std::vector<Plan>& plans,
                       const ArgsFor& args_for, const DeviceBuffer& clock, void* nvml,
                       double limit_watts, CalibrationOverlay& overlay) {
  if (!(limit_watts > 0)) return;
  double full_clock = 0;
  for (const CalibrationMeasurement& m : overlay.measurements)
    if (m.power_cap) full_clock = std::max(full_clock, m.power_cap->sm_clock_mhz);
  for (const Plan& plan : plans) {
    if (!plan.flops || !plan.energy) continue;
    const auto whole = std::find_if(
        overlay.measurements.begin(), overlay.measurements.end(),
        [&](const CalibrationMeasurement& m) { return m.sms == 0 && m.id == plan.id; });
    if (whole == overlay.measurements.end() || !whole->energy ||
        whole->energy->watts < kAtPowerLimit * limit_watts)
      continue;
    int last = sms;
    for (const int asked : {sms / 2, sms / 4, sms / 8}) {
      std::optional<GreenContext> green;
      try {
        green.emplace(options.device, std::max(1, asked));
      } catch (const GpuUnavailableError& error) {
        spdlog::warn(
            "calibrate --energy: {} at the power cap, and no green context to measure it "
            "below the cap ({}): its FLOPs are priced at the cap's clock",
            plan.id, error.what());
        return;
      }
      const int got = green->sm_count();
      if (got >= last) continue;
      last = got;
      const Stream stream;
      Timer timer(stream, clock);
      kernels::MicroKernelArgs args;
      CalibrationMeasurement m = timed_share(plan, got, args_for, timer, options, args);
      BackToBackRun run;
      const EnergyMeasurement e = measure_back_to_back(
          nvml, stream.get(),
          [&] {
            ROOFLINE_CUDA_CALL(kernels::launch_micro_kernel(plan.kernel, args, stream.get()));
          },
          m.median_seconds(), EnergyWindow{}, &run);
      m.method += " (the whole device ran it at the power cap): back to back at " +
                  format_fixed(run.clocks.median_mhz(), 0) + " MHz (NVML median" +
                  (run.clocks.limit().empty() || run.clocks.limit() == "none"
                       ? std::string()
                       : "; clock held down by: " + run.clocks.limit()) +
                  ")";
      if (e.watts > 0) m.energy = e;
      if (options.progress)
        options.progress(m.id + ": " + (m.energy ? watts_line(e) : std::string("no energy")) +
                         " on " + std::to_string(got) + " of " + std::to_string(sms) + " SMs at " +
                         format_fixed(run.clocks.median_mhz(), 0) + " MHz");
      const bool below = m.energy && m.energy->watts < kAtPowerLimit * limit_watts &&
                         run.clocks.median_mhz() >= 0.98 * full_clock;
      overlay.measurements.push_back(std::move(m));
      if (below) break;
    }
  }
}

}  // namespace

CalibrationOverlay calibrate(const CalibrateOptions& options, const DeviceInfo& device,
                             const std::string& spec_key) {
  if (options.reps < 1) throw InputError("--reps must be at least 1");
  const auto wall_start = std::chrono::steady_clock::now();
  ROOFLINE_CUDA_CALL(cudaSetDevice(options.device));
  int sms = 0, l2_bytes = 0;
  ROOFLINE_CUDA_CALL(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, options.device));
  ROOFLINE_CUDA_CALL(cudaDeviceGetAttribute(&l2_bytes, cudaDevAttrL2CacheSize, options.device));
  std::size_t free_bytes = 0, total_bytes = 0;
  ROOFLINE_CUDA_CALL(cudaMemGetInfo(&free_bytes, &total_bytes));

  // DRAM: two buffers of at least 1 GiB and 16 L2 sizes each, so no pass finds its data in L2.
  // L2: a quarter of the L2, read over and over (the far half of a split L2 included).
  const std::size_t l2 = static_cast<std::size_t>(std::max(l2_bytes, 1 << 20));
  std::size_t dram_bytes = std::max<std::size_t>(std::size_t{1} << 30, 16 * l2);
  dram_bytes = std::min(dram_bytes, free_bytes / 4) / 4096 * 4096;
  constexpr std::size_t kChunkBytes = std::size_t{16} << kernels::kMicroKernelChunkShift;
  const std::size_t l2_read_bytes = l2 / 4 / kChunkBytes * kChunkBytes;
  if (dram_bytes < 4 * l2 || l2_read_bytes == 0)
    throw GpuUnavailableError("calibrate: " + mib(free_bytes) +
                              " of free device memory is too little for the DRAM micro-kernel");
  DeviceBuffer src(dram_bytes), dst(dram_bytes), clock(2 * sizeof(unsigned long long)),
      sink(sizeof(unsigned int));
  // The bytes the bundled kernels read (FP16 uniform in [-1, 1), as `run` fills its inputs):
  // a constant pattern toggles no bit from one beat to the next and draws less power than the
  // traffic it stands for (kernels/calibration.cu).
  ROOFLINE_CUDA_CALL(kernels::fill_random(src.get(), kernels::DType::kFp16, dram_bytes / 2, 0xCA11B,
                                          1.0f, nullptr));
  ROOFLINE_CUDA_CALL(cudaMemset(dst.get(), 0, dram_bytes));
  ROOFLINE_CUDA_CALL(cudaMemset(clock.get(), 0, clock.bytes()));
  ROOFLINE_CUDA_CALL(cudaDeviceSynchronize());
  Stream stream;
  Timer timer(stream, clock);

  const std::vector<Plan> plans = {
      {MicroKernel::kDramRead, "dram_read", "dram", false,
       "16-byte ld.global.cg over " + mib(dram_bytes) + " (read only)"},
      {MicroKernel::kDramReadBulk, "dram_read_bulk", "dram", false,
       "32 KiB bulk copies (TMA) to shared memory over " + mib(dram_bytes) +
           " (read only), one CTA per SM, 4 in flight"},
      {MicroKernel::kDramCopy, "dram_copy", "dram", false,
       "16-byte ld.global.cg + st.global, " + mib(dram_bytes) + " to " + mib(dram_bytes) +
           " (read + write)",
       false},
      {MicroKernel::kDramWrite, kDramWriteId, "dram", false,
       "16-byte st.global over " + mib(dram_bytes) + " (write only)"},
      {MicroKernel::kL2Read, "l2_read", "l2", false,
       "16-byte ld.global.cg over " + mib(l2_read_bytes) +
           " resident in L2 (64 KiB chunks spread over " + mib(dram_bytes) + "), repeated"},
      {MicroKernel::kL2Reduce, kL2ReduceId, "l2", false,
       "FP32 reductions (red.global.add, float2 on sm_90) over " + mib(l2_read_bytes) +
           " resident in L2 (64 KiB chunks spread over " + mib(dram_bytes) + "), repeated"},
      {MicroKernel::kSharedRead, "shared_read", "l1", false,
       "conflict-free 16-byte ld.shared, 32 KiB per block"},
      {MicroKernel::kFp32Fma, "fp32_ffma", "fp32", true, "8 independent FFMA chains per thread"},
      {MicroKernel::kFp16Fma, "fp16_hfma2", "fp16_cuda_core", true,
       "8 independent HFMA2 chains per thread"},
      {MicroKernel::kMmaSync, "mma_sync", "tensor_fp16.mma_sync", true,
       "4 independent mma.sync.m16n8k16 f32.f16.f16.f32 chains per warp"},
      {MicroKernel::kMmaSyncBf16, "mma_sync_bf16", "tensor_bf16.mma_sync", true,
       "4 independent mma.sync.m16n8k16 f32.bf16.bf16.f32 chains per warp"},
      {MicroKernel::kWgmma, "wgmma", "tensor_fp16.wgmma", true,
       "wgmma.mma_async m64n256k16 f32.f16.f16 from shared memory, 2 warpgroups per SM"},
      {MicroKernel::kExp2, "xu_exp2", kXuTarget, true,
       "8 independent ex2.approx.ftz.f32 (MUFU.EX2) chains per thread"},
      {MicroKernel::kIntAlu, "int_alu", kIntTarget, true,
       "8 independent integer chains per thread, x = (x xor m) + k: LOP3 and IADD3, thread "
       "instructions counted"},
  };

  CalibrationOverlay overlay;
  overlay.spec_key = spec_key;
  overlay.device = device;
  void* nvml = nullptr;
  bool read_energy = false;
  if (options.energy || options.power_cap) {
    nvml = nvml::device_handle(options.device);
    if (nvml == nullptr)
      spdlog::warn(
          "calibrate --{}: NVML is not available on this device: no power-capped roofs{} (the "
          "roofs are calibrated as without it)",
          options.energy ? "energy" : "power-cap", options.energy ? " and no energies" : "");
    read_energy = options.energy && nvml != nullptr;
    if (read_energy && !nvml::total_energy_mj(nvml)) {
      spdlog::warn(
          "calibrate --energy: NVML's energy counter is not available on this device: no energy "
          "coefficients (the power-capped roofs are still measured)");
      read_energy = false;
    }
  }
  // A plan's arguments for a grid of `blocks` (their iterations sized by timed()).
  const auto args_for = [&](const Plan& plan, int blocks) {
    kernels::MicroKernelArgs args;
    args.blocks = blocks;
    args.clock = clock.as<unsigned long long>();
    args.sink = sink.as<unsigned int>();
    args.src = src.get();
    args.dst = dst.get();
    const bool in_l2 = plan.kernel == MicroKernel::kL2Read || plan.kernel == MicroKernel::kL2Reduce;
    args.bytes = in_l2 ? l2_read_bytes : dram_bytes;
    if (in_l2)
      while ((l2_read_bytes << (args.chunk_shift + 1 - kernels::kMicroKernelChunkShift)) <=
             dram_bytes)
        ++args.chunk_shift;
    return args;
  };
  for (const Plan& plan : plans) {
    int per_sm = 0;
    ROOFLINE_CUDA_CALL(kernels::micro_kernel_blocks_per_sm(plan.kernel, &per_sm));
    if (per_sm <= 0) {
      if (options.progress) options.progress(std::string(plan.id) + ": not on this device");
      continue;
    }
    kernels::MicroKernelArgs args = args_for(plan, per_sm * sms);
    CalibrationMeasurement m = timed(plan, args, timer, options);
    // Back to back: for the energy counter (memory kernels too) and, on a compute pipe, the
    // rate and SM clock the board settles at under that pipe's load.
    const bool energy = read_energy && plan.energy;
    if (nvml != nullptr && (energy || m.flops)) {
      EnergyWindow window;
      window.read_energy = energy;
      BackToBackRun run;
      const EnergyMeasurement e = measure_back_to_back(
          nvml, stream.get(),
          [&] {
            ROOFLINE_CUDA_CALL(kernels::launch_micro_kernel(plan.kernel, args, stream.get()));
          },
          m.median_seconds(), window, &run);
      if (energy) {
        if (e.watts > 0) m.energy = e;
        if (options.progress)
          options.progress(std::string(plan.id) + ": " +
                           (m.energy ? watts_line(e)
                                     : std::string("no energy: fewer than two counter updates in "
                                                   "the window")));
      }
      if (m.flops && run.launches > 0 && run.seconds_per_launch > 0) {
        m.power_cap = PowerCapMeasurement{run.seconds_per_launch,
                                          run.window_seconds,
                                          run.launches,
                                          run.clocks.median_mhz(),
                                          static_cast<int>(run.clocks.sm_clock_mhz.size()),
                                          run.clocks.limit()};
        if (options.progress)
          options.progress(
              std::string(plan.id) + ": back to back " + format_fixed(run.window_seconds, 2) +
              " s: " + rate_text(m, m.power_cap_rate_per_second(), sms, m.power_cap->sm_clock_mhz) +
              " at " + format_fixed(m.power_cap->sm_clock_mhz, 0) + " MHz (NVML median" +
              (m.power_cap->clock_limit.empty()
                   ? std::string()
                   : "; clock held down by: " + m.power_cap->clock_limit) +
              ")");
      }
    }
    if (options.progress)
      options.progress(std::string(plan.id) + ": " +
                       rate_text(m, m.rate_per_second(), sms, m.sm_clock_mhz) + " at " +
                       format_fixed(m.sm_clock_mhz, 0) + " MHz");
    overlay.measurements.push_back(std::move(m));
  }
  // The stream curve by the DRAM read kernel of the higher rate (the bulk copies where this
  // device has them): the DRAM roof's own.
  const Plan* stream_plan = nullptr;
  double stream_rate = 0;
  for (const Plan& plan : plans)
    for (const CalibrationMeasurement& m : overlay.measurements)
      if (m.id == plan.id &&
          (plan.kernel == MicroKernel::kDramRead || plan.kernel == MicroKernel::kDramReadBulk) &&
          m.rate_per_second() > stream_rate) {
        stream_plan = &plan;
        stream_rate = m.rate_per_second();
      }
  if (stream_plan != nullptr) {
    int per_sm = 0;
    ROOFLINE_CUDA_CALL(kernels::micro_kernel_blocks_per_sm(stream_plan->kernel, &per_sm));
    measure_stream(options, *stream_plan, args_for(*stream_plan, per_sm * sms), l2, dram_bytes,
                   timer, stream, overlay);
  }
  measure_shares(options, sms, plans, args_for, clock, overlay);
  if (read_energy) {
    measure_below_cap(options, sms, plans, args_for, clock, nvml,
                      nvml::enforced_power_limit_watts(nvml).value_or(0), overlay);
    EnergyWindow idle_window;
    idle_window.settle_seconds = kIdleSettleSeconds;
    const EnergyMeasurement idle = measure_back_to_back(
        nvml, stream.get(),
        [&] { ROOFLINE_CUDA_CALL(kernels::spin_cycles(kIdleSpinCycles, stream.get())); }, 5e-4,
        idle_window);
    if (idle.watts > 0) {
      overlay.static_power = CalibrationOverlay::StaticPower{
          "active idle: one thread of one block spinning " + std::to_string(kIdleSpinCycles) +
              " cycles on the SM's cycle counter (kernels::spin_cycles), launched back to back "
              "after the micro-kernels, " +
              format_fixed(kIdleSettleSeconds, 1) + " s to settle",
          idle, nvml::enforced_power_limit_watts(nvml).value_or(0)};
      if (options.progress) options.progress("active idle (static) power: " + watts_line(idle));
    } else {
      spdlog::warn(
          "calibrate --energy: no static power (fewer than two energy counter updates while the "
          "GPU idled): no energy coefficients");
    }
  }
  overlay.duration_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  derive_ceilings(overlay);
  for (const std::string& line : derive_energy_coefficients(overlay))
    spdlog::warn("calibrate --energy: no coefficient for {}", line);
  return overlay;
}

}  // namespace roofline::gpu
