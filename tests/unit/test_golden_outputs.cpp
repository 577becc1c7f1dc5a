// Golden outputs: every writer's text for fixed inputs, compared byte for byte with files under
// tests/data/golden/. They pin what the tool writes (report JSON, CSV and table; compare's
// table, Markdown and JSON; profile records; calibration files), so that a refactoring of a
// writer or reader shows up here as a diff. After an intended change of output, regenerate:
//   ROOFLINE_UPDATE_GOLDEN=1 ctest --preset nocuda -R golden
// and review `git diff tests/data/golden` before committing it.
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "lib/core/compare/compare.hpp"
#include "lib/core/compare/compare_writers.hpp"
#include "lib/core/domain/metric_catalog.hpp"
#include "lib/core/report/calibration.hpp"
#include "lib/core/report/merge.hpp"
#include "lib/core/report/report_read.hpp"
#include "lib/core/writers/report_writers.hpp"
#include "lib/profile/profile_protocol.hpp"
#include "tests/unit/helpers.hpp"

using namespace roofline;

namespace {

const std::filesystem::path kGoldenDir = std::filesystem::path(ROOFLINE_TEST_DATA_DIR) / "golden";

// `actual` against tests/data/golden/<name>, or written there under ROOFLINE_UPDATE_GOLDEN.
void check_golden(const std::string& name, const std::string& actual) {
  const std::filesystem::path path = kGoldenDir / name;
  if (std::getenv("ROOFLINE_UPDATE_GOLDEN") != nullptr) {
    std::filesystem::create_directories(kGoldenDir);
    write_text(path, actual);
    return;
  }
  REQUIRE_MESSAGE(std::filesystem::exists(path), "missing golden file " << path.string());
  const std::string expected = read_text(path);
  CHECK_MESSAGE(actual == expected, "output differs from " << path.string());
}

// Context fields that change with every run (host, time, tool version), made fixed.
void fix_context(ReportContext& context) {
  context.host = "golden-host";
  context.time_utc = "2026-12-01T00:00:00Z";
  context.tool_version = "0.0.0-golden";
}

Report fixture(const std::string& name) {
  return read_report_file(std::filesystem::path(ROOFLINE_TEST_DATA_DIR) / "reports" / name);
}

// Two profiled launches of another program (as `profile` writes them).
Report launch_report() {
  SpecRegistry registry;
  registry.add_directory(ROOFLINE_TEST_SPECS_DIR);
  Report report;
  report.context = make_context("profile");
  fix_context(report.context);
  report.context.device =
      DeviceInfo{"NVIDIA H200", "GH100", "9.0", 132, 150754820096, 62914560, "580.1", "13.0", 9, 0};
  report.context.counters = "cupti range profiler (golden)";
  report.context.metrics = {"dram__bytes_read.sum", "lts__t_bytes.sum"};
  report.context.counter_passes = 1;
  report.specs.push_back(registry.find("h200"));
  for (int i = 0; i < 3; ++i) {
    Row row;
    KernelLaunch launch;
    launch.mangled_name = "_Z6kernelv";
    launch.demangled_name = "void flash::fwd<Traits<64, 128>, true>(Params, \"x\")";
    launch.nvtx_range = i == 2 ? "step / attention B1 H8 N4096 d64 causal fwd" : "step, 1";
    launch.grid = {32 << i, 8, 1};
    launch.block = {128, 1, 1};
    launch.registers_per_thread = 96;
    launch.static_shared_bytes = 16384;
    launch.dynamic_shared_bytes = 32768;
    launch.index = 3 + i;
    launch.stream_id = 7;
    launch.process_id = 4242;
    launch.process = "python3";
    launch.graph = i == 1;
    row.kernel = short_kernel_name(launch.demangled_name);
    if (auto workload = workload_in_range_name(launch.nvtx_range)) {
      row.workload = *workload;
      launch.workload_known = true;
    }
    row.launch = launch;
    row.spec_key = "h200-sxm";
    row.timing = Timing{{2.0e-4 * (i + 1)}, 0, 0};
    row.counters = {{quantity::kDramRead, 4e7},
                    {quantity::kDramWrite, 1e7},
                    {quantity::kL2, 3e8 * (i + 1)},
                    {quantity::kTensorMmaSync, 6e10},
                    {quantity::kSmClock, 1.9e9}};
    if (i == 1) {
      row.status = RowStatus::kCountersUnavailable;
      row.message = "counters busy: another profiler";
      row.counters.clear();
    }
    report.rows.push_back(row);
  }
  return report;
}

void check_report(const std::string& stem, const Report& report) {
  check_golden(stem + ".json", render_json(report));
  check_golden(stem + ".csv", render_csv(report));
  check_golden(stem + ".txt", render_table(report));
  // What is written reads back to the same report: the same text in every format.
  const Report again = report_from_text(render_json(report), stem);
  CHECK(render_json(again) == render_json(report));
  CHECK(render_csv(again) == render_csv(report));
  CHECK(render_table(again) == render_table(report));
}

}  // namespace

TEST_CASE("golden: recorded reports through the JSON, CSV and table writers") {
  for (const char* name : {"head", "model", "head_a100", "empty"}) {
    CAPTURE(name);
    check_report(std::string("report_") + name, fixture(std::string(name) + ".json"));
  }
  check_golden("report_head_color.txt", render_table(fixture("head.json"), {true}));
  // Fitted to a terminal of 80 and 120 columns (table_layout.hpp), and in the pipe's FLOPs.
  for (std::size_t width : {80, 120}) {
    TableOptions options;
    options.max_width = width;
    check_golden("report_head_" + std::to_string(width) + ".txt",
                 render_table(fixture("head.json"), options));
  }
  TableOptions pipe;
  pipe.flops = FlopConvention::kPipe;
  check_golden("report_model_pipe.txt", render_table(fixture("model.json"), pipe));
}

TEST_CASE("golden: a merged report (origins) through the writers") {
  Report merged =
      merge_reports({fixture("base.json"), fixture("head_a100.json")}, {"base.json", "a100.json"});
  fix_context(merged.context);
  check_report("report_merged", merged);
}

TEST_CASE("golden: profiled launches through the writers") {
  check_report("report_launches", launch_report());
}

TEST_CASE("golden: compare's table, Markdown and JSON") {
  const Comparison comparison =
      compare_reports(fixture("base.json"), fixture("head.json"), {}, "base.json", "head.json");
  check_golden("compare_head.txt", render_compare_table(comparison));
  check_golden("compare_head_80.txt", render_compare_table(comparison, {80, {}}));
  check_golden("compare_head.md", render_compare_markdown(comparison));
  check_golden("compare_head.json", render_compare_json(comparison));
}

TEST_CASE("golden: profile records, written and read back") {
  const Report report = launch_report();
  std::string records = process_record(4242, 4241, "python3");
  records += device_record(*report.context.device, "roofline", report.context.metrics, 1);
  for (const Row& row : report.rows) {
    KernelLaunch launch = *row.launch;
    launch.workload_known = false;  // as the injection writes it: the reader derives it
    records += launch_record(launch, row.status, row.message, row.counters);
  }
  // A launch's warp samples (profile --stalls), as the injection writes them.
  StallRecord stalls;
  stalls.launch_index = report.rows.front().launch->index;
  stalls.sampled = true;
  stalls.period_log2 = 9;
  stalls.expected_seconds = 2.5e-5;
  stalls.totals = {120, 2, 5, false};
  PcSample pc;
  pc.function = "_Z6kernelv";
  pc.cubin_crc = 0x8000000000000001;  // 64 bits, kept whole
  pc.pc_offset = 0x1a0;
  pc.reasons = {{"long_scoreboard", 90}, {"selected", 25}};
  stalls.pcs = {pc};
  stalls.note = "the module of some PCs was not kept: no SASS or lines for them";
  records += stalls_record(stalls);
  records += error_record(ProfileErrorKind::kOtherProfiler, "ncu holds the counters");
  records += end_record(5, 3, {{"open", 0.25}, {"kernel", 0.125}, {"sessions", 1}});
  check_golden("profile_records.jsonl", records);

  const ProcessRecords read = read_process_records(records, "records.jsonl");
  REQUIRE(read.device);
  CHECK(*read.device == *report.context.device);
  REQUIRE(read.rows.size() == report.rows.size());
  REQUIRE(read.stalls.size() == 1);
  CHECK(read.stalls[0] == stalls);
  std::string again = process_record(read.process_id, read.parent_id, read.process);
  again += device_record(*read.device, read.counter_set, read.metrics, read.counter_passes);
  for (const Row& row : read.rows) {
    KernelLaunch launch = *row.launch;
    launch.workload_known = false;  // as the injection writes it: the reader derives it
    again += launch_record(launch, row.status, row.message, row.counters);
  }
  CHECK(again == records.substr(0, again.size()));
}

TEST_CASE("golden: a calibration file, written and read back") {
  CalibrationOverlay overlay;
  overlay.tool_version = "0.0.0-golden";
  overlay.time_utc = "2026-12-01T00:00:00Z";
  overlay.host = "golden-host";
  overlay.spec_key = "h200-sxm";
  overlay.device =
      DeviceInfo{"NVIDIA H200", "GH100", "9.0", 132, 150754820096, 62914560, "580.1", "13.0", 9, 0};
  overlay.duration_seconds = 3.5;
  // helpers.hpp's measurement, its method named as the goldens were recorded with.
  auto measurement = [](std::string id, std::string target, bool flops, double work,
                        std::vector<double> samples, double clock_mhz) {
    CalibrationMeasurement m = calibration_measurement(std::move(id), std::move(target), flops,
                                                       work, std::move(samples), clock_mhz);
    m.method = "golden kernel " + m.id;
    return m;
  };
  overlay.measurements = {
      measurement("dram_read", "dram", false, 3.9e9, {1e-3, 1.01e-3, 0.99e-3}, 0),
      measurement("l2_read", "l2", false, 1e10, {1e-3, 1e-3, 1e-3}, 0),
      measurement("mma_sync", "tensor_fp16.mma_sync", true, 6e14, {1.0, 1.0, 1.1}, 1755),
  };
  derive_ceilings(overlay);
  const std::string text = to_json(overlay).dump(2) + "\n";
  check_golden("calibration.json", text);
  const CalibrationOverlay read = parse_calibration(to_json(overlay), "calibration.json");
  CHECK(read.device.name == overlay.device.name);
  CHECK(read.device.chip == overlay.device.chip);
  CHECK(read.device.sm_count == overlay.device.sm_count);
  CHECK(read.device.runtime_version == overlay.device.runtime_version);
  CHECK(to_json(read).dump(2) + "\n" == text);
}
