// MetricHost, the host half of the CUPTI range profiler: needs libcupti, no GPU and no driver.
// Checks that every metric the catalogue relies on exists on GA100 and GH100, that the
// recommended sets fit in 3 replay passes, and that bad input is an error, never a crash.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "lib/core/domain/metric_catalog.hpp"
#include "lib/gpu/range_profiler.hpp"

namespace {

using roofline::gpu::MetricHost;
using roofline::gpu::ProfilerError;
using roofline::gpu::ProfilerErrorKind;

// The metrics the tool collects come from the catalogue (lib/core/domain/metric_catalog.cpp), the
// one place that names them; these tests check them against this CUPTI's host library.
std::vector<std::string> recommended(const std::string& chip) {
  return roofline::catalogue_metrics(chip, roofline::CounterSet::kFull);
}

// A counter-data header as CUPTI 13.0 lays it out (cupti/counter_data_image.cpp): signature, layout
// words 24/1, range table at 0x100 with the first range at 0x200, 0x100 bytes per range and
// `ranges` recorded. Room for 14 ranges in 4096 bytes.
std::vector<std::uint8_t> synthetic_header(std::uint32_t ranges) {
  std::vector<std::uint8_t> image(4096, 0);
  std::memcpy(image.data(), "LOPDATA", 8);
  const std::uint32_t words[2] = {24, 1};
  std::memcpy(image.data() + 8, words, sizeof words);
  const std::uint32_t table = 0x100;
  std::memcpy(image.data() + 0x38, &table, sizeof table);
  const std::uint64_t first = 0x200, per_range = 0x100;
  std::memcpy(image.data() + table + 0x08, &first, sizeof first);
  std::memcpy(image.data() + table + 0x10, &per_range, sizeof per_range);
  std::memcpy(image.data() + table + 0x20, &ranges, sizeof ranges);
  return image;
}

ProfilerErrorKind evaluate_failure(const std::vector<std::uint8_t>& image) {
  try {
    MetricHost("GH100").evaluate(image, {"dram__bytes_read.sum"});
  } catch (const ProfilerError& error) {
    return error.kind();
  }
  return ProfilerErrorKind::kOther;
}

ProfilerErrorKind kind_of_failure(const std::string& chip) {
  try {
    MetricHost host(chip);
  } catch (const ProfilerError& error) {
    return error.kind();
  }
  return ProfilerErrorKind::kOther;
}

}  // namespace

TEST_CASE("metric_host: GA100 and GH100 are supported chips") {
  const auto chips = MetricHost::supported_chips();
  CHECK(std::find(chips.begin(), chips.end(), "GA100") != chips.end());
  CHECK(std::find(chips.begin(), chips.end(), "GH100") != chips.end());
  CHECK(MetricHost("GH100").chip() == "GH100");
}

TEST_CASE("metric_host: an unknown chip is an unsupported device") {
  CHECK(kind_of_failure("GX999") == ProfilerErrorKind::kUnsupportedDevice);
  CHECK(kind_of_failure("gh100") == ProfilerErrorKind::kUnsupportedDevice);  // case-sensitive
  CHECK(kind_of_failure("") == ProfilerErrorKind::kUnsupportedDevice);
  try {
    MetricHost host("GX999");
    FAIL("no exception");
  } catch (const ProfilerError& error) {
    CHECK(std::string(error.what()).find("GX999") != std::string::npos);
    CHECK(std::string(error.what()).find("GH100") != std::string::npos);  // lists the known
  }
}

TEST_CASE("metric_host: every catalogue metric exists on its chip") {
  for (const std::string chip : {"GA100", "GH100"}) {
    MetricHost host(chip);
    for (const auto& metric : recommended(chip)) {
      INFO(chip << " " << metric);
      CHECK(host.has_metric(metric));
    }
  }
}

TEST_CASE("metric_host: names of one chip's tensor paths do not exist on the other") {
  MetricHost ga100("GA100");
  MetricHost gh100("GH100");
  CHECK_FALSE(ga100.has_metric("sm__ops_path_tensor_op_hgmma_src_fp16_sparsity_off.sum"));
  CHECK_FALSE(gh100.has_metric("sm__ops_path_tensor_src_fp16_dst_fp32_sparsity_off.sum"));
}

TEST_CASE("metric_host: has_metric wants a full name and survives a bad one") {
  MetricHost host("GH100");
  CHECK_FALSE(host.has_metric("dram__bytes_read"));  // a counter needs its rollup
  CHECK_FALSE(host.has_metric("dram__bytes_read.bogus"));
  CHECK_FALSE(host.has_metric("no_such__metric.sum"));
  CHECK_FALSE(host.has_metric(""));
  CHECK(host.has_metric("dram__bytes_read.sum"));  // a rejected name poisons nothing
  CHECK(host.has_metric("dram__bytes_read.sum.per_second"));
}

TEST_CASE("metric_host: the default roofline set needs one pass, the full set three") {
  for (const std::string chip : {"GA100", "GH100"}) {
    MetricHost host(chip);
    const auto lean = roofline::catalogue_metrics(chip, roofline::CounterSet::kRoofline);
    const auto full = roofline::catalogue_metrics(chip, roofline::CounterSet::kFull);
    const int lean_passes = host.num_passes(host.config_image(lean));
    const int full_passes = host.num_passes(host.config_image(full));
    MESSAGE(chip << ": roofline set " << lean.size() << " metrics in " << lean_passes
                 << " pass(es); full set " << full.size() << " metrics in " << full_passes);
    CHECK(lean_passes == 1);
    CHECK(full_passes <= 3);
  }
}

TEST_CASE("metric_host: the XU pipe and shared wavefronts by operation ride in the full set") {
  // Issue 23: sm__inst_executed_pipe_xu makes GH100's default set two passes, and each hardware
  // shared-wavefront metric (l1tex__data_pipe_lsu_wavefronts_mem_shared*) costs a pass of its
  // own; in the full set, beside the SASS-instrumented pass, neither adds one.
  MetricHost gh100("GH100");
  auto lean = roofline::catalogue_metrics("GH100", roofline::CounterSet::kRoofline);
  lean.push_back("sm__inst_executed_pipe_xu.sum");
  CHECK(gh100.num_passes(gh100.config_image(lean)) == 2);
  CHECK(gh100.num_passes(
            gh100.config_image({"l1tex__data_pipe_lsu_wavefronts_mem_shared.sum",
                                "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_gmma.sum"})) == 2);
  for (const std::string chip : {"GA100", "GH100"}) {
    INFO(chip);
    MetricHost host(chip);
    const auto full = roofline::catalogue_metrics(chip, roofline::CounterSet::kFull);
    CHECK(std::find(full.begin(), full.end(), "sm__inst_executed_pipe_xu.sum") != full.end());
    // The total is the hardware counter ncu reads (every operation), not a sum of op_* terms.
    const auto terms = roofline::metric_terms(chip, roofline::quantity::kSharedWavefronts);
    REQUIRE(terms.size() == 1);
    CHECK(terms[0].metric == "l1tex__data_pipe_lsu_wavefronts_mem_shared.sum");
    CHECK(host.has_metric(terms[0].metric));
    CHECK(host.num_passes(host.config_image(full)) == 3);
  }
  const auto full = roofline::catalogue_metrics("GH100", roofline::CounterSet::kFull);
  CHECK(std::find(full.begin(), full.end(),
                  "sm__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_gmma.sum") != full.end());
}

TEST_CASE("metric_host: the recommended set needs at most 3 passes") {
  for (const std::string chip : {"GA100", "GH100"}) {
    MetricHost host(chip);
    const auto metrics = recommended(chip);
    const auto image = host.config_image(metrics);
    CHECK_FALSE(image.empty());
    const int passes = host.num_passes(image);
    MESSAGE(chip << ": " << metrics.size() << " metrics, " << passes << " passes, config "
                 << image.size() << " bytes");
    CHECK(passes >= 1);
    CHECK(passes <= 3);
    // Images do not accumulate across calls: the same set gives the same image.
    CHECK(host.config_image(metrics) == image);
  }
}

TEST_CASE("metric_host: an unknown metric is named in the error") {
  MetricHost host("GH100");
  std::vector<std::string> metrics = recommended("GH100");
  metrics.push_back("sm__no_such_metric.sum");
  try {
    host.config_image(metrics);
    FAIL("no exception");
  } catch (const ProfilerError& error) {
    CHECK(error.kind() == ProfilerErrorKind::kUnknownMetric);
    CHECK(std::string(error.what()).find("sm__no_such_metric.sum") != std::string::npos);
  }
  CHECK_THROWS_AS(host.config_image({}), ProfilerError);
  CHECK_THROWS_AS(host.num_passes({}), ProfilerError);
}

TEST_CASE("metric_host: garbage counter data is rejected, not a crash") {
  MetricHost host("GH100");
  const std::vector<std::string> metrics = {"dram__bytes_read.sum"};
  std::vector<std::vector<std::uint8_t>> garbage = {
      {},
      std::vector<std::uint8_t>(8, 0),
      std::vector<std::uint8_t>(64, 0xff),
      std::vector<std::uint8_t>(4096, 0),
      std::vector<std::uint8_t>(65536, 0xff),
  };
  std::vector<std::uint8_t> noise(1 << 20);
  std::uint32_t state = 12345;
  for (auto& byte : noise) {
    state = state * 1664525u + 1013904223u;
    byte = static_cast<std::uint8_t>(state >> 24);
  }
  garbage.push_back(noise);
  for (const auto& image : garbage) {
    INFO(image.size() << " bytes");
    try {
      host.evaluate(image, metrics);
      FAIL("no exception");
    } catch (const ProfilerError& error) {
      CHECK(error.kind() == ProfilerErrorKind::kBadCounterData);
    }
  }
}

TEST_CASE("metric_host: a counter-data header that points outside the image is rejected") {
  CHECK(MetricHost("GH100").evaluate(synthetic_header(0), {"dram__bytes_read.sum"}).empty());

  auto too_many = synthetic_header(1000);  // CUPTI reports 1000; 14 fit
  CHECK(evaluate_failure(too_many) == ProfilerErrorKind::kBadCounterData);

  auto table_outside = synthetic_header(0);
  const std::uint32_t far = 1u << 20;
  std::memcpy(table_outside.data() + 0x38, &far, sizeof far);
  CHECK(evaluate_failure(table_outside) == ProfilerErrorKind::kBadCounterData);

  auto other_layout = synthetic_header(0);
  other_layout[8] = 25;
  CHECK(evaluate_failure(other_layout) == ProfilerErrorKind::kBadCounterData);

  auto no_signature = synthetic_header(0);
  no_signature[0] = 'X';
  CHECK(evaluate_failure(no_signature) == ProfilerErrorKind::kBadCounterData);

  auto truncated = synthetic_header(0);
  truncated.resize(0x40);
  CHECK(evaluate_failure(truncated) == ProfilerErrorKind::kBadCounterData);
}

// ROOFLINE_COUNTER_DATA_DIR: where the build unpacked tests/data/cupti/*.tar.xz.
TEST_CASE("metric_host: an image recorded on an H200 evaluates offline") {
#ifdef ROOFLINE_COUNTER_DATA_DIR
  const std::string path =
      std::string(ROOFLINE_COUNTER_DATA_DIR) +
      "/gh100_empty_8ranges_23metrics/gh100_empty_8ranges_23metrics.counterdata";
  std::ifstream file(path, std::ios::binary);
  REQUIRE_MESSAGE(file.good(), "missing fixture " << path);
  const std::vector<std::uint8_t> image((std::istreambuf_iterator<char>(file)),
                                        std::istreambuf_iterator<char>());
  REQUIRE(image.size() == 2388244);
  MetricHost host("GH100");
  // Recorded right after the counter data was initialised: a valid image with no range yet.
  CHECK(host.evaluate(image, recommended("GH100")).empty());

  auto too_many = image;
  const std::uint32_t ranges = 9;  // the image has room for 8
  std::memcpy(too_many.data() + 0x354 + 0x20, &ranges, sizeof ranges);
  CHECK(evaluate_failure(too_many) == ProfilerErrorKind::kBadCounterData);
#else
  MESSAGE("skipped: ROOFLINE_COUNTER_DATA_DIR not defined (unpack tests/data/cupti/*.tar.xz)");
#endif
}
