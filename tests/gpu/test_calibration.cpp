// `calibrate` on a real GPU: every micro-kernel runs, its work count is plausible against the
// physical limits of the device's spec at the clock it ran at, and the overlay round-trips and
// applies to that spec. No speed is asserted. Skipped (exit code 77) without a CUDA device.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <algorithm>

#include <cstdio>

#include <cuda_runtime_api.h>
#include <nlohmann/json.hpp>

#include "lib/core/model/roofline.hpp"
#include "lib/core/report/calibration.hpp"
#include "lib/core/report/calibration_energy.hpp"
#include "lib/gpu/calibration_runner.hpp"
#include "lib/gpu/device.hpp"

using namespace roofline;

namespace {

// Device 0, the spec it matches, and its calibration (short: 3 launches of each kernel), with
// what `calibrate` (app/cmd_calibrate.cpp) adds before writing the file.
struct Calibrated {
  SpecRegistry registry;
  DeviceInfo device;
  gpu::SpecChoice choice;
  CalibrationOverlay overlay;

  explicit Calibrated(bool energy) {
    registry.add_directory(default_specs_dir());
    device = gpu::detect_device(0);
    choice = gpu::choose_spec(registry, device, 0, std::nullopt);
    gpu::CalibrateOptions options;
    options.reps = 3;
    options.sample_seconds = 0.005;
    options.energy = energy;
    overlay = gpu::calibrate(options, device, choice.spec.key);
    overlay.tool_version = "test";
    overlay.time_utc = "now";
  }
};

}  // namespace

TEST_CASE("calibrate: every roof measured, within the device's physical limits") {
  const Calibrated run(false);
  const gpu::SpecChoice& choice = run.choice;
  const CalibrationOverlay& overlay = run.overlay;
  CHECK(overlay.spec_key == choice.spec.key);
  CHECK(overlay.duration_seconds > 0);

  const bool hopper = run.device.compute_capability == "9.0";
  std::vector<std::string> expected = {"dram_read"};
  if (hopper) expected.push_back("dram_read_bulk");
  for (const char* id : {"dram_copy", "dram_write", "l2_read", "l2_reduce", "shared_read",
                         "fp32_ffma", "fp16_hfma2", "mma_sync", "mma_sync_bf16"})
    expected.push_back(id);
  if (hopper) expected.push_back("wgmma");
  expected.push_back("xu_exp2");
  expected.push_back("int_alu");
  // The whole device's measurements first, then the DRAM stream (one pass of each size), then
  // the DRAM and L2 reads, the DRAM copy and the DRAM write on shares of the SMs.
  std::vector<CalibrationMeasurement> whole, stream, shares;
  for (const CalibrationMeasurement& m : overlay.measurements)
    (m.sms > 0 ? shares : m.stream_of.empty() ? whole : stream).push_back(m);
  REQUIRE(whole.size() == expected.size());
  CHECK(overlay.measurements.size() == whole.size() + stream.size() + shares.size());
  // The stream: 4 MiB to 1 GiB or more by the faster DRAM read kernel, each size's time rising
  // with it and no rate above the sheet's DRAM figure; the DRAM level's curve is made of them.
  REQUIRE(stream.size() >= 9);
  const double sheet_dram = choice.spec.dram().bandwidth_gbps * 1e9;
  for (std::size_t i = 0; i < stream.size(); ++i) {
    const CalibrationMeasurement& m = stream[i];
    CAPTURE(m.id);
    CHECK(m.stream_of == (hopper ? "dram_read_bulk" : "dram_read"));
    CHECK(m.target == "dram");
    CHECK(m.samples_seconds.size() == 3);
    CHECK(m.rate_per_second() < 1.05 * sheet_dram);
    if (i > 0) {
      CHECK(m.work == 2 * stream[i - 1].work);
      CHECK(m.median_seconds() > stream[i - 1].median_seconds());
    }
    MESSAGE(m.id << ": " << m.median_seconds() * 1e6 << " µs, " << m.rate_per_second() / 1e9
                 << " GB/s");
  }
  CHECK(stream.front().work == 4 << 20);
  CHECK(stream.back().work >= 1 << 30);
  CHECK(overlay.measurements.front().sms == 0);
  CHECK(overlay.measurements[whole.size() - 1].sms == 0);
  for (const CalibrationMeasurement& m : shares) {
    CAPTURE(m.id);
    CHECK((m.share_of == "dram_read" || m.share_of == "dram_copy" || m.share_of == "dram_write" ||
           m.share_of == "l2_read"));
    CHECK(m.sms < run.device.sm_count);
    CHECK(m.rate_per_second() > 0);
  }
  // Green contexts (CUDA 12.4+): each level all SMs share gets its curve, rising to all of them.
  if (!shares.empty())
    for (const MemoryLevel level : {MemoryLevel::kDram, MemoryLevel::kL2}) {
      const auto it = std::find_if(overlay.memory.begin(), overlay.memory.end(),
                                   [&](const MemoryLevelSpec& l) { return l.level == level; });
      REQUIRE(it != overlay.memory.end());
      REQUIRE(it->shares.size() >= 2);
      CHECK(it->shares.back().sms == run.device.sm_count);
      CHECK(it->shares.front().gbps < it->shares.back().gbps);
      CHECK(it->shares_source.find(level == MemoryLevel::kDram ? "read only" : "resident in L2") !=
            std::string::npos);  // the read kernel's curve, not the copy's
    }
  const auto count_of = [&](const char* kernel) {
    return std::count_if(shares.begin(), shares.end(),
                         [&](const CalibrationMeasurement& m) { return m.share_of == kernel; });
  };
  if (!shares.empty()) {
    CHECK(count_of("dram_copy") == count_of("dram_read"));
    CHECK(count_of("dram_write") == count_of("dram_read"));
  }
  for (std::size_t i = 0; i < expected.size(); ++i) {
    const CalibrationMeasurement& m = whole[i];
    CAPTURE(m.id);
    CHECK(m.id == expected[i]);
    CHECK(m.samples_seconds.size() == 3);
    CHECK(m.rate_per_second() > 0);
    // The SM clock block 0 measured is a real clock.
    CHECK(m.sm_clock_mhz > 200);
    CHECK(m.sm_clock_mhz < 4000);
  }
  // Against the device's own spec: a roof measured above the sheet's figure (at the clock it
  // ran at, for compute) by more than a few percent means a wrong work count.
  if (!choice.projection && choice.note.empty()) {
    const GpuSpec& sheet = choice.spec;
    for (const MemoryLevelSpec& level : overlay.memory)
      if (const MemoryLevelSpec* s = sheet.level(level.level)) {
        CAPTURE(to_string(level.level));
        CHECK(level.bandwidth_gbps < 1.05 * s->bandwidth_gbps);
        CHECK(level.bandwidth_gbps > 0.2 * s->bandwidth_gbps);
      }
    for (const ComputeCeiling& ceiling : overlay.compute)
      if (const ComputeCeiling* s = sheet.ceiling(ceiling.path, ceiling.instruction)) {
        CAPTURE(ceiling.id());
        const double limit =
            peak_at_clock(s->peak_tflops, s->clock_mhz * 1e6, ceiling.clock_mhz * 1e6);
        CHECK(ceiling.peak_tflops < 1.05 * limit);
        CHECK(ceiling.peak_tflops > 0.2 * limit);
      }
  }
  // The exponential unit: at most the sheet's exp2 per clock and SM (16 from sm_70 on).
  if (choice.spec.xu_exp2_per_clock_per_sm > 0) {
    CHECK(overlay.xu_exp2_per_clock_per_sm < 1.05 * choice.spec.xu_exp2_per_clock_per_sm);
    CHECK(overlay.xu_exp2_per_clock_per_sm > 0.5 * choice.spec.xu_exp2_per_clock_per_sm);
  }
  // The integer chains (an energy coefficient, no roof): on sm_90, at most 128 thread
  // instructions per clock and SM (the ALU's 64 lanes for the xors, the FMA pipe's 64 for the
  // adds, IMAD.IADD in CUDA 13.0's SASS): more would mean a wrong instruction count.
  for (const CalibrationMeasurement& m : overlay.measurements)
    if (m.target == kIntTarget && hopper) {
      const double per_clock_and_sm =
          m.rate_per_second() / (m.sm_clock_mhz * 1e6 * run.device.sm_count);
      CHECK(per_clock_and_sm < 1.05 * 128);
      CHECK(per_clock_and_sm > 0.5 * 128);
    }
  for (const ComputeCeiling& ceiling : overlay.compute) CHECK(ceiling.id() != kIntTarget);
  // The reductions' rate is no roof: L2's comes from the read.
  for (const MemoryLevelSpec& level : overlay.memory)
    CHECK(level.source.find("reductions") == std::string::npos);
  // DRAM and L2 are levels of the overlay; the L2 read beats DRAM.
  const CalibrationOverlay reread = parse_calibration(to_json(overlay), "gpu-test");
  const GpuSpec calibrated = apply_calibration(choice.spec, reread);
  REQUIRE(calibrated.dram().stream.size() == stream.size());
  CHECK(calibrated.dram().stream_source.find(stream.front().stream_of) != std::string::npos);
  // A large read nears the level's bandwidth; a small one does not (its launch and ramp).
  CHECK(calibrated.dram().stream.back().bytes / calibrated.dram().stream.back().seconds <
        1.05 * calibrated.dram().bandwidth_gbps * 1e9);
  CHECK(calibrated.dram().stream.front().bytes / calibrated.dram().stream.front().seconds <
        calibrated.dram().stream.back().bytes / calibrated.dram().stream.back().seconds);
  REQUIRE(calibrated.level(MemoryLevel::kL2) != nullptr);
  CHECK(calibrated.level(MemoryLevel::kL2)->bandwidth_gbps > calibrated.dram().bandwidth_gbps);
  CHECK(calibrated.ceiling(ComputePath::kTensorFp16, TensorInstruction::kMmaSync)
            ->source.find("calibrated on") == 0);
}

TEST_CASE("calibrate --energy: each kernel's power, the static power and the coefficients") {
  const Calibrated run(true);
  const gpu::SpecChoice& choice = run.choice;
  const CalibrationOverlay& overlay = run.overlay;
  if (!overlay.static_power) {
    // No NVML energy counter here (calibrate warned): the roofs alone, as without --energy.
    MESSAGE("no NVML energy counter on this device: energy not checked");
    CHECK_FALSE(overlay.energy);
    CHECK_FALSE(overlay.memory.empty());
    return;
  }
  const EnergyMeasurement& idle = overlay.static_power->energy;
  CHECK(idle.watts > 0);
  CHECK(idle.updates >= 2);
  CHECK(overlay.static_power->method.find("spin") != std::string::npos);
  for (const CalibrationMeasurement& m : overlay.measurements) {
    CAPTURE(m.id);
    // The copy's bytes are priced by the read's and the write's (calibration_runner.cpp), a
    // memory level's share of the SMs measures a share curve and a stream point the DRAM level's
    // stream curve: measured for their rates alone.
    if (m.id == "dram_copy" || (m.sms > 0 && !m.flops) || !m.stream_of.empty()) {
      CHECK_FALSE(m.energy);
      continue;
    }
    // A compute pipe's share: measured again below the power cap its whole-device kernel drew.
    if (m.sms > 0) {
      REQUIRE(m.energy);
      CHECK(m.sms < run.device.sm_count);
      const auto whole =
          std::find_if(overlay.measurements.begin(), overlay.measurements.end(),
                       [&](const CalibrationMeasurement& w) { return w.id == m.share_of; });
      REQUIRE(whole != overlay.measurements.end());
      REQUIRE(whole->energy);
      CHECK(overlay.static_power->power_limit_watts > 0);
      CHECK(whole->energy->watts >= kAtPowerLimit * overlay.static_power->power_limit_watts);
      MESSAGE(m.id << ": " << m.energy->watts << " W on " << m.sms << " SMs, the whole device "
                   << whole->energy->watts << " W");
      continue;
    }
    REQUIRE(m.energy);
    CHECK(m.energy->updates >= 2);
    CHECK(m.energy->window_seconds > 0.5);
    CHECK(m.energy->seconds_per_launch > 0);
    // A board draws at most a few kW.
    CHECK(m.energy->watts < 5000);
  }
  // The DRAM kernel works the board harder than a spinning thread does, whatever the GPU.
  REQUIRE(overlay.energy);
  REQUIRE(overlay.energy->byte(MemoryLevel::kDram) != nullptr);
  // Physical sanity, not a measurement: between 1 fJ and 1 nJ per byte.
  CHECK(*overlay.energy->byte(MemoryLevel::kDram) > 1e-15);
  CHECK(*overlay.energy->byte(MemoryLevel::kDram) < 1e-9);
  CHECK(overlay.energy->joules_per_int_instruction > 1e-15);
  CHECK(overlay.energy->joules_per_int_instruction < 1e-9);
  // A byte written and a byte reduced in L2 measured apart; a bulk-copied byte on Hopper, and
  // no dearer than a byte loaded through the SM (it skips the load path).
  CHECK(overlay.energy->joules_per_dram_write_byte > 1e-15);
  CHECK(overlay.energy->joules_per_dram_write_byte < 1e-9);
  CHECK(overlay.energy->joules_per_l2_reduction_byte > 1e-15);
  CHECK(overlay.energy->joules_per_l2_reduction_byte < 1e-9);
  if (run.device.compute_capability == "9.0") {
    CHECK(overlay.energy->joules_per_bulk_dram_byte > 1e-15);
    CHECK(overlay.energy->joules_per_bulk_dram_byte <
          1.05 * *overlay.energy->byte(MemoryLevel::kDram));
  }
  const CalibrationOverlay reread = parse_calibration(to_json(overlay), "gpu-test");
  REQUIRE(reread.energy);
  CHECK(*reread.energy == *overlay.energy);
  CHECK(apply_calibration(choice.spec, reread).energy == overlay.energy);
}

int main(int argc, char** argv) {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    std::printf("SKIPPED: no CUDA device (gpu_calibration_tests)\n");
    return 77;
  }
  doctest::Context context(argc, argv);
  return context.run();
}
