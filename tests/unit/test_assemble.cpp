// add_rows (lib/core/verdict/assemble.hpp), the one place where run, run --devices, profile and
// model attach the judging spec and the analytic model to their rows; and profile_report
// (lib/profile), which reaches it from the record files of a profiled program.
#include <doctest/doctest.h>

#include "lib/core/base/errors.hpp"
#include "lib/core/domain/spec_choice.hpp"
#include "lib/core/model/model.hpp"
#include "lib/core/verdict/analysis.hpp"
#include "lib/core/verdict/assemble.hpp"
#include "lib/profile/profile_report.hpp"
#include "tests/unit/helpers.hpp"

using namespace roofline;

namespace {

Row bundled_row(const std::string& kernel) {
  Row row;
  row.kernel = kernel;
  row.workload.batch = 2;
  row.workload.heads = 16;
  row.workload.seq_len = 8192;
  row.workload.head_dim = 128;
  row.workload.pass = Pass::kForward;
  row.timing = Timing{};
  row.timing->samples_seconds = {1e-3, 1.1e-3};
  return row;
}

Row launch_row() {
  Row row;
  row.kernel = "ampere_fp16_gemm";
  KernelLaunch launch;
  launch.demangled_name = "ampere_fp16_gemm";
  launch.grid = {108, 1, 1};
  launch.block = {256, 1, 1};
  row.launch = launch;
  row.timing = Timing{};
  row.timing->samples_seconds = {2e-5};
  row.counters[quantity::kDramRead] = 4e7;
  row.counters[quantity::kDramWrite] = 1e7;
  return row;
}

}  // namespace

TEST_CASE("add_rows: a projection carries both specs and predicts for the GPU measured") {
  const SpecRegistry& registry = shipped_registry();
  const SpecChoice choice = choose_judging_spec(registry, "NVIDIA H200", "a100", nullptr);
  REQUIRE(choice.projection);
  Report report;
  report.context = make_context("run");
  add_rows(report, choice, {bundled_row("flash-v2"), launch_row()});
  CHECK(report.context.projection);
  CHECK(report.context.measured_spec == "h200-sxm");
  REQUIRE(report.specs.size() == 2);
  CHECK(report.specs[0].key == choice.spec.key);
  CHECK(report.specs[1].key == "h200-sxm");
  REQUIRE(report.rows.size() == 2);
  for (const Row& row : report.rows) CHECK(row.spec_key == choice.spec.key);
  // The cache-aware DRAM bytes are the H200's (its 50 MB of L2), not the A100's.
  const KernelModel& v2 = find_kernel_model("flash-v2");
  const Row& r = report.rows[0];
  CHECK(r.prediction.model_dram_bytes ==
        predict(v2, r.workload, registry.find("h200")).model_dram_bytes);
  CHECK(r.prediction.model_dram_bytes !=
        predict(v2, r.workload, registry.find("a100")).model_dram_bytes);
  // A launch of another program has no model: nothing predicted.
  CHECK(report.rows[1].prediction.model_flops == 0);
  // And analyze projects both rows (the report says where they were measured).
  CHECK(analyze(report.rows[0], report).projected);
  CHECK(analyze(report.rows[1], report).projected);
}

TEST_CASE("add_rows: a spec judged on its own, once however many parts use it") {
  const SpecRegistry& registry = shipped_registry();
  Report report;
  add_rows(report, own_spec(registry.find("h100")), {bundled_row("flash-v3")});
  add_rows(report, own_spec(registry.find("h100")), {bundled_row("flash-v1")});
  CHECK_FALSE(report.context.projection);
  CHECK(report.context.measured_spec.empty());
  CHECK(report.specs.size() == 1);
  CHECK(report.rows.size() == 2);
  CHECK(report.rows[0].prediction.model_flops > 0);
  CHECK_THROWS_AS(add_rows(report, own_spec(registry.find("h100")), {bundled_row("flash-v9")}),
                  InputError);
}

TEST_CASE("profile_report: records become a report through add_rows, --gpu a projection") {
  const SpecRegistry& registry = shipped_registry();
  ProcessRecords parent;
  parent.process_id = 10;
  parent.process = "python3";
  DeviceInfo device;
  device.name = "NVIDIA H200";
  parent.device = device;
  parent.counter_set = "roofline";
  parent.counter_passes = 1;
  parent.rows = {launch_row()};
  ProcessRecords child = parent;
  child.process_id = 11;
  child.device.reset();
  ProfileRun run;
  run.program_command = {"python3", "train.py"};
  run.command_line = {"cuflash-roofline", "profile", "--", "python3", "train.py"};

  std::optional<Report> own = profile_report({parent, child}, registry, run);
  REQUIRE(own.has_value());
  CHECK(own->context.command == "profile");
  CHECK_FALSE(own->context.projection);
  CHECK(own->rows.size() == 2);
  CHECK(own->rows[1].spec_key == "h200-sxm");
  CHECK(own->context.counters.rfind("CUPTI range profiler in python3: a user range", 0) == 0);

  run.gpu = "h100";
  std::optional<Report> projected = profile_report({parent, child}, registry, run);
  REQUIRE(projected.has_value());
  CHECK(projected->context.projection);
  CHECK(projected->context.measured_spec == "h200-sxm");
  CHECK(projected->rows[0].spec_key == registry.find("h100").key);
  CHECK(analyze(projected->rows[0], *projected).projected);

  // A device no spec names: only with --gpu, and then nothing to scale from.
  parent.device->name = "NVIDIA Future GPU";
  CHECK_THROWS_AS(profile_report({parent}, registry, ProfileRun{{}, {"x"}, {}, std::nullopt}),
                  InputError);
  std::optional<Report> unknown = profile_report({parent}, registry, run);
  REQUIRE(unknown.has_value());
  CHECK(unknown->context.projection);
  CHECK(unknown->context.measured_spec.empty());
  CHECK(unknown->specs.size() == 1);
  CHECK_FALSE(analyze(unknown->rows[0], *unknown).projected);

  // No row, or no device: no report.
  parent.rows.clear();
  CHECK_FALSE(profile_report({parent}, registry, run).has_value());
}
