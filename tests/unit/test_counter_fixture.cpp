// The seed sweep's counters, recorded on an H200 (GH100) with the full counter set and
// evaluated here with CUPTI's host half: no GPU needed. The analysis of the evaluated counters
// must place each kernel where its design says it lands.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>

#include "lib/core/base/errors.hpp"
#include "lib/core/report/report_read.hpp"
#include "lib/core/verdict/analysis.hpp"
#include "lib/gpu/counter_data_file.hpp"
#include "lib/gpu/range_profiler.hpp"
#include "tests/unit/helpers.hpp"

using namespace roofline;

namespace {

const std::filesystem::path kFixture =
    std::filesystem::path(ROOFLINE_COUNTER_DATA_DIR) / "gh100_seed_sweep";

}  // namespace

TEST_CASE("counter fixture: every range evaluates offline to the recorded report's counters") {
  const gpu::RecordedCounters recorded = gpu::load_counter_data(kFixture);
  CHECK(recorded.chip == "GH100");
  CHECK(recorded.counter_passes == 3);
  // Every recorded metric is the catalogue's. A recording made before quantities joined the
  // full set (issue 23: xu_instructions, shared_wavefronts) lacks theirs until it is recorded
  // again (`device_check.sh build fixture`); those quantities are then absent, not wrong.
  const auto catalogue = catalogue_metrics("GH100", CounterSet::kFull);
  for (const std::string& metric : recorded.metrics)
    CHECK(std::find(catalogue.begin(), catalogue.end(), metric) != catalogue.end());
  std::size_t recorded_quantities = 0;
  for (const std::string& id : catalogue_quantities("GH100", CounterSet::kFull)) {
    bool all = true;
    for (const MetricTerm& term : metric_terms("GH100", id, CounterSet::kFull))
      all = all && std::find(recorded.metrics.begin(), recorded.metrics.end(), term.metric) !=
                       recorded.metrics.end();
    recorded_quantities += all ? 1 : 0;
  }
  const auto ranges = gpu::evaluate_counter_data(recorded);
  const Report report = read_report_file(kFixture / "report.json");
  REQUIRE(ranges.size() == 24);
  REQUIRE(recorded.range_rows.size() == 24);
  for (std::size_t i = 0; i < ranges.size(); ++i) {
    const Row& row = report.rows.at(recorded.range_rows[i]);
    CAPTURE(row.kernel + " " + row.workload.label());
    CHECK(ranges[i].size() == recorded_quantities);
    for (const auto& [quantity, value] : row.counters)
      CHECK(ranges[i].at(quantity) == doctest::Approx(value).epsilon(1e-12));
  }
}

TEST_CASE("counter fixture: the analysis of the recorded counters") {
  const gpu::RecordedCounters recorded = gpu::load_counter_data(kFixture);
  const auto ranges = gpu::evaluate_counter_data(recorded);
  Report report = read_report_file(kFixture / "report.json");
  for (std::size_t i = 0; i < ranges.size(); ++i)
    report.rows[recorded.range_rows[i]].counters = ranges[i];
  for (const Row& row : report.rows) {
    CAPTURE(row.kernel + " " + row.workload.label());
    const RowAnalysis a = analyze(row, report.spec_for(row));
    REQUIRE(a.ceiling != nullptr);
    const double dram =
        row.counters.at(quantity::kDramRead) + row.counters.at(quantity::kDramWrite);
    CHECK(a.dram()->bytes == dram);
    CHECK(a.dram()->intensity == doctest::Approx(a.flops / dram));
    CHECK(a.levels.size() == 3);  // DRAM, L2, L1 all counted
    if (row.kernel == "flash-v2") {
      // mma.sync on the tensor pipe; counted FLOPs within the model's tile count, and exactly
      // the algorithmic count when nothing is masked.
      CHECK(a.ceiling->id() == "tensor_fp16.mma_sync");
      CHECK(a.flops <= row.prediction.model_flops * 1.0000001);
      if (!row.workload.causal) CHECK(a.flops == doctest::Approx(row.prediction.algorithmic_flops));
      CHECK(a.compute_bound);
    } else if (row.kernel == "standard") {
      // cuBLAS uses wgmma on Hopper. Once S and P (2·8·N² bytes each) outgrow the 60 MB L2
      // they make it memory-bound on DRAM, with counted DRAM bytes near the model's; at
      // N = 1024 they fit in L2 and the kernel is not DRAM-bound.
      CHECK(a.ceiling->id() == "tensor_fp16.wgmma");
      CHECK(a.flops ==
            doctest::Approx(4.0 * 8 * row.workload.seq_len * double(row.workload.seq_len) * 64));
      if (row.workload.seq_len >= 4096) {
        CHECK(a.regime == "memory-bound (DRAM)");
        CHECK(a.dram_bytes_vs_model == doctest::Approx(1.0).epsilon(0.25));
      } else {
        CHECK(a.dram_bytes_vs_model < 0.5);
      }
    } else {
      // flash-v1: FP32 on CUDA cores, no tensor work.
      CHECK(a.ceiling->id() == "fp32");
      CHECK(row.counters.at(quantity::kTensorMmaSync) == 0);
      CHECK(a.flops >= row.prediction.model_flops);
      CHECK(a.compute_bound);
    }
    // Flash kernels read K/V once per query tile from L2, not DRAM: counted DRAM bytes are
    // within 2x of the compulsory bytes at N >= 4096, far below the model's reload traffic.
    if (row.kernel != "standard" && row.workload.seq_len >= 4096) {
      CHECK(dram < 2 * row.prediction.compulsory_dram_bytes);
      CHECK(row.counters.at(quantity::kL2) > 0.5 * row.prediction.model_dram_bytes);
    }
  }
}

TEST_CASE("counter fixture: corrupt or mismatched recordings are errors, not crashes") {
  TempDir dir;
  for (const char* name : {"fixture.json", "counter_data.bin"})
    std::filesystem::copy_file(kFixture / name, dir.path / name);
  std::string image = read_text(dir.path / "counter_data.bin");

  SUBCASE("a flipped byte fails the checksum before CUPTI parses the image") {
    image[image.size() / 2] = static_cast<char>(image[image.size() / 2] ^ 0x40);
    write_text(dir.path / "counter_data.bin", image);
    CHECK_THROWS_WITH_AS(gpu::load_counter_data(dir.path), doctest::Contains("does not match"),
                         InputError);
  }
  SUBCASE("a truncated image is refused by size") {
    write_text(dir.path / "counter_data.bin", image.substr(0, image.size() - 100));
    CHECK_THROWS_WITH_AS(gpu::load_counter_data(dir.path), doctest::Contains("fixture.json says"),
                         InputError);
  }
  SUBCASE("a missing file is named") {
    std::filesystem::remove(dir.path / "counter_data.bin");
    CHECK_THROWS_WITH_AS(gpu::load_counter_data(dir.path), doctest::Contains("counter_data.bin"),
                         InputError);
  }
  SUBCASE("a metric list that does not match the image leaves quantities unmeasured") {
    gpu::RecordedCounters recorded = gpu::load_counter_data(dir.path);
    recorded.metrics.back() = "sm__cycles_elapsed.max";  // not in the recorded config
    const auto ranges = gpu::evaluate_counter_data(recorded);
    REQUIRE(ranges.size() == 24);
    CHECK(ranges[0].count(quantity::kTensorWgmma) == 0);  // its last term evaluated to NaN
    CHECK(ranges[0].count(quantity::kDramRead) == 1);
  }
}
