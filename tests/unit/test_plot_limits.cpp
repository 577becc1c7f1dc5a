// Charts at their limits: the `plot` command's refusals, extreme specs, hostile strings, many
// rows, marker areas, roof strokes and long legends (the geometry is test_plot.cpp's).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <map>
#include <set>
#include <stdexcept>

#include "app/cli.hpp"
#include "lib/core/base/errors.hpp"
#include "lib/core/base/limits.hpp"
#include "lib/core/base/text.hpp"
#include "lib/core/chart/chart.hpp"
#include "lib/core/chart/svg_chart.hpp"
#include "lib/core/chart/svg_labels.hpp"
#include "lib/core/chart/terminal_chart.hpp"
#include "lib/core/model/model.hpp"
#include "lib/core/report/report_read.hpp"
#include "lib/core/verdict/analysis.hpp"
#include "lib/core/verdict/flop_convention.hpp"
#include "tests/unit/helpers.hpp"
#include "tests/unit/plot_test_support.hpp"

using namespace roofline;
using namespace roofline::plot_test;

TEST_CASE("cli: plot writes SVG, prints the terminal chart, refuses bad input") {
  TempDir dir;
  const std::string svg = (dir.path / "chart.svg").string();
  const CliResult written = cli({"plot", fixture("base.json"), fixture("head.json"), "-o", svg});
  CHECK(written.code == 0);
  CHECK(written.out.empty());
  CHECK(find_all(parse_xml(read_text(svg)), "g", "arrow").size() == 24);

  const CliResult terminal = cli({"plot", fixture("base.json")});
  CHECK(terminal.code == 0);
  CHECK(terminal.out.rfind("Roofline: NVIDIA H100 SXM5 80GB [h100-sxm5], log-log\n", 0) == 0);

  const std::string out = (dir.path / "bad.svg").string();
  const std::string missing = (dir.path / "missing.json").string();
  struct Case {
    std::vector<std::string> args;
    std::string message;
  } cases[] = {
      {{"plot", missing, "-o", out},
       "error: cannot read " + missing + ": No such file or directory\n"},
      {{"plot", fixture("schema_v2.json"), "-o", out},
       "error: " + fixture("schema_v2.json") +
           ": schema_version 2 is not supported (this tool "
           "reads 1)\n"},
      {{"plot", fixture("empty.json"), "-o", out},
       "error: " + fixture("empty.json") + ": the report has no rows\n"},
      {{"plot", fixture("base.json"), "-o", "-", "--plot"},
       "error: -o - and --plot cannot both write to stdout\n"},
      {{"plot", fixture("base.json"), "--kernel-base", "flash-v9", "-o", out},
       "error: " + fixture("base.json") +
           ": no rows of kernel \"flash-v9\" (--kernel-base): did you mean flash-v1 or "
           "flash-v2? (the report has: standard, flash-v1, flash-v2)\n"},
  };
  for (const Case& c : cases) {
    CAPTURE(join(c.args, " "));
    const CliResult r = cli(c.args);
    CHECK(r.code == 2);
    CHECK(r.err == c.message);
    CHECK_FALSE(std::filesystem::exists(out));
  }
}

TEST_CASE("cli: plot refuses a report above kMaxPlotInputBytes before reading it") {
  TempDir dir;
  const std::string out = (dir.path / "chart.svg").string();
  // Sparse files: a '{' and then zeros, never written, so neither the test's disk nor (when the
  // refusal comes before any read) its memory grows with them.
  const auto sparse = [&](const std::string& name, std::uintmax_t size) {
    const std::string path = (dir.path / name).string();
    write_text(path, "{");
    std::filesystem::resize_file(path, size);
    return path;
  };
  const std::string above = sparse("above.json", kMaxPlotInputBytes + (std::uintmax_t{1} << 20));
  const CliResult refused = cli({"plot", above, "-o", out});
  CHECK(refused.code == 2);
  CHECK(refused.out.empty());
  CHECK(refused.err ==
        "error: " + above +
            ": 201.0 MiB is above plot's limit of 200 MiB (about 30,000 model rows); "
            "plot a part: a `run` or `model` report with fewer points, or `merge`'s "
            "inputs one at a time\n");
  CHECK_FALSE(std::filesystem::exists(out));
  // Any report of the command line, before the others are read.
  const CliResult second = cli({"plot", fixture("base.json"), above, "-o", out});
  CHECK(second.code == 2);
  CHECK(second.err.find("above plot's limit") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(out));

  // At the limit the size check passes; the zeros then fail as JSON, with the reader's message.
  const std::string at = sparse("at.json", kMaxPlotInputBytes);
  const CliResult read = cli({"plot", at, "-o", out});
  CHECK(read.code == 2);
  CHECK(read.err.rfind("error: " + at + ": ", 0) == 0);
  CHECK(read.err.find("limit") == std::string::npos);
  CHECK(std::count(read.err.begin(), read.err.end(), '\n') == 1);
  CHECK_FALSE(std::filesystem::exists(out));
}

// ---- limits (issue 10): extreme specs, hostile strings, many rows ----

namespace {

// Every byte of `text` is allowed in an XML 1.0 document as UTF-8 (no C0 control but tab,
// newline and return; nothing else our writer would have to escape).
bool only_xml_characters(const std::string& text) {
  for (unsigned char c : text)
    if (c < 0x20 && c != '\t' && c != '\n' && c != '\r') return false;
  return true;
}

Report with_extreme_spec(double bandwidth_gbps, double peak_tflops) {
  Report report = read_report_file(fixture("model.json"));
  for (GpuSpec& spec : report.specs) {
    for (MemoryLevelSpec& level : spec.memory) level.bandwidth_gbps = bandwidth_gbps;
    for (ComputeCeiling& ceiling : spec.compute) ceiling.peak_tflops = peak_tflops;
  }
  return report;
}

}  // namespace

TEST_CASE("plot: extreme spec values give bounded axes, finite coordinates and few ticks") {
  // A bandwidth of 1e300 GB/s is infinite in bytes/s; a peak of 5e-324 TFLOP/s is a denormal.
  // Both once made the chart loop for ever (±inf converted to int).
  for (const auto& [bandwidth, peak] : {std::pair{1e300, 989.0}, std::pair{3350.0, 5e-324},
                                        std::pair{1e300, 5e-324}, std::pair{1e-300, 1e300}}) {
    CAPTURE(bandwidth);
    CAPTURE(peak);
    const Report report = with_extreme_spec(bandwidth, peak);
    const std::string svg = render_svg({report});
    const XmlElement root = parse_xml(svg);
    // strtod, not stod: denormal axis ends are valid and stod throws on them.
    auto number = [](const XmlElement& e, const char* key) {
      return std::strtod(e.attr(key).c_str(), nullptr);
    };
    for (const XmlElement* panel : find_all(root, "g", "panel")) {
      const double lx0 = std::log10(number(*panel, "data-x-min"));
      const double lx1 = std::log10(number(*panel, "data-x-max"));
      const double ly0 = std::log10(number(*panel, "data-y-min"));
      const double ly1 = std::log10(number(*panel, "data-y-max"));
      for (double v : {lx0, lx1, ly0, ly1}) CHECK(std::isfinite(v));
      CHECK(lx1 - lx0 <= kMaxAxisDecades);
      CHECK(ly1 - ly0 <= kMaxAxisDecades);
      CHECK(find_all(*panel, "text", "tick").size() <= 2 * 13);
      for (const XmlElement* line : find_all(*panel, "line"))
        for (const char* key : {"x1", "y1", "x2", "y2"}) CHECK(std::isfinite(number(*line, key)));
    }
    CHECK(svg.find("nan") == std::string::npos);
    CHECK(svg.find("inf") == std::string::npos);
    const std::string chart = render_ascii_plot(report, 72, 22);
    CHECK(chart.size() < 20000);
  }
}

TEST_CASE("plot: the axis step keeps ticks bounded") {
  CHECK(decade_step(-1, 4, 12) == 1);
  CHECK(decade_step(-324, 309, 12) == 53);
  CHECK(decade_step(0, 1e300, 12) == (kMaxAxisDecades + 11) / 12);
  CHECK(decade_step(5, 5, 12) == 1);
  CHECK(decade_step(0, 30, 0) == 30);
}

TEST_CASE("plot: kernel names with ESC, NUL, DEL, C1 controls and bad UTF-8 give well-formed SVG") {
  Report report = read_report_file(fixture("base.json"));
  const std::string hostile = std::string("flash\x1b[31m") + std::string(1, '\0') +
                              "\x7f\xc2\x85<&>\"'\xef\xbf\xbe\xff\xc3(" + "\xe2\x86\x92";
  for (Row& row : report.rows)
    if (row.kernel == "flash-v2") row.kernel = hostile;
  report.specs.front().name += "\x01\x02";
  const std::string svg = render_svg({report});
  CHECK(only_xml_characters(svg));
  const XmlElement root = parse_xml(svg);
  std::set<std::string> kernels;
  for (const XmlElement* point : find_all(root, "g", "point"))
    kernels.insert(point->attr("data-kernel"));
  // Visible escapes for what XML cannot carry; markup characters and valid UTF-8 come back as is.
  CHECK(kernels.count("flash\\x1B[31m\\x00\\x7F\\x85<&>\"'\\uFFFE\\xFF\\xC3(→") == 1);
}

TEST_CASE("plot: 20,000 rows keep every point, sequence labels are thinned away") {
  // Was quadratic (every label checked against every marker): 100,000 rows took 77 s.
  // scripts/bench_plot.py prints the time per size; this test checks what is drawn.
  Report report = read_report_file(fixture("model.json"));
  const Row first = report.rows.front();
  report.rows.clear();
  for (int i = 0; i < 20000; ++i) {
    Row row = first;
    row.workload.seq_len = 256 + 8 * i;
    row.prediction = predict(find_kernel_model(row.kernel), row.workload);
    report.rows.push_back(std::move(row));
  }
  const XmlElement root = parse_xml(render_svg({report}));
  const auto panels = find_all(root, "g", "panel");
  REQUIRE(panels.size() == 1);
  CHECK(find_all(*panels[0], "g", "point").size() == 20000);
  CHECK(find_all(*panels[0], "text", "point-label").empty());
  CHECK(panels[0]->all_text().find("20000 points: no N labels") != std::string::npos);
  // A small chart still labels its points (where labels do not collide).
  report.rows.resize(10);
  CHECK(!find_all(parse_xml(render_svg({report})), "text", "point-label").empty());
}

TEST_CASE("plot: marker area follows the share of time, the largest shares are keyed") {
  const Report report = read_report_file(fixture("head.json"));
  const XmlElement root = parse_xml(render_svg({report}));
  const XmlElement& panel = *find_all(root, "g", "panel").at(0);
  // Each DRAM point's marker scale, squared, over its row's time: one constant (area ∝ time)
  // wherever the clamp does not bind.
  double total = 0;
  for (const Row& row : report.rows)
    if (row.timing && !row.timing->samples_seconds.empty()) total += row.timing->median_seconds();
  REQUIRE(total > 0);
  std::vector<double> ratios;
  for (const XmlElement* point : find_all(panel, "g", "point")) {
    if (point->attr("data-level") != "dram") continue;
    const Row& row = report.rows.at(static_cast<std::size_t>(point->number("data-row")));
    const double share = row.timing->median_seconds() / total;
    double scale = 1;
    for (const XmlElement& child : point->children)
      if (child.name == "g" && child.attributes.count("transform") > 0) {
        const std::string& t = child.attr("transform");
        scale = std::stod(t.substr(t.find('(') + 1));
      }
    if (scale > 0.551 && scale < 3.199) ratios.push_back(scale * scale / share);
  }
  REQUIRE(ratios.size() >= 3);
  for (double r : ratios) CHECK(r == doctest::Approx(ratios.front()).epsilon(0.01));
  // Five keys on the plot, five named rows in the legend, largest share first.
  CHECK(find_all(panel, "text", "share-key").size() == 5);
  const std::string legend = find_all(panel, "g", "legend").at(0)->all_text();
  CHECK(legend.find("Largest shares of time") != std::string::npos);
  CHECK(legend.find("marker area: share of the time") != std::string::npos);
}

TEST_CASE("plot: every compute roof has its own stroke, in the plot and the legend") {
  const Report report = read_report_file(fixture("head.json"));
  const XmlElement root = parse_xml(render_svg({report}));
  std::set<std::string> strokes;
  const auto roofs = find_all(root, "line", "compute");
  REQUIRE(roofs.size() >= 2);
  for (const XmlElement* roof : roofs) {
    const auto dash = roof->attributes.find("stroke-dasharray");
    strokes.insert(roof->attr("stroke") +
                   (dash == roof->attributes.end() ? std::string() : " " + dash->second));
  }
  CHECK(strokes.size() == roofs.size());
  // The DRAM slope is not drawn like any compute roof.
  for (const XmlElement* slope : find_all(root, "line", "memory"))
    CHECK(strokes.count(slope->attr("stroke")) == 0);
}

TEST_CASE("plot: a long kernel name is wrapped in the legend, never cut") {
  const std::string name(90, 'k');
  const std::vector<std::string> lines = wrap_text("ns::" + name + "_tail", 40);
  std::string joined;
  for (const std::string& line : lines) {
    CHECK(line.size() <= 40);
    joined += line;
  }
  CHECK(joined == "ns::" + name + "_tail");
}

TEST_CASE("plot: the legend stops within its panel when a report names many kernels") {
  // 60 kernel names (a profiled program's): the legend lists what fits and counts the rest.
  Report report = read_report_file(fixture("head.json"));
  const Row first = report.rows.at(0);
  report.rows.clear();
  for (int i = 0; i < 60; ++i) {
    Row row = first;
    row.kernel = "kernel_number_" + std::to_string(i);
    report.rows.push_back(row);
  }
  const XmlElement root = parse_xml(render_svg({report}));
  const XmlElement& legend = *find_all(root, "g", "legend").at(0);
  // The panel grows to its most for them, and the list stops inside it.
  const double panel_bottom = root.number("height");
  CHECK(panel_bottom == 1200);
  double lowest = 0;
  for (const XmlElement* text : find_all(legend, "text", ""))
    lowest = std::max(lowest, text->number("y"));
  CHECK(lowest <= panel_bottom);
  const std::string all = legend.all_text();
  CHECK(all.find("more kernels (the table names them)") != std::string::npos);
  CHECK(all.find("kernel_number_0") != std::string::npos);
  CHECK(all.find("kernel_number_59") == std::string::npos);
  // A few kernels: every name, no count.
  report.rows.resize(3);
  const std::string few =
      find_all(parse_xml(render_svg({report})), "g", "legend").at(0)->all_text();
  CHECK(few.find("more kernels") == std::string::npos);
  CHECK(few.find("kernel_number_2") != std::string::npos);
  // Every legend text of the fixtures lies inside the SVG (their legends used to run past it).
  for (const char* name : {"base.json", "head.json", "model.json", "head_a100.json"}) {
    CAPTURE(name);
    const XmlElement svg = parse_xml(render_svg({read_report_file(fixture(name))}));
    for (const XmlElement* text : find_all(*find_all(svg, "g", "legend").at(0), "text", ""))
      CHECK(text->number("y") <= svg.number("height"));
  }
}
