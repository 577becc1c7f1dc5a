// The kernels of one launch (Row::kernels, `run`'s kernel pass): kept through JSON, refused when
// malformed, and printed under the table for rows that run more than one kernel.
#include <doctest/doctest.h>

#include <filesystem>

#include <nlohmann/json.hpp>

#include "lib/core/base/errors.hpp"
#include "lib/core/base/text.hpp"
#include "lib/core/domain/point_kernels.hpp"
#include "lib/core/report/report_read.hpp"
#include "lib/core/writers/kernel_section.hpp"
#include "lib/core/writers/report_writers.hpp"

using namespace roofline;

namespace {

Report head_report() {
  return read_report_file(std::filesystem::path(ROOFLINE_TEST_DATA_DIR) / "reports" / "head.json");
}

PointKernel kernel(std::string name, std::array<int, 3> grid, int threads, int registers,
                   std::int64_t shared, double seconds, double start) {
  return {std::move(name), grid, {threads, 1, 1}, registers, shared, seconds, start};
}

// The standard path's three kernels at 25.7 µs a launch (as cuBLAS and the softmax run them).
std::vector<PointKernel> three_kernels() {
  return {kernel("sm90_xmma_gemm_f16f16_f16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1",
                 {8, 8, 8}, 128, 168, 98304, 6.1e-6, 0),
          kernel("void roofline::kernels::softmax_rows<__half>(__half const*, __half*, int)",
                 {8192, 1, 1}, 256, 32, 0, 12.3e-6, 8.4e-6),
          kernel("sm90_xmma_gemm_f16f16_f16f32_f32_nn_n_tilesize128x64x64_warpgroupsize1x1x1",
                 {8, 16, 1}, 128, 154, 65536, 5.2e-6, 22.5e-6)};
}

}  // namespace

TEST_CASE("point kernels: JSON keeps them, old reports read without them, bad ones refused") {
  Report report = head_report();
  REQUIRE(report.rows.size() > 1);
  report.rows[0].kernels = three_kernels();
  const Report back = report_from_text(render_json(report), "kernels.json");
  CHECK(back.rows[0].kernels == report.rows[0].kernels);
  CHECK(back.rows[1].kernels.empty());
  nlohmann::json j = nlohmann::json::parse(render_json(report));
  CHECK_FALSE(j["rows"][1].contains("kernels"));  // written only where recorded
  j["rows"][0]["kernels"] = nullptr;
  CHECK(report_from_text(j.dump(), "null.json").rows[0].kernels.empty());
  const nlohmann::json good = nlohmann::json::parse(render_json(report))["rows"][0]["kernels"];
  const auto refused = [&](const char* what, auto change) {
    CAPTURE(what);
    nlohmann::json bad = nlohmann::json::parse(render_json(report));
    nlohmann::json kernels = good;
    change(kernels);
    bad["rows"][0]["kernels"] = kernels;
    CHECK_THROWS_AS(report_from_text(bad.dump(), "bad.json"), InputError);
  };
  refused("not an array", [](nlohmann::json& k) { k = nlohmann::json::object(); });
  refused("a grid of two", [](nlohmann::json& k) { k[0]["grid"] = {8, 8}; });
  refused("a block of zero", [](nlohmann::json& k) { k[0]["block"] = {0, 1, 1}; });
  refused("a negative time", [](nlohmann::json& k) { k[1]["seconds"] = -1e-6; });
  refused("an unknown key", [](nlohmann::json& k) { k[2]["ctas"] = 128; });
  refused("no name", [](nlohmann::json& k) { k[0].erase("name"); });
  refused("300 registers", [](nlohmann::json& k) { k[0]["registers_per_thread"] = 300; });
}

TEST_CASE("point kernels: the section lists each kernel of multi-kernel rows and the idle time") {
  Report report = head_report();
  CHECK(render_kernels(report).empty());
  report.rows[1].kernels = {three_kernels()[1]};  // one kernel: nothing to break down
  CHECK(render_kernels(report).empty());
  REQUIRE(report.rows[0].timing);
  report.rows[0].timing->samples_seconds = {25.7e-6, 25.6e-6, 25.8e-6};
  report.rows[0].kernels = three_kernels();
  const std::string text = render_kernels(report);
  CAPTURE(text);
  CHECK(text.find("3 kernels in 25.7 µs a launch") != std::string::npos);
  CHECK(text.find("12.3 µs  48%  void roofline::kernels::softmax_rows") != std::string::npos);
  CHECK(text.find("grid 8x8x8, 128 threads, 168 registers, 96 KiB shared") != std::string::npos);
  // 25.7 - (6.1 + 12.3 + 5.2) = 2.1 µs when no kernel of it ran.
  CHECK(text.find("2.1 µs   8%  no kernel of it ran") != std::string::npos);
  Report projected = report;
  projected.context.projection = true;
  CHECK(render_kernels(projected).empty());
  // At 80 columns every line fits, the names cut.
  for (const std::string& line : split(render_kernels(report, 80), '\n')) {
    CAPTURE(line);
    CHECK(display_width(line) <= 80);
  }
}

TEST_CASE("point kernels: a kernel started beside an earlier one is counted once") {
  // A split flash-decode on sm_90: the combine, a programmatic dependent launch, is resident 50 µs
  // into the 175 µs split kernel and waits for it, ending 2 µs after it.
  std::vector<PointKernel> kernels = {
      kernel("flash_decode_kernel", {1, 4, 64}, 128, 108, 50176, 175e-6, 0),
      kernel("flash_decode_combine_kernel", {256, 1, 1}, 128, 28, 2048, 127e-6, 50e-6)};
  CHECK(kernels_seconds(kernels) == doctest::Approx(302e-6));
  CHECK(kernels_busy_seconds(kernels) == doctest::Approx(177e-6));
  CHECK(overlap_with_earlier_seconds(kernels, 0) == 0);
  CHECK(overlap_with_earlier_seconds(kernels, 1) == doctest::Approx(125e-6));
  CHECK(overlap_with_earlier_seconds(kernels, 2) == 0);  // no such kernel
  // Apart, nothing overlaps; a kernel inside an earlier one overlaps wholly; gaps stay gaps.
  CHECK(overlap_with_earlier_seconds(three_kernels(), 1) == 0);
  CHECK(overlap_with_earlier_seconds(three_kernels(), 2) == 0);
  CHECK(kernels_busy_seconds(three_kernels()) == doctest::Approx(kernels_seconds(three_kernels())));
  const std::vector<PointKernel> inside = {kernel("a", {1, 1, 1}, 32, 8, 0, 10e-6, 0),
                                           kernel("b", {1, 1, 1}, 32, 8, 0, 2e-6, 3e-6),
                                           kernel("c", {1, 1, 1}, 32, 8, 0, 4e-6, 12e-6)};
  CHECK(overlap_with_earlier_seconds(inside, 1) == doctest::Approx(2e-6));
  CHECK(overlap_with_earlier_seconds(inside, 2) == 0);
  CHECK(kernels_busy_seconds(inside) == doctest::Approx(14e-6));

  Report report = head_report();
  REQUIRE(report.rows[0].timing);
  report.rows[0].timing->samples_seconds = {181e-6, 180e-6, 182e-6};
  report.rows[0].kernels = kernels;
  const std::string text = render_kernels(report);
  CAPTURE(text);
  CHECK(text.find("175 µs  97%  flash_decode_kernel") != std::string::npos);
  // The combine's share is its 2 µs past the split kernel, its overlap said on the next line.
  CHECK(text.find("127 µs   1%  flash_decode_combine_kernel") != std::string::npos);
  CHECK(text.find("125 µs of it beside the kernels before it") != std::string::npos);
  // 181 - 177 µs when no kernel ran (the sum of their times would leave none).
  CHECK(text.find("4.0 µs   2%  no kernel of it ran") != std::string::npos);
  for (const std::size_t width : {80, 120})
    for (const std::string& line : split(render_kernels(report, width), '\n')) {
      CAPTURE(line);
      CHECK(display_width(line) <= width);
    }
}
