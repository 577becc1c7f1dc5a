// `run --devices` without a GPU: the fan-out machinery (app/fanout.hpp) with stand-in workers,
// shell commands that write a prepared report or fail the way a real worker would.
#include <doctest/doctest.h>

#include <chrono>
#include <fstream>

#include <nlohmann/json.hpp>

#include "app/fanout.hpp"
#include "lib/core/base/errors.hpp"
#include "lib/core/report/report_read.hpp"
#include "lib/core/writers/report_writers.hpp"
#include "tests/unit/helpers.hpp"

using namespace roofline;
using namespace roofline::app;

namespace {

const std::string kReports = std::string(ROOFLINE_TEST_DATA_DIR) + "/reports/";

// A worker that writes `report` where the parent expects it.
WorkerJob writing(const roofline::TempDir& dir, int device, std::vector<std::size_t> points,
                  const Report& report) {
  WorkerJob job;
  job.device = device;
  job.points = std::move(points);
  const std::string name = "device-" + std::to_string(device);
  const std::filesystem::path prepared = dir.path / (name + ".prepared.json");
  write_text(prepared, render_json(report));
  job.report = dir.path / (name + ".json");
  job.log = dir.path / (name + ".log");
  job.argv = {"/bin/sh", "-c", "cp \"$1\" \"$2\"", "sh", prepared.string(), job.report.string()};
  return job;
}

// A worker that fails with `code` after printing `line` on stderr.
WorkerJob failing(const roofline::TempDir& dir, int device, std::vector<std::size_t> points,
                  int code, const std::string& line) {
  WorkerJob job;
  job.device = device;
  job.points = std::move(points);
  job.report = dir.path / ("device-" + std::to_string(device) + ".json");
  job.log = dir.path / ("device-" + std::to_string(device) + ".log");
  job.argv = {"/bin/sh", "-c",
              "echo 'info: starting' >&2; echo \"$1\" >&2; echo >&2; exit " + std::to_string(code),
              "sh", line};
  return job;
}

std::vector<std::size_t> range(std::size_t begin, std::size_t end) {
  std::vector<std::size_t> out;
  for (std::size_t i = begin; i < end; ++i) out.push_back(i);
  return out;
}

Report slice(const Report& report, const std::vector<std::size_t>& indices) {
  Report part = report;
  part.rows.clear();
  for (std::size_t i : indices) part.rows.push_back(report.rows[i]);
  return part;
}

}  // namespace

TEST_CASE("fanout: --devices and --points parse strictly") {
  CHECK(parse_devices("all", 3) == std::vector<int>{0, 1, 2});
  CHECK(parse_devices("1,0", 3) == std::vector<int>{1, 0});
  CHECK(parse_devices("7", 1) == std::vector<int>{7});  // existence is checked on the GPU side
  for (const char* bad : {"", ",", "0,,1", "0,0", "-1", "a", "0x1", "1 ", "all,0"}) {
    CAPTURE(bad);
    CHECK_THROWS_AS(parse_devices(bad, 2), InputError);
  }
  CHECK_THROWS_AS(parse_devices("all", 0), InputError);
  CHECK(parse_points("0,3,5", 6) == std::vector<std::size_t>{0, 3, 5});
  CHECK(points_text({0, 3, 5}) == "0,3,5");
  for (const char* bad : {"6", "3,1", "1,1", "x", "1,", "-1"}) {
    CAPTURE(bad);
    CHECK_THROWS_AS(parse_points(bad, 6), InputError);
  }
}

TEST_CASE("fanout: workers inherit the sweep, not the fan-out or the outputs") {
  const std::vector<std::string> args = {"--spec",
                                         "x.json",
                                         "run",
                                         "--seq",
                                         "1024,4096",
                                         "--devices",
                                         "0,1",
                                         "--json",
                                         "out.json",
                                         "--csv=o.csv",
                                         "--plot",
                                         "--svg",
                                         "c.svg",
                                         "--shard",
                                         "1/4",
                                         "--reps",
                                         "30",
                                         "--verify",
                                         "--counters-after-round",
                                         "2",
                                         "--export",
                                         "bmf=bmf.json",
                                         "--export=gbench=-"};
  CHECK(worker_base_args(args) == std::vector<std::string>{"--spec", "x.json", "run", "--seq",
                                                           "1024,4096", "--reps", "30",
                                                           "--verify"});
}

TEST_CASE("fanout: a failing worker becomes error rows with its reason, the report survives") {
  roofline::TempDir dir;
  const Report base = read_report_file(kReports + "base.json");  // 24 points: the sweep
  const std::vector<Row>& sweep = base.rows;
  // Device 0 measured the even points, device 1 failed on the odd ones.
  std::vector<std::size_t> even, odd;
  for (std::size_t i = 0; i < sweep.size(); ++i) (i % 2 ? odd : even).push_back(i);
  const std::vector<WorkerJob> jobs = {
      writing(dir, 0, even, slice(base, even)),
      failing(dir, 1, odd, 3, "error: no usable GPU (no CUDA device)")};
  std::vector<WorkerResult> results = run_workers(jobs, sweep);
  REQUIRE(results.size() == 2);
  CHECK(results[0].failure.empty());
  CHECK(results[0].report.has_value());
  CHECK(results[1].exit_code == 3);
  CHECK(results[1].failure == "worker exited with code 3: error: no usable GPU (no CUDA device)");

  const Report report = gather_workers(jobs, std::move(results), base);
  REQUIRE(report.rows.size() == sweep.size());
  for (std::size_t i = 0; i < sweep.size(); ++i) {
    CAPTURE(i);
    CHECK(report.rows[i].kernel == sweep[i].kernel);  // sweep order
    CHECK(report.rows[i].workload == sweep[i].workload);
    if (i % 2) {
      CHECK(report.rows[i].status == RowStatus::kError);
      CHECK(report.rows[i].message ==
            "device 1: worker exited with code 3: error: no usable GPU (no CUDA device)");
      CHECK(!report.rows[i].timing);
    } else {
      CHECK(report.rows[i].status == sweep[i].status);
      CHECK(report.rows[i].timing->samples_seconds == sweep[i].timing->samples_seconds);
    }
  }
  // It is a report like any other: written and read back.
  CHECK(render_json(report_from_json(report_to_json(report), "x")) == render_json(report));
}

TEST_CASE("fanout: a worker done with its report is not waited for, it sees its own env") {
  roofline::TempDir dir;
  const Report base = read_report_file(kReports + "base.json");
  const std::vector<Row>& sweep = base.rows;
  // The worker copies its report, says so on the done descriptor, then lingers 30 s (a real
  // worker's CUDA teardown, drawn out) and would exit 9.
  WorkerJob job = writing(dir, 0, range(0, 24), base);
  const std::filesystem::path env_seen = dir.path / "env.txt";
  job.env = {"CUDA_VISIBLE_DEVICES=7", "ROOFLINE_TEST_MARK=x"};
  job.argv = {"/bin/sh",
              "-c",
              "cp \"$1\" \"$2\"; echo \"$CUDA_VISIBLE_DEVICES $ROOFLINE_TEST_MARK\" > \"$3\"; "
              "printf R >&\"$" +
                  std::string(kWorkerDoneFdVariable) + "\"; sleep 30; exit 9",
              "sh",
              job.argv[4],
              job.report.string(),
              env_seen.string()};
  const auto start = std::chrono::steady_clock::now();
  std::vector<WorkerResult> results = run_workers({job}, sweep);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  CHECK(seconds < 10);
  REQUIRE(results.size() == 1);
  CHECK(results[0].exit_code == 0);
  CHECK(results[0].failure.empty());
  CHECK(results[0].report.has_value());
  std::ifstream in(env_seen);
  std::string line;
  std::getline(in, line);
  CHECK(line == "7 x");
}

TEST_CASE("fanout: workers that cannot start, crash, or answer for other points") {
  roofline::TempDir dir;
  const Report base = read_report_file(kReports + "base.json");
  const std::vector<Row>& sweep = base.rows;
  WorkerJob missing;
  missing.device = 2;
  missing.points = range(0, 4);
  missing.argv = {"/nonexistent/cuflash-roofline", "run"};
  missing.report = dir.path / "missing.json";
  missing.log = dir.path / "missing.log";
  WorkerJob killed = failing(dir, 3, range(4, 8), 0, "");
  killed.argv = {"/bin/sh", "-c", "kill -9 $$"};
  const std::vector<WorkerJob> jobs = {missing, killed,
                                       writing(dir, 4, range(8, 12), slice(base, range(12, 16))),
                                       writing(dir, 5, range(12, 24), slice(base, range(12, 24)))};
  std::vector<WorkerResult> results = run_workers(jobs, sweep);
  CHECK(results[0].failure.rfind("cannot start /nonexistent/cuflash-roofline", 0) == 0);
  CHECK(results[1].exit_code == 128 + 9);
  CHECK(results[1].failure == "worker exited with code 137");
  CHECK(results[2].failure.rfind("worker its report has " + sweep[12].kernel, 0) == 0);
  CHECK(results[3].failure.empty());
  const Report report = gather_workers(jobs, std::move(results), base);
  REQUIRE(report.rows.size() == 24);
  for (std::size_t i = 0; i < 12; ++i) CHECK(report.rows[i].status == RowStatus::kError);
  for (std::size_t i = 12; i < 24; ++i) CHECK(report.rows[i].status == sweep[i].status);
}

TEST_CASE("fanout: when every worker fails the report still has every point") {
  roofline::TempDir dir;
  const Report base = read_report_file(kReports + "base.json");
  const std::vector<WorkerJob> jobs = {failing(dir, 0, range(0, 24), 4, "internal error: boom")};
  Report skeleton = base;
  skeleton.context = make_context("run");
  const Report report = gather_workers(jobs, run_workers(jobs, base.rows), skeleton);
  REQUIRE(report.rows.size() == 24);
  CHECK(report.specs.size() == 1);
  CHECK(report.rows[5].message == "device 0: worker exited with code 4: internal error: boom");
  CHECK(!render_table(report).empty());
}
