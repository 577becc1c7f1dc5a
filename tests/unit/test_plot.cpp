// Charts: the SVG is well-formed XML (checked by the small parser below), its ceilings, ridge
// points, points and arrows sit where the axis transform puts them, text is escaped; the terminal
// chart is to scale. Rendering to PNG is tests/unit/check_svg_renders.cpp (CTest, skipped
// without rsvg-convert).
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

TEST_CASE("plot: the XML checker accepts well-formed text and rejects the rest") {
  const XmlElement e = parse_xml(
      "<?xml version=\"1.0\"?>\n<!-- c --><a x='1' "
      "y=\"&lt;&amp;&#x41;&#66;\"><b/>t&gt;<![CDATA[<raw>]]></a>\n");
  CHECK(e.name == "a");
  CHECK(e.attr("y") == "<&AB");
  CHECK(e.children.size() == 1);
  CHECK(e.text == "t><raw>");
  for (const char* bad : {"<a><b></a>", "<a x='1' x='2'/>", "<a>&nope;</a>", "<a/><b/>", "<a",
                          "<a b=c/>", "<a>1 < 2</a>", "<a>AT&T</a>", "<a b='<'/>",
                          "<a x='1'y='2'/>", "text", "<a><!-- x -- y --></a>"}) {
    CAPTURE(bad);
    CHECK_THROWS_AS(parse_xml(bad), std::runtime_error);
  }
}

TEST_CASE("plot: SVG roofs, ridges and points sit where the axis transform puts them") {
  const Report report = read_report_file(fixture("base.json"));
  const std::string svg = render_svg({report});
  const XmlElement root = parse_xml(svg);
  CHECK(root.name == "svg");
  CHECK(root.attr("xmlns") == "http://www.w3.org/2000/svg");
  CHECK(root.number("width") == 1040);
  // One panel: 600 px, or taller where its legend needs it (this one's does: 13 px more).
  CHECK(root.number("height") >= 600);
  CHECK(root.number("height") <= 1200);
  const auto panels = find_all(root, "g", "panel");
  REQUIRE(panels.size() == 1);
  const XmlElement& panel = *panels[0];
  CHECK(panel.attr("data-spec") == "h100-sxm5");
  const Axes axes(panel);
  const GpuSpec& spec = report.specs.at(0);

  // Points: one per row and measured level, at (intensity, FLOP/s) of the analysis, in the
  // FlashAttention convention (the table's default): the pipe's scaled by algorithmic ÷ pipe.
  const auto points = find_all(panel, "g", "point");
  REQUIRE(points.size() == 24 * 3);
  std::vector<double> all_ai, all_flops;
  for (const XmlElement* p : points) {
    const Row& row = report.rows.at(static_cast<std::size_t>(p->number("data-row")));
    const RowAnalysis a = analyze(row, spec);
    const auto level = parse_memory_level(p->attr("data-level"));
    REQUIRE(level);
    const LevelAnalysis* expected = nullptr;
    for (const LevelAnalysis& l : a.levels)
      if (l.level == *level) expected = &l;
    REQUIRE(expected != nullptr);
    CHECK(p->attr("data-kernel") == row.kernel);
    CHECK(p->attr("data-regime") == a.regime);
    const double scale = view_flops(row, a, FlopConvention::kAlgorithmic).scale;
    CHECK(p->number("data-ai") == doctest::Approx(expected->intensity * scale).epsilon(1e-9));
    CHECK(p->number("data-flops") == doctest::Approx(a.algorithmic_flops_per_second).epsilon(1e-9));
    const auto [px, py] = translation(*p);
    CHECK(std::fabs(px - axes.x(p->number("data-ai"))) < kPixel);
    CHECK(std::fabs(py - axes.y(p->number("data-flops"))) < kPixel);
    all_ai.push_back(p->number("data-ai"));
    all_flops.push_back(p->number("data-flops"));
  }

  // Whole decades covering every point.
  CHECK(is_decade(axes.x_min));
  CHECK(is_decade(axes.x_max));
  CHECK(is_decade(axes.y_min));
  CHECK(is_decade(axes.y_max));
  CHECK(axes.x_min <= *std::min_element(all_ai.begin(), all_ai.end()));
  CHECK(axes.x_max >= *std::max_element(all_ai.begin(), all_ai.end()));
  CHECK(axes.y_min <= *std::min_element(all_flops.begin(), all_flops.end()));
  CHECK(axes.y_max >= 989.4e12);
  CHECK(std::log10(axes.x_max / axes.x_min) >= 3);

  // Memory slopes: DRAM and L1 (this spec has no L2 figure), flops = ai × bandwidth on both ends.
  const auto memory = find_all(panel, "line", "memory");
  std::map<std::string, double> bandwidth;
  for (const XmlElement* line : memory) {
    const double bw = line->number("data-bandwidth");
    bandwidth[line->attr("data-level")] = bw;
    for (const auto& [xk, yk] : {std::pair{"x1", "y1"}, std::pair{"x2", "y2"}}) {
      const double ai = axes.ai_at(line->number(xk));
      const double flops = axes.flops_at(line->number(yk));
      CHECK(flops == doctest::Approx(ai * bw).epsilon(1e-3));
    }
    // Each slope rises to the highest roof (or leaves the plot first).
    CHECK(axes.flops_at(line->number("y2")) == doctest::Approx(989.4e12).epsilon(1e-3));
  }
  CHECK(bandwidth == std::map<std::string, double>{{"dram", 3350e9}, {"l1", 33454.1e9}});

  // Compute roofs: the two the rows are judged against, FP32 for context.
  std::map<std::string, std::string> roles;
  for (const XmlElement* line : find_all(panel, "line", "compute")) {
    roles[line->attr("data-ceiling")] = line->attr("data-role");
    const double peak = line->number("data-peak");
    CHECK(std::fabs(line->number("y1") - axes.y(peak)) < kPixel);
    CHECK(std::fabs(line->number("y2") - axes.y(peak)) < kPixel);
    CHECK(std::fabs(line->number("x2") - (axes.left + axes.width)) < kPixel);
  }
  CHECK(roles == std::map<std::string, std::string>{{"tensor_fp16.mma_sync", "judged"},
                                                    {"tensor_fp16.wgmma", "judged"},
                                                    {"fp32", "context"}});

  // Ridge points: every judged roof against every slope, at peak / bandwidth.
  const auto ridges = find_all(panel, "circle", "ridge");
  CHECK(ridges.size() == 2 * 2);
  for (const XmlElement* ridge : ridges) {
    const double ai = ridge->number("data-ai"), flops = ridge->number("data-flops");
    CHECK(ai == doctest::Approx(flops / bandwidth.at(ridge->attr("data-level"))).epsilon(1e-9));
    CHECK(std::fabs(ridge->number("cx") - axes.x(ai)) < kPixel);
    CHECK(std::fabs(ridge->number("cy") - axes.y(flops)) < kPixel);
  }

  // Tick labels at every decade; axis titles with units; legend.
  for (const XmlElement* tick : find_all(panel, "text", "tick")) {
    const double value = tick->number("data-value");
    CHECK(is_decade(value));
    if (tick->has_class("x")) CHECK(std::fabs(tick->number("x") - axes.x(value)) < kPixel);
  }
  CHECK(find_all(panel, "text", "tick").size() ==
        static_cast<std::size_t>(std::lround(std::log10(axes.x_max / axes.x_min)) + 1 +
                                 std::lround(std::log10(axes.y_max / axes.y_min)) + 1));
  const std::string text = panel.all_text();
  for (const char* expected :
       {"arithmetic intensity (FLOP/byte)", "performance (TFLOP/s)", "DRAM 3.35 TB/s",
        "L1 33.5 TB/s", "tensor FP16 (mma_sync) 713.7 TFLOP/s", "FP32 66.9 TFLOP/s (context)",
        "flash-v1", "flash-v2", "standard", "hollow: causal", "ridge 213 FLOP/B",
        "Roofline: NVIDIA H100 SXM5 80GB [h100-sxm5]", "measured on NVIDIA H100 80GB HBM3"}) {
    CAPTURE(expected);
    CHECK(text.find(expected) != std::string::npos);
  }
}

TEST_CASE("plot: two reports, arrows from base to head labelled with the change") {
  const Report base = read_report_file(fixture("base.json"));
  const Report head = read_report_file(fixture("head.json"));
  const XmlElement root = parse_xml(render_svg({base, head}));
  const XmlElement& panel = *find_all(root, "g", "panel").at(0);
  const Axes axes(panel);
  const auto arrows = find_all(panel, "g", "arrow");
  REQUIRE(arrows.size() == 24);
  std::size_t labelled = 0;
  for (const XmlElement* arrow : arrows) {
    const double change = arrow->number("data-change");
    CHECK(change ==
          doctest::Approx(arrow->number("data-to-flops") / arrow->number("data-from-flops") - 1)
              .epsilon(1e-6));
    for (const XmlElement* line : find_all(*arrow, "line")) {
      // From the base point towards the head point.
      const double dx = axes.x(arrow->number("data-to-ai")) - axes.x(arrow->number("data-from-ai"));
      const double dy =
          axes.y(arrow->number("data-to-flops")) - axes.y(arrow->number("data-from-flops"));
      CHECK((line->number("x2") - line->number("x1")) * dx +
                (line->number("y2") - line->number("y1")) * dy >
            0);
      CHECK(line->attr("marker-end") == "url(#arrowhead)");
    }
    const auto labels = find_all(*arrow, "text", "arrow-label");
    if (std::fabs(change) < 0.01) {
      CHECK(labels.empty());
      continue;
    }
    REQUIRE(labels.size() == 1);
    ++labelled;
    const double pct = 100 * change;
    // compare's verdict decides the text: no change on a row it calls same.
    const std::string verdict = arrow->attr("data-verdict");
    const std::string expected =
        verdict == "same" ? std::string("same")
                          : std::string(pct > 0 ? "+" : "-") +
                                format_fixed(std::fabs(pct), std::fabs(pct) >= 10 ? 0 : 1) + "%" +
                                (verdict == "ambiguous" ? " (ambiguous)" : "");
    CHECK(labels[0]->text == expected);
  }
  CHECK(labelled == 5);  // two faster, one slower, the noisy +5.7%, the +1.6%
  // Base points faded, head points solid.
  for (const XmlElement* p : find_all(panel, "g", "point")) {
    if (p->attr("data-report") == "0")
      CHECK(p->attr("opacity") == "0.40");
    else
      CHECK(p->attributes.count("opacity") == 0);
  }
  const std::string text = panel.all_text();
  CHECK(text.find("base") != std::string::npos);
  CHECK(text.find("change in FLOP/s") != std::string::npos);
}

TEST_CASE("plot: arrows between two kernels of one report") {
  const Report base = read_report_file(fixture("base.json"));
  PlotOptions options;
  options.kernel_base = "flash-v1";
  options.kernel_head = "flash-v2";
  const XmlElement root = parse_xml(render_svg({base}, options));
  const auto arrows = find_all(root, "g", "arrow");
  CHECK(arrows.size() == 8);
  for (const XmlElement* arrow : arrows) CHECK(arrow->number("data-change") > 0.3);
  options.kernel_head = "flash-v9";
  CHECK_THROWS_AS(render_svg({base}, options), InputError);
}

TEST_CASE("plot: text is escaped, names round-trip through the XML") {
  Report report = read_report_file(fixture("base.json"));
  const std::string nasty = "v<2> & \"co\" 'x'";
  report.rows.resize(2);
  report.rows[0].kernel = nasty;
  report.specs[0].name = "GPU <A&B>";
  const std::string svg = render_svg({report});
  CHECK(svg.find(nasty) == std::string::npos);
  const XmlElement root = parse_xml(svg);
  std::set<std::string> kernels;
  for (const XmlElement* p : find_all(root, "g", "point")) kernels.insert(p->attr("data-kernel"));
  CHECK(kernels.count(nasty) == 1);
  CHECK(root.all_text().find("Roofline: GPU <A&B> [h100-sxm5]") != std::string::npos);
}

TEST_CASE("plot: one panel per spec, and --svg on model writes it") {
  TempDir dir;
  const std::string path = (dir.path / "chart.svg").string();
  const CliResult r = cli({"model", "--gpu", "a100,h100", "--seq", "1024,4096", "--svg", path});
  REQUIRE(r.code == 0);
  const XmlElement root = parse_xml(read_text(path));
  CHECK(root.number("height") == 1200);
  const auto panels = find_all(root, "g", "panel");
  REQUIRE(panels.size() == 2);
  CHECK(panels[0]->attr("data-spec") == "a100-sxm4-80gb");
  CHECK(panels[1]->attr("data-spec") == "h100-sxm5");
  // A100 has an L2 figure: three slopes there.
  CHECK(find_all(*panels[0], "line", "memory").size() == 3);
  CHECK(find_all(*panels[1], "line", "memory").size() == 2);
  // Model points sit on their roof: time is the roofline floor.
  for (const XmlElement* panel : panels) {
    const Axes axes(*panel);
    for (const XmlElement* p : find_all(*panel, "g", "point")) {
      const auto [px, py] = translation(*p);
      CHECK(std::fabs(px - axes.x(p->number("data-ai"))) < kPixel);
      CHECK(std::fabs(py - axes.y(p->number("data-flops"))) < kPixel);
    }
  }
}

TEST_CASE("plot: the terminal chart is to scale") {
  const Report report = read_report_file(fixture("base.json"));
  const int width = 72, height = 22;
  const std::string chart = render_ascii_plot(report, width, height);
  const Axes axes(*find_all(parse_xml(render_svg({report})), "g", "panel").at(0));

  // Chart rows: an 8-column label field, then the axis character, then `width` cells.
  std::vector<std::vector<std::string>> cells;  // one UTF-8 character per cell
  std::vector<std::string> labels;
  for (const std::string& line : split(chart, '\n')) {
    const std::size_t axis = line.find("┤") != std::string::npos ? line.find("┤") : line.find("│");
    if (axis != 7) continue;
    labels.push_back(line.substr(0, 7));
    std::vector<std::string> row;
    for (std::size_t i = axis + 3; i < line.size();) {
      const unsigned char c = static_cast<unsigned char>(line[i]);
      const std::size_t n = c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
      row.push_back(line.substr(i, n));
      i += n;
    }
    row.resize(static_cast<std::size_t>(width), " ");
    cells.push_back(row);
  }
  REQUIRE(cells.size() == static_cast<std::size_t>(height));
  // The top and bottom rows carry the range's decades, in TFLOP/s.
  CHECK(std::stod(labels.front()) * 1e12 == doctest::Approx(axes.y_max));
  CHECK(std::stod(labels.back()) * 1e12 == doctest::Approx(axes.y_min));

  auto col = [&](double ai) {
    return static_cast<std::size_t>(std::lround(std::log10(ai / axes.x_min) /
                                                std::log10(axes.x_max / axes.x_min) * (width - 1)));
  };
  auto row = [&](double flops) {
    return static_cast<std::size_t>(std::lround(
        std::log10(axes.y_max / flops) / std::log10(axes.y_max / axes.y_min) * (height - 1)));
  };
  // The DRAM ridge of the mma.sync roof.
  const double ridge = 713.7e12 / 3350e9;
  CHECK(cells[row(713.7e12)][col(ridge)] == "+");
  // Every DRAM point of flash-v2 (kernel C) lands on its cell (or shares it: '*').
  const GpuSpec& spec = report.specs.at(0);
  for (const Row& r : report.rows) {
    if (r.kernel != "flash-v2") continue;
    const RowAnalysis a = analyze(r, spec);
    // At the table's FLOP/s (FlashAttention convention), the intensity scaled alike.
    const double scale = view_flops(r, a, FlopConvention::kAlgorithmic).scale;
    const std::string& cell =
        cells[row(a.algorithmic_flops_per_second)][col(a.dram()->intensity * scale)];
    CAPTURE(r.workload.label());
    CHECK((cell == "C" || cell == "*"));
  }
  // Key and axis units.
  CHECK(chart.find("FLOP/byte") != std::string::npos);
  CHECK(chart.find("TFLOP/s") != std::string::npos);
  CHECK(chart.find("points: Aa1 standard, Bb2 flash-v1, Cc3 flash-v2") != std::string::npos);
  CHECK(chart.find("ridge:  + 295 FLOP/byte (tensor FP16 (wgmma)), 213 FLOP/byte (tensor FP16 "
                   "(mma_sync))") != std::string::npos);
  CHECK_THROWS_WITH_AS(render_ascii_plot(report, 10, 5),
                       "the terminal chart needs at least 20 × 8 cells (got 10 × 5)", InputError);
}

TEST_CASE("plot: the bandwidth chart's labels never overprint each other or a marker") {
  // The compiled GPT block profiled on the H200: 290 launches without counted FLOPs.
  const Report report =
      read_report_file(std::string(ROOFLINE_GRAPH_REPORTS_DIR) + "/gpt_timed.json");
  const XmlElement root = parse_xml(render_svg({report}));
  const auto panels = find_all(root, "g", "bandwidth-panel");
  REQUIRE(panels.size() == 1);
  const auto roofs = find_all(*panels[0], "g", "roofs");
  REQUIRE(roofs.size() == 1);
  std::vector<Box> boxes;
  std::vector<bool> time_label;  // a line of equal time's (not a roof's)
  for (const XmlElement& e : roofs[0]->children) {
    if (e.name != "text") continue;
    time_label.push_back(e.all_text().find("B/s") == std::string::npos);
    const std::string anchor =
        e.attributes.count("text-anchor") != 0 ? e.attr("text-anchor") : "start";
    boxes.push_back(text_box(e.number("x"), e.number("y"), e.all_text(), e.number("font-size"),
                             anchor == "end"      ? Anchor::kEnd
                             : anchor == "middle" ? Anchor::kMiddle
                                                  : Anchor::kStart));
  }
  REQUIRE(boxes.size() >= 4);  // two roofs and at least two lines of equal time
  for (std::size_t i = 0; i < boxes.size(); ++i)
    for (std::size_t j = i + 1; j < boxes.size(); ++j) {
      CAPTURE(i);
      CAPTURE(j);
      CHECK_FALSE(overlaps(boxes[i], boxes[j]));
    }
  // The markers, each at its translate(x,y).
  for (const XmlElement* point : find_all(*panels[0], "g", "point")) {
    const auto [mx, my] = translation(*point);
    const Box marker{mx - 5, my - 5, mx + 5, my + 5};
    for (std::size_t i = 0; i < boxes.size(); ++i)
      if (time_label[i]) CHECK_FALSE(overlaps(boxes[i], marker));
  }
}
