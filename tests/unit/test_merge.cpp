// Merging reports (lib/core/report/merge.hpp, `merge`): shards back into the whole, identical
// duplicates collapse, conflicts refused, rows of several devices keep their own context through
// JSON and CSV, a chart panel and a table per device.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "lib/core/base/errors.hpp"
#include "lib/core/base/text.hpp"
#include "lib/core/chart/svg_chart.hpp"
#include "lib/core/chart/terminal_chart.hpp"
#include "lib/core/compare/device_compare.hpp"
#include "lib/core/report/merge.hpp"
#include "lib/core/report/report_read.hpp"
#include "lib/core/writers/report_writers.hpp"
#include "tests/unit/helpers.hpp"

using namespace roofline;

namespace {

// The fields of one CSV line: commas inside double quotes belong to the field.
std::vector<std::string> csv_fields(const std::string& line) {
  std::vector<std::string> out(1);
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (c == '"') {
      if (quoted && i + 1 < line.size() && line[i + 1] == '"') {
        out.back() += '"';
        ++i;
      } else {
        quoted = !quoted;
      }
    } else if (c == ',' && !quoted) {
      out.emplace_back();
    } else {
      out.back() += c;
    }
  }
  return out;
}

const std::string kReports = std::string(ROOFLINE_TEST_DATA_DIR) + "/reports/";

Report fixture(const std::string& name) {
  return read_report_file(kReports + name);
}

// Rows [begin, end) of `report`, everything else as is.
Report slice(const Report& report, std::size_t begin, std::size_t end) {
  Report part = report;
  part.rows.assign(report.rows.begin() + static_cast<std::ptrdiff_t>(begin),
                   report.rows.begin() + static_cast<std::ptrdiff_t>(end));
  return part;
}

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

}  // namespace

TEST_CASE("merge: shards of one sweep give back the sweep") {
  const Report base = fixture("base.json");
  // Three shards, out of order, with a later context time: the first input's context is kept.
  Report a = slice(base, 16, 24), b = slice(base, 0, 7), c = slice(base, 7, 16);
  b.context.time_utc = "2030-01-01T00:00:00Z";
  b.context.counters = "CUPTI ... other timings";
  const Report merged = merge_reports({a, b, c}, {"a.json", "b.json", "c.json"});
  CHECK(merged.origins.empty());
  CHECK(merged.context.time_utc == base.context.time_utc);
  REQUIRE(merged.rows.size() == base.rows.size());
  // Same rows (in shard order), same JSON once sorted back into the sweep's order.
  Report sorted = merged;
  sorted.rows = {};
  for (const Row& row : base.rows)
    for (const Row& m : merged.rows)
      if (m.kernel == row.kernel && m.workload == row.workload) sorted.rows.push_back(m);
  CHECK(render_json(sorted) == render_json(base));
}

TEST_CASE("merge: identical duplicates collapse, conflicting ones are refused") {
  const Report base = fixture("base.json");
  const Report twice = merge_reports({base, base, slice(base, 3, 9)}, {});
  CHECK(render_json(twice) == render_json(base));

  Report other = slice(base, 5, 6);
  other.rows[0].timing->samples_seconds[0] *= 1.01;
  CHECK_THROWS_WITH_AS(
      merge_reports({base, other}, {"base.json", "other.json"}),
      ("conflicting rows for " + base.rows[5].kernel + " " + base.rows[5].workload.label() +
       " on spec h100-sxm5 measured on NVIDIA H100 80GB HBM3 in base.json and "
       "other.json: each point may be measured once per device")
          .c_str(),
      InputError);

  Report spec_changed = slice(base, 0, 1);
  spec_changed.rows[0].timing->samples_seconds[0] *= 2;  // would conflict too: spec comes first
  spec_changed.specs[0].memory[0].bandwidth_gbps *= 1.5;
  CHECK_THROWS_WITH_AS(merge_reports({base, spec_changed}, {"base.json", "x.json"}),
                       "spec \"h100-sxm5\" differs between base.json and x.json: merge reports "
                       "judged against the same spec file",
                       InputError);
  CHECK_THROWS_AS(merge_reports({}, {}), InputError);
}

TEST_CASE("merge: two GPU types keep their own context through JSON and CSV") {
  const Report h100 = fixture("base.json");
  const Report a100 = fixture("head_a100.json");
  const Report merged = merge_reports({h100, a100}, {"h100.json", "a100.json"});
  REQUIRE(merged.origins.size() == 2);
  CHECK(merged.context.command == "merge");
  CHECK(!merged.context.device);  // no single device
  CHECK(merged.rows.size() == h100.rows.size() + a100.rows.size());
  CHECK(merged.specs.size() == 2);
  for (std::size_t i = 0; i < merged.rows.size(); ++i) {
    CAPTURE(i);
    const bool from_h100 = i < h100.rows.size();
    CHECK(device_name_of(merged, merged.rows[i]) ==
          (from_h100 ? "NVIDIA H100 80GB HBM3" : "NVIDIA A100-SXM4-80GB"));
  }

  // JSON: written, read back, written again: the same text, the same origins per row.
  const std::string json = render_json(merged);
  const Report back = report_from_json(nlohmann::json::parse(json), "merged.json");
  CHECK(render_json(back) == json);
  REQUIRE(back.origins.size() == 2);
  for (std::size_t i = 0; i < back.rows.size(); ++i)
    CHECK(back.rows[i].origin == merged.rows[i].origin);

  // CSV: one line per row, each naming its own device in the last column.
  const std::vector<std::string> lines = split(render_csv(back), '\n');
  REQUIRE(lines.size() == merged.rows.size() + 2);  // header, rows, final empty piece
  const std::vector<std::string> header = split(lines[0], ',');
  const auto column =
      static_cast<std::size_t>(std::find(header.begin(), header.end(), "device") - header.begin());
  REQUIRE(column < header.size());
  for (std::size_t i = 0; i < merged.rows.size(); ++i) {
    CAPTURE(lines[i + 1]);
    CHECK(csv_fields(lines[i + 1]).at(column) == device_name_of(merged, merged.rows[i]));
  }

  // Merging the merged report with one of its inputs changes nothing.
  CHECK(render_json(merge_reports({back, a100}, {})).find("\"origins\"") != std::string::npos);
  CHECK(merge_reports({back, a100}, {}).rows.size() == merged.rows.size());
}

TEST_CASE("merge: a report of two GPU types plots a panel per device and tables per device") {
  Report a100 = fixture("head_a100.json");
  // The same spec for both devices: the panels differ by device only.
  Report h100_on_a100 = fixture("head_a100.json");
  h100_on_a100.context.device->name = "NVIDIA H100 80GB HBM3";
  h100_on_a100.context.projection = true;
  const Report merged = merge_reports({a100, h100_on_a100}, {"a.json", "b.json"});
  REQUIRE(merged.origins.size() == 2);
  const std::string svg = render_svg({merged});
  CHECK(count(svg, "<g class=\"panel\"") == 2);
  CHECK(count(svg, "data-device=\"NVIDIA A100-SXM4-80GB\"") == 1);
  CHECK(count(svg, "data-device=\"NVIDIA H100 80GB HBM3\"") == 1);
  CHECK(count(svg, "class=\"point\"") == 2 * count(render_svg({a100}), "class=\"point\""));
  const std::string chart = render_ascii_plot(merged, 72, 22);
  CHECK(count(chart, ", measured on NVIDIA") == 2);
  const std::string table = render_table(merged);
  CHECK(count(table, "measured on NVIDIA A100-SXM4-80GB") == 1);
  CHECK(count(table, "measured on NVIDIA H100 80GB HBM3") == 1);
  CHECK(count(table, "PROJECTION") == 1);
}

TEST_CASE("merge: the command writes one file, refuses conflicts with exit 2 and no output") {
  TempDir dir;
  const std::string out = (dir.path / "all.json").string();
  const std::string csv = (dir.path / "all.csv").string();
  CliResult r =
      cli({"merge", kReports + "base.json", kReports + "head_a100.json", "-o", out, "--csv", csv});
  CHECK(r.code == 0);
  CHECK(r.err.empty());
  CHECK(read_report_file(out).origins.size() == 2);
  CHECK(std::filesystem::exists(csv));

  const std::string conflict = (dir.path / "conflict.json").string();
  r = cli({"merge", kReports + "base.json", kReports + "head.json", "-o", conflict});
  CHECK(r.code == 2);
  CHECK(count(r.err, "\n") == 1);
  CHECK(r.err.rfind("error: conflicting rows for ", 0) == 0);
  CHECK(!std::filesystem::exists(conflict));

  r = cli({"merge", kReports + "base.json", kReports + "schema_v2.json", "-o", conflict});
  CHECK(r.code == 2);
  CHECK(!std::filesystem::exists(conflict));
  r = cli({"merge", kReports + "base.json"});
  CHECK(r.code == 2);  // -o is required
}

TEST_CASE("compare --across-devices: speed-up and roof per row, side by side, exit 0") {
  const Report a100 = fixture("head_a100.json");
  const Report h100 = fixture("base.json");
  const DeviceComparison c = compare_devices(a100, h100, "a100.json", "h100.json");
  CHECK(c.base_device == "NVIDIA A100-SXM4-80GB");
  CHECK(c.head_device == "NVIDIA H100 80GB HBM3");
  REQUIRE(c.rows.size() == a100.rows.size());  // every A100 row has an H100 partner
  CHECK(c.only_head == h100.rows.size() - a100.rows.size());
  for (const DeviceRowComparison& row : c.rows) {
    CAPTURE(row.kernel + " " + row.workload);
    CHECK(row.speedup == doctest::Approx(row.base.seconds / row.head.seconds));
    CHECK(row.base.regime.find("-bound") != std::string::npos);
    CHECK(row.head.regime.find("-bound") != std::string::npos);
  }
  const CliResult r =
      cli({"compare", "--across-devices", kReports + "head_a100.json", kReports + "base.json"});
  CHECK(r.code == 0);
  CHECK(r.out.find("speed-up") != std::string::npos);
  CHECK(r.out.find("x  ") != std::string::npos);
  CHECK(cli({"compare", "--across-devices", kReports + "base.json", "--kernel-base", "flash-v1",
             "--kernel-head", "flash-v2"})
            .code == 2);
}

TEST_CASE("compare: a merged report of two GPU types is named by its devices, not as a model") {
  TempDir dir;
  const std::string merged = (dir.path / "merged.json").string();
  REQUIRE(cli({"merge", kReports + "base.json", kReports + "head_a100.json", "-o", merged}).code ==
          0);
  const CliResult r = cli({"compare", kReports + "base.json", merged});
  CHECK(r.code == 2);  // different devices without --allow-mismatch
  CHECK(r.err.find("NVIDIA H100 80GB HBM3 + NVIDIA A100-SXM4-80GB") != std::string::npos);
  CHECK(r.err.find("analytic model") == std::string::npos);
  CHECK(count(r.err, "\n") == 1);
}
