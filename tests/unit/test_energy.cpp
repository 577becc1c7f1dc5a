// Energy per launch (lib/core/domain/energy.hpp and its reader, writers and table columns): the
// counter's readings to a mean power over the window, and the rows that carry it.
#include <doctest/doctest.h>

#include <filesystem>

#include <nlohmann/json.hpp>

#include "lib/core/base/errors.hpp"
#include "lib/core/domain/energy.hpp"
#include "lib/core/report/report_read.hpp"
#include "lib/core/writers/report_writers.hpp"
#include "tests/unit/helpers.hpp"

using namespace roofline;

TEST_CASE("energy: the mean power between the first and last counter update in the window") {
  // A counter stepping every 100 ms: 40 J a step (400 W) from 0.35 s on, 12 J (120 W) before.
  std::vector<double> t, mj;
  double e = 0;
  for (int k = 0; k <= 20; ++k) {
    t.push_back(0.05 + 0.1 * k);
    mj.push_back(e);
    e += t.back() < 0.35 ? 12000 : 40000;
  }
  const EnergyMeasurement m = energy_from_readings(t, mj, 0.3, 1.6, 2e-3);
  // Updates at 0.35 ... 1.55 s: 12 steps of 40 J over 1.2 s.
  CHECK(m.updates == 12);
  CHECK(m.window_seconds == doctest::Approx(1.2));
  CHECK(m.watts == doctest::Approx(400));
  CHECK(m.joules_per_launch == doctest::Approx(0.8));
  CHECK(m.seconds_per_launch == 2e-3);
  CHECK(m.relative_spread == doctest::Approx(0).epsilon(1e-9));
  // Steps of uneven power: the spread is half the interquartile range over the median.
  std::vector<double> t2 = {0, 0.1, 0.2, 0.3, 0.4};
  std::vector<double> mj2 = {0, 30000, 70000, 110000, 160000};  // 300, 400, 400, 500 W
  const EnergyMeasurement uneven = energy_from_readings(t2, mj2, 0, 1, 1e-3);
  CHECK(uneven.watts == doctest::Approx(400));
  CHECK(uneven.relative_spread == doctest::Approx((425.0 - 375.0) / 2 / 400));
  // One reading in the window: no measurement.
  CHECK(energy_from_readings(t, mj, 0.36, 0.44, 1e-3).watts == 0);
  CHECK(energy_from_readings({}, {}, 0, 1, 1e-3).watts == 0);
}

TEST_CASE("energy: the report keeps it, and the table and CSV show it only where measured") {
  Report report =
      read_report_file(std::filesystem::path(ROOFLINE_TEST_DATA_DIR) / "reports" / "head.json");
  REQUIRE(report.rows.size() > 1);
  CHECK(render_table(report, {}).find("J/launch") == std::string::npos);
  report.rows[0].energy = EnergyMeasurement{0.0123, 412.5, 2.98e-5, 1.2, 12, 0.004, 61};
  const Report back = report_from_text(render_json(report), "energy.json");
  REQUIRE(back.rows[0].energy);
  CHECK(*back.rows[0].energy == *report.rows[0].energy);
  CHECK_FALSE(back.rows[1].energy);
  const std::string table = render_table(report, {});
  CHECK(table.find("J/launch") != std::string::npos);
  CHECK(table.find("GFLOP/J") != std::string::npos);
  CHECK(table.find("12.3 mJ") != std::string::npos);
  const std::string csv = render_csv(report);
  CHECK(csv.find("energy_j,power_w,flops_per_j,dram_bytes_per_j") != std::string::npos);
  CHECK(csv.find("0.0123,412.5,") != std::string::npos);
  nlohmann::json j = nlohmann::json::parse(render_json(report));
  CHECK(j["rows"][0]["energy"]["temperature_c"] == 61);
  // The die's temperature: optional (reports before it was kept, or NVML gave none: null) and
  // bounded.
  j["rows"][0]["energy"].erase("temperature_c");
  CHECK(report_from_text(j.dump(), "old.json").rows[0].energy->temperature_c == 0);
  j["rows"][0]["energy"]["temperature_c"] = nullptr;
  CHECK(report_from_text(j.dump(), "null.json").rows[0].energy->temperature_c == 0);
  j["rows"][0]["energy"]["temperature_c"] = 500;
  CHECK_THROWS_AS(report_from_text(j.dump(), "hot.json"), InputError);
  j["rows"][0]["energy"]["temperature_c"] = 61;
  j["rows"][0]["energy"]["watts"] = -1;
  CHECK_THROWS_AS(report_from_text(j.dump(), "bad.json"), InputError);
}
