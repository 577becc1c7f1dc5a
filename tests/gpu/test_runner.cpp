// The Runner and `cuflash-roofline run` on a real GPU: rows, verification, counters, memory
// limits. Skipped (exit code 77) without a CUDA device.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <chrono>
#include <cstdio>

#include <cuda_runtime_api.h>

#include "lib/core/base/errors.hpp"
#include "lib/core/domain/metric_catalog.hpp"
#include "lib/core/domain/point_kernels.hpp"
#include "lib/core/model/model.hpp"
#include "lib/gpu/nvml.hpp"
#include "lib/gpu/runner.hpp"

using namespace roofline;

namespace {

Workload workload(int n, bool causal, Pass pass = Pass::kForward) {
  Workload w;
  w.batch = 1;
  w.heads = 4;
  w.seq_len = n;
  w.head_dim = 64;
  w.causal = causal;
  w.pass = pass;
  return w;
}

// The analytic model of a row's kernel and workload: the runner measures, add_rows (assemble.hpp)
// attaches the model with the judging spec; these checks need no spec.
Prediction model_of(const Row& row) {
  return predict(find_kernel_model(row.kernel), row.workload);
}

}  // namespace

TEST_CASE("runner: counters after the first round give the rows they give after the last") {
  // `run --devices` staggers its workers' counter passes (RunOptions::counters_after_round):
  // the rows must not depend on when the counters ran, and the rounds after them must still
  // time the points on their own inputs (the arena is freed in between).
  std::vector<gpu::SweepPoint> points;
  for (const char* kernel : {"standard", "flash-v2"})
    for (int n : {1000, 2048}) points.push_back({kernel, workload(n, false, Pass::kBackward)});
  gpu::RunOptions late;
  late.reps = 6;
  late.rounds = 3;
  late.verify = true;
  gpu::RunOptions early = late;
  early.counters_after_round = 0;
  const gpu::RunResult a = gpu::run_sweep(points, late);
  const gpu::RunResult b = gpu::run_sweep(points, early);
  REQUIRE(a.rows.size() == points.size());
  REQUIRE(b.rows.size() == points.size());
  CHECK(b.counters_measured);
  for (std::size_t i = 0; i < points.size(); ++i) {
    CAPTURE(points[i].kernel);
    CAPTURE(points[i].workload.label());
    CHECK(b.rows[i].status == RowStatus::kOk);
    REQUIRE(b.rows[i].timing.has_value());
    CHECK(b.rows[i].timing->samples_seconds.size() == 6);
    CHECK(b.rows[i].verification->passed);
    // Tensor FLOPs are exact; DRAM bytes close (small points: a few MB, which vary by process).
    CHECK(b.rows[i].counters.at(quantity::kTensorMmaSync) +
              b.rows[i].counters.at(quantity::kTensorWgmma) ==
          a.rows[i].counters.at(quantity::kTensorMmaSync) +
              a.rows[i].counters.at(quantity::kTensorWgmma));
    const double dram_a =
        a.rows[i].counters.at(quantity::kDramRead) + a.rows[i].counters.at(quantity::kDramWrite);
    const double dram_b =
        b.rows[i].counters.at(quantity::kDramRead) + b.rows[i].counters.at(quantity::kDramWrite);
    CHECK(dram_b / dram_a == doctest::Approx(1).epsilon(0.25));
    // The later rounds timed the same work: medians within a factor of 1.5.
    const double ta = a.rows[i].timing->median_seconds();
    const double tb = b.rows[i].timing->median_seconds();
    CHECK(tb / ta < 1.5);
    CHECK(ta / tb < 1.5);
  }
}

TEST_CASE("runner: every kernel, verified and timed, with counters in one sweep") {
  std::vector<gpu::SweepPoint> points;
  for (const KernelModel& model : kernel_models())
    for (Pass pass : {Pass::kForward, Pass::kBackward})
      points.push_back({model.name, workload(1000, true, pass)});
  gpu::RunOptions options;
  options.reps = 5;
  options.verify = true;
  options.counter_set = CounterSet::kFull;  // FP32 FLOPs too (SASS-instrumented)
  const gpu::RunResult result = gpu::run_sweep(points, options);
  REQUIRE(result.rows.size() == points.size());
  CHECK(result.counter_passes >= 1);
  CHECK(result.counter_passes <= 3);
  CHECK(result.counters_measured);
  for (const Row& row : result.rows) {
    CAPTURE(row.kernel);
    CAPTURE(row.workload.label());
    CAPTURE(row.message);
    // flash-v3 runs on sm_90 only: its rows elsewhere say why and carry no measurement.
    const std::string why = unsupported_reason(find_kernel_model(row.kernel), row.workload,
                                               result.device.compute_capability);
    if (!why.empty()) {
      CHECK(row.status == RowStatus::kUnsupported);
      CHECK(row.message == why);
      CHECK_FALSE(row.timing.has_value());
      continue;
    }
    CHECK(row.status == RowStatus::kOk);
    REQUIRE(row.timing.has_value());
    CHECK(row.timing->samples_seconds.size() == 5);
    REQUIRE(row.verification.has_value());
    CHECK(row.verification->passed);
    // Counted DRAM traffic is at least most of the compulsory bytes (inputs read once).
    const double dram =
        row.counters.at(quantity::kDramRead) + row.counters.at(quantity::kDramWrite);
    CHECK(dram > 0.5 * model_of(row).compulsory_dram_bytes);
    CHECK(row.counters.at(quantity::kGpuTime) > 0);
    CHECK(row.counters.at(quantity::kSmClock) > 1e8);
  }
  // flash-v2 forward does its FLOPs on the tensor pipe with mma.sync: the counted tensor FLOPs
  // match the model's tile count to within a few percent.
  const Row& v2 = result.rows[4];
  REQUIRE(v2.kernel == "flash-v2");
  const double tensor = v2.counters.at(quantity::kTensorMmaSync);
  CHECK(tensor / model_of(v2).model_flops == doctest::Approx(1.0).epsilon(0.15));
  // flash-v1 runs on CUDA cores: no tensor FLOPs, FP32 FLOPs at least the model's.
  const Row& v1 = result.rows[2];
  CHECK(v1.counters.at(quantity::kTensorMmaSync) == 0);
  CHECK(v1.counters.at(quantity::kFp32Flops) >= 0.9 * model_of(v1).model_flops);
  // flash-v3 forward (on sm_90) does its FLOPs with wgmma alone: whole 128 x 128 tiles, the
  // padding past N included in the model.
  const Row& v3 = result.rows[6];
  REQUIRE(v3.kernel == "flash-v3");
  if (v3.status == RowStatus::kOk) {
    CHECK(v3.counters.at(quantity::kTensorMmaSync) == 0);
    CHECK(v3.counters.at(quantity::kTensorWgmma) / model_of(v3).model_flops ==
          doctest::Approx(1.0).epsilon(0.15));
  }
  // flash-v3 backward: all five GEMMs on wgmma; whole 64-key x 64-query tiles per warpgroup
  // (0.2% above the model's tile count at this shape).
  const Row& v3_bwd = result.rows[7];
  REQUIRE(v3_bwd.kernel == "flash-v3");
  REQUIRE(v3_bwd.workload.pass == Pass::kBackward);
  if (v3_bwd.status == RowStatus::kOk) {
    CHECK(v3_bwd.counters.at(quantity::kTensorMmaSync) == 0);
    CHECK(v3_bwd.counters.at(quantity::kTensorWgmma) / model_of(v3_bwd).model_flops ==
          doctest::Approx(1.0).epsilon(0.15));
  }
}

TEST_CASE("runner: the kernels of each launch, from CUPTI's activity records") {
  const std::vector<gpu::SweepPoint> points = {{"standard", workload(1024, false)},
                                               {"flash-v2", workload(1024, false)}};
  gpu::RunOptions options;
  options.reps = 5;
  const gpu::RunResult result = gpu::run_sweep(points, options);
  REQUIRE(result.rows.size() == 2);
  CHECK(result.counters.find("kernels of each launch") != std::string::npos);
  // The standard path: cuBLAS's S = Q·Kᵀ, our softmax, cuBLAS's O = P·V, in that order (cuBLAS
  // may add a kernel of its own to a GEMM).
  const Row& standard = result.rows[0];
  REQUIRE(standard.status == RowStatus::kOk);
  REQUIRE(standard.kernels.size() >= 3);
  std::size_t softmax = 0;
  for (std::size_t k = 0; k < standard.kernels.size(); ++k)
    if (standard.kernels[k].name.find("softmax_forward") != std::string::npos) softmax = k;
  CHECK(softmax > 0);
  CHECK(softmax + 1 < standard.kernels.size());
  CHECK(standard.kernels[0].start_seconds == 0);
  for (std::size_t k = 0; k < standard.kernels.size(); ++k) {
    CAPTURE(standard.kernels[k].name);
    CHECK(standard.kernels[k].seconds > 0);
    CHECK(standard.kernels[k].grid[0] >= 1);
    CHECK(standard.kernels[k].registers_per_thread > 0);
    if (k > 0) CHECK(standard.kernels[k].start_seconds >= standard.kernels[k - 1].start_seconds);
  }
  // Their execution is most of the launch's time and no more than it (medians of other
  // launches: a tenth of slack).
  const double time = standard.timing->median_seconds();
  CHECK(kernels_seconds(standard.kernels) < 1.1 * time);
  CHECK(kernels_seconds(standard.kernels) > 0.3 * time);
  // flash-v2's forward is one kernel, B·H·(query tiles) CTAs.
  const Row& v2 = result.rows[1];
  REQUIRE(v2.status == RowStatus::kOk);
  REQUIRE(v2.kernels.size() == 1);
  CHECK(v2.kernels[0].name.find("flash_v2_forward_kernel") != std::string::npos);
  CHECK(v2.kernels[0].seconds < 1.1 * v2.timing->median_seconds());
  // Without CUPTI (--no-counters, so that ncu can profile the run): none recorded.
  options.counters = gpu::CounterMode::kOff;
  const gpu::RunResult off = gpu::run_sweep(points, options);
  for (const Row& row : off.rows) CHECK(row.kernels.empty());
}

TEST_CASE("runner: the default counter set measures bytes and tensor FLOPs in one pass") {
  gpu::RunOptions options;
  options.reps = 3;
  const gpu::RunResult result = gpu::run_sweep(
      {{"flash-v2", workload(2048, false)}, {"standard", workload(2048, true)}}, options);
  CHECK(result.counter_passes == 1);
  for (const Row& row : result.rows) {
    CAPTURE(row.kernel);
    CHECK(row.status == RowStatus::kOk);
    CHECK(row.counters.count(quantity::kFp32Flops) == 0);
    CHECK(row.counters.at(quantity::kL2) > 0);
  }
  CHECK(result.rows[0].counters.at(quantity::kTensorMmaSync) ==
        doctest::Approx(model_of(result.rows[0]).algorithmic_flops));
  CHECK(result.rows[1].counters.at(quantity::kTensorWgmma) > 0);
}

TEST_CASE(
    "runner: --settle runs each point before each round, and the clock while timed is sampled") {
  std::vector<gpu::SweepPoint> points = {{"flash-v2", workload(4096, false)}};
  points[0].workload.heads = 16;
  gpu::RunOptions options;
  options.reps = 4;
  options.rounds = 2;
  options.counters = gpu::CounterMode::kOff;
  options.settle_seconds = 0.25;
  const auto start = std::chrono::steady_clock::now();
  const gpu::RunResult result = gpu::run_sweep(points, options);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  REQUIRE(result.rows.size() == 1);
  REQUIRE(result.rows[0].status == RowStatus::kOk);
  const Timing& t = *result.rows[0].timing;
  CHECK(t.samples_seconds.size() == 4);
  CHECK(seconds >= 2 * options.settle_seconds);  // once before each of the two rounds
  if (gpu::nvml::device_handle(0) == nullptr) {
    MESSAGE("no NVML here: the clock while timed is unknown");
    CHECK(t.sm_clock_timed_mhz == 0);
    return;
  }
  // A real clock (H200: 345 at rest to 1980), and one of the limit's words.
  CHECK(t.sm_clock_timed_mhz > 100);
  CHECK(t.sm_clock_timed_mhz < 5000);
  CHECK(is_clock_limit(t.clock_limit));
}

TEST_CASE("runner: a workload that cannot fit is too_large and the sweep goes on") {
  std::vector<gpu::SweepPoint> points = {{"standard", workload(1 << 20, false)},
                                         {"flash-v2", workload(256, false)}};
  points[0].workload.heads = 64;  // S alone would be 64 × 2^40 × 2 bytes
  gpu::RunOptions options;
  options.reps = 2;
  options.counters = gpu::CounterMode::kOff;
  const gpu::RunResult result = gpu::run_sweep(points, options);
  REQUIRE(result.rows.size() == 2);
  CHECK(result.rows[0].status == RowStatus::kTooLarge);
  CHECK(result.rows[0].message.find("of device memory") != std::string::npos);
  CHECK(result.rows[1].status == RowStatus::kOk);
  CHECK(result.counters.rfind("off", 0) == 0);
}

TEST_CASE("runner: a device ordinal that does not exist is an input error") {
  gpu::RunOptions options;
  options.device = 99;
  CHECK_THROWS_AS(gpu::run_sweep({{"flash-v2", workload(64, false)}}, options), InputError);
}

TEST_CASE("runner: the energy per launch of a bundled kernel, from the board's counter") {
  const std::vector<gpu::SweepPoint> points = {{"flash-v2", workload(4096, false)}};
  gpu::RunOptions options;
  options.reps = 3;
  options.rounds = 1;
  options.counters = gpu::CounterMode::kOff;
  options.energy = true;
  const gpu::RunResult result = gpu::run_sweep(points, options);
  const Row& row = result.rows.at(0);
  if (result.counters.find("energy unavailable") != std::string::npos) {
    MESSAGE("no NVML energy counter here: " << result.counters);
    return;
  }
  REQUIRE(row.energy.has_value());
  const EnergyMeasurement& e = *row.energy;
  CHECK(e.updates >= 5);  // a window of about a second, steps ~100 ms apart
  CHECK(e.watts > 30);    // a board running a kernel draws tens of watts at least
  CHECK(e.watts < 2000);  // and no GPU draws kilowatts
  CHECK(e.window_seconds > 0.5);
  CHECK(e.seconds_per_launch > 0);
  // Back to back, a launch takes about its timed time (a few µs of gap at most).
  CHECK(e.seconds_per_launch < 2 * row.timing->median_seconds() + 20e-6);
  CHECK(e.joules_per_launch == doctest::Approx(e.watts * e.seconds_per_launch));
}

int main(int argc, char** argv) {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    std::printf("SKIPPED: no CUDA device (gpu_runner_tests)\n");
    return 77;
  }
  doctest::Context context(argc, argv);
  return context.run();
}
