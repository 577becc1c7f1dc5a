// No label of a rendered chart overprints another: every <text> of the SVG of recorded reports
// (a model sweep, run reports of the H100 and the A100, a merged report, a profile of a compiled
// model, two reports with arrows), placed by its own and its groups' translations, against
// every other.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "lib/core/base/text.hpp"
#include "lib/core/chart/svg_chart.hpp"
#include "lib/core/chart/svg_labels.hpp"
#include "lib/core/chart/terminal_chart.hpp"
#include "lib/core/report/report_read.hpp"
#include "tests/unit/helpers.hpp"
#include "tests/unit/plot_test_support.hpp"

using namespace roofline;
using namespace roofline::plot_test;

namespace {

struct Label {
  std::string text;
  Box box;
};

// Translation of "translate(x,y)" (or "translate(x y)"); false for any other transform.
bool parse_translate(const std::string& t, double& x, double& y) {
  if (t.rfind("translate(", 0) != 0) return false;
  const std::size_t open = t.find('('), close = t.find(')');
  std::string inner = t.substr(open + 1, close - open - 1);
  for (char& c : inner)
    if (c == ',') c = ' ';
  std::size_t used = 0;
  x = std::stod(inner, &used);
  y = used < inner.size() && inner.find_first_not_of(' ', used) != std::string::npos
          ? std::stod(inner.substr(used))
          : 0;
  return close == t.size() - 1;
}

void collect_labels(const XmlElement& e, double dx, double dy, std::vector<Label>& out) {
  if (e.attributes.count("transform") != 0) {
    double x = 0, y = 0;
    if (!parse_translate(e.attr("transform"), x, y)) return;  // rotated axis titles: apart
    dx += x;
    dy += y;
  }
  if (e.name == "text") {
    // What is drawn: its own characters and its tspans, not its <title> (a tooltip).
    std::string text = e.text;
    for (const XmlElement& child : e.children)
      if (child.name != "title") text += child.all_text();
    if (text.empty() || e.attributes.count("x") == 0 || e.attributes.count("y") == 0) return;
    const std::string anchor =
        e.attributes.count("text-anchor") != 0 ? e.attr("text-anchor") : "start";
    const double size = e.attributes.count("font-size") != 0 ? e.number("font-size") : 12;
    out.push_back({text, text_box(dx + e.number("x"), dy + e.number("y"), text, size,
                                  anchor == "end"      ? Anchor::kEnd
                                  : anchor == "middle" ? Anchor::kMiddle
                                                       : Anchor::kStart)});
    return;
  }
  for (const XmlElement& child : e.children) collect_labels(child, dx, dy, out);
}

// Boxes are estimates with generous widths: overlaps of a pixel or two are the estimate's.
bool overprints(const Box& a, const Box& b) {
  const Box shrunk{a.x0 + 1, a.y0 + 1, a.x1 - 1, a.y1 - 1};
  return overlaps(shrunk, b);
}

void check_no_overprint(const std::vector<Report>& reports, const std::string& what) {
  CAPTURE(what);
  const XmlElement root = parse_xml(render_svg(reports));
  std::vector<Label> labels;
  collect_labels(root, 0, 0, labels);
  REQUIRE(labels.size() >= 4);
  for (std::size_t i = 0; i < labels.size(); ++i)
    for (std::size_t j = i + 1; j < labels.size(); ++j) {
      if (!overprints(labels[i].box, labels[j].box)) continue;
      CAPTURE(labels[i].text);
      CAPTURE(labels[j].text);
      CHECK_FALSE(overprints(labels[i].box, labels[j].box));
    }
}

Report recorded(const std::string& name) {
  return read_report_file(std::string(ROOFLINE_TEST_DATA_DIR) + "/reports/" + name);
}

}  // namespace

TEST_CASE("plot labels: no label overprints another in the charts of recorded reports") {
  check_no_overprint({recorded("model.json")}, "model.json (the analytic model's sweep)");
  check_no_overprint({recorded("head.json")}, "head.json (H100 run)");
  check_no_overprint({recorded("head_a100.json")}, "head_a100.json (A100 run)");
  check_no_overprint({recorded("base.json"), recorded("head.json")}, "base -> head arrows");
  check_no_overprint(
      {read_report_file(std::string(ROOFLINE_GRAPH_REPORTS_DIR) + "/gpt_timed.json")},
      "a compiled GPT block's profile");
}

TEST_CASE("plot labels: no label overprints another in today's model charts") {
  TempDir dir;
  for (const char* gpu : {"h200", "a100", "b200"}) {
    const std::string path = (dir.path / (std::string(gpu) + ".json")).string();
    REQUIRE(cli({"model", "--gpu", gpu, "--pass", "fwd,bwd", "--json", path}).code == 0);
    check_no_overprint({read_report_file(path)}, std::string("model --gpu ") + gpu);
  }
}

TEST_CASE("plot labels: the terminal chart writes no roof name under a point") {
  // The model's H200 sweep, forward and backward: flash-v2 and flash-v3 points sit on the
  // tensor roofs' rows, where the names used to be written between the point letters.
  TempDir dir;
  const std::string path = (dir.path / "h200.json").string();
  REQUIRE(cli({"model", "--gpu", "h200", "--pass", "fwd,bwd", "--json", path}).code == 0);
  const std::string chart = render_ascii_plot(read_report_file(path), 80, 24);
  for (const char* peak : {" 989 ", " 714 "}) {
    CAPTURE(peak);
    const std::size_t at = chart.find(peak);
    REQUIRE(at != std::string::npos);
    // The name is written into a stretch of plain line: a line character right before it
    // ("─", three bytes in UTF-8), or the longer name, itself after the line.
    const std::string before = chart.substr(at - 3, 3);
    const bool plain = before == "─" || chart.rfind("─ tensor FP16", at) != std::string::npos;
    CHECK(plain);
  }
}

TEST_CASE("plot labels: a tail-bound row's tail roof is drawn above its point") {
  // head.json: flash-v1 and flash-v2 at N 1024 on the H100 are tail-bound (64 and 128 CTAs).
  const Report report = recorded("head.json");
  const XmlElement root = parse_xml(render_svg({report}));
  const auto ticks = find_all(root, "line", "tail-roof");
  REQUIRE(ticks.size() >= 2);
  for (const XmlElement* tick : ticks) {
    const std::string row = tick->attr("data-row");
    // Its point: the DRAM marker of the same row, below the tick (larger y on the screen).
    bool found = false;
    for (const XmlElement* point : find_all(root, "g", "point")) {
      if (point->attr("data-row") != row || point->attr("data-level") != "dram") continue;
      const auto [px, py] = translation(*point);
      CHECK(tick->number("y1") <= py + 0.01);
      CHECK(tick->number("x1") < px);
      CHECK(tick->number("x2") > px);
      found = true;
    }
    CHECK(found);
  }
}
