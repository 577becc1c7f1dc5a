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
#include "lib/core/report/analysis.hpp"
#include "lib/core/report/flop_convention.hpp"
#include "lib/core/report/report_io.hpp"
#include "tests/unit/helpers.hpp"

using namespace roofline;

namespace {

// ---- a minimal XML well-formedness checker and tree ----
// Elements, attributes (quoted, unique), character data with the five predefined entities and
// character references, comments, processing instructions, CDATA. No DTDs. Throws
// std::runtime_error("offset N: what") on anything not well-formed.

struct XmlElement {
  std::string name;
  std::map<std::string, std::string> attributes;
  std::vector<XmlElement> children;
  std::string text;  // character data directly inside, decoded

  const std::string& attr(const std::string& key) const {
    auto it = attributes.find(key);
    if (it == attributes.end()) throw std::runtime_error("<" + name + "> has no " + key);
    return it->second;
  }
  double number(const std::string& key) const { return std::stod(attr(key)); }
  bool has_class(const std::string& token) const {
    auto it = attributes.find("class");
    if (it == attributes.end()) return false;
    for (const std::string& part : split(it->second, ' '))
      if (part == token) return true;
    return false;
  }
  // Text of this element and its descendants.
  std::string all_text() const {
    std::string out = text;
    for (const XmlElement& child : children) out += child.all_text();
    return out;
  }
};

class XmlParser {
 public:
  explicit XmlParser(const std::string& text) : s_(text) {}

  XmlElement parse() {
    skip_misc();
    if (!starts_with("<")) fail("no root element");
    XmlElement root = element();
    skip_misc();
    if (pos_ != s_.size()) fail("content after the root element");
    return root;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw std::runtime_error("offset " + std::to_string(pos_) + ": " + what);
  }
  bool starts_with(const char* prefix) const {
    return s_.compare(pos_, std::strlen(prefix), prefix) == 0;
  }
  void expect(const char* token) {
    if (!starts_with(token)) fail(std::string("expected ") + token);
    pos_ += std::strlen(token);
  }
  static bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }
  void skip_space() {
    while (pos_ < s_.size() && is_space(s_[pos_])) ++pos_;
  }
  // Whitespace, comments and processing instructions outside the root.
  void skip_misc() {
    while (true) {
      skip_space();
      if (starts_with("<!--"))
        comment();
      else if (starts_with("<?"))
        processing_instruction();
      else
        return;
    }
  }
  void comment() {
    expect("<!--");
    const std::size_t end = s_.find("--", pos_);
    if (end == std::string::npos) fail("unterminated comment");
    pos_ = end;
    expect("-->");
  }
  void processing_instruction() {
    expect("<?");
    const std::size_t end = s_.find("?>", pos_);
    if (end == std::string::npos) fail("unterminated processing instruction");
    pos_ = end + 2;
  }
  std::string name() {
    auto start_char = [](char c) {
      return std::isalpha(static_cast<unsigned char>(c)) || c == '_' || c == ':';
    };
    auto name_char = [&](char c) {
      return start_char(c) || std::isdigit(static_cast<unsigned char>(c)) || c == '-' || c == '.';
    };
    if (pos_ >= s_.size() || !start_char(s_[pos_])) fail("expected a name");
    const std::size_t start = pos_;
    while (pos_ < s_.size() && name_char(s_[pos_])) ++pos_;
    return s_.substr(start, pos_ - start);
  }
  // After '&': one entity or character reference, decoded.
  std::string reference() {
    const std::size_t end = s_.find(';', pos_);
    if (end == std::string::npos || end - pos_ > 10) fail("bad entity reference");
    const std::string ref = s_.substr(pos_, end - pos_);
    pos_ = end + 1;
    static const std::map<std::string, std::string> kEntities = {
        {"amp", "&"}, {"lt", "<"}, {"gt", ">"}, {"quot", "\""}, {"apos", "'"}};
    if (auto it = kEntities.find(ref); it != kEntities.end()) return it->second;
    if (ref.size() > 1 && ref[0] == '#') {
      const bool hex = ref[1] == 'x';
      const std::string digits = ref.substr(hex ? 2 : 1);
      if (digits.empty() || digits.find_first_not_of(hex ? "0123456789abcdefABCDEF"
                                                         : "0123456789") != std::string::npos)
        fail("bad character reference &" + ref + ";");
      const unsigned long code = std::stoul(digits, nullptr, hex ? 16 : 10);
      std::string out;  // UTF-8
      if (code < 0x80)
        out += static_cast<char>(code);
      else if (code < 0x800) {
        out += static_cast<char>(0xC0 | (code >> 6));
        out += static_cast<char>(0x80 | (code & 0x3F));
      } else {
        out += static_cast<char>(0xE0 | (code >> 12));
        out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (code & 0x3F));
      }
      return out;
    }
    fail("unknown entity &" + ref + ";");
  }
  std::string attribute_value() {
    if (pos_ >= s_.size() || (s_[pos_] != '"' && s_[pos_] != '\''))
      fail("unquoted attribute value");
    const char quote = s_[pos_++];
    std::string out;
    while (true) {
      if (pos_ >= s_.size()) fail("unterminated attribute value");
      const char c = s_[pos_];
      if (c == quote) break;
      if (c == '<') fail("'<' in an attribute value");
      ++pos_;
      if (c == '&')
        out += reference();
      else
        out += c;
    }
    ++pos_;
    return out;
  }
  XmlElement element() {
    expect("<");
    XmlElement e;
    e.name = name();
    while (true) {
      const std::size_t before = pos_;
      skip_space();
      if (starts_with("/>")) {
        pos_ += 2;
        return e;
      }
      if (starts_with(">")) {
        ++pos_;
        break;
      }
      if (pos_ == before) fail("expected whitespace before an attribute");
      const std::string key = name();
      skip_space();
      expect("=");
      skip_space();
      if (!e.attributes.emplace(key, attribute_value()).second) fail("duplicate attribute " + key);
    }
    // Content.
    while (true) {
      if (pos_ >= s_.size()) fail("unclosed <" + e.name + ">");
      if (starts_with("</")) {
        pos_ += 2;
        if (name() != e.name) fail("mismatched closing tag for <" + e.name + ">");
        skip_space();
        expect(">");
        return e;
      }
      if (starts_with("<!--"))
        comment();
      else if (starts_with("<![CDATA[")) {
        pos_ += 9;
        const std::size_t end = s_.find("]]>", pos_);
        if (end == std::string::npos) fail("unterminated CDATA");
        e.text += s_.substr(pos_, end - pos_);
        pos_ = end + 3;
      } else if (starts_with("<?"))
        processing_instruction();
      else if (starts_with("<"))
        e.children.push_back(element());
      else if (starts_with("]]>"))
        fail("']]>' in character data");
      else if (s_[pos_] == '&') {
        ++pos_;
        e.text += reference();
      } else
        e.text += s_[pos_++];
    }
  }

  const std::string& s_;
  std::size_t pos_ = 0;
};

XmlElement parse_xml(const std::string& text) {
  return XmlParser(text).parse();
}

void collect(const XmlElement& e, const std::function<bool(const XmlElement&)>& keep,
             std::vector<const XmlElement*>& out) {
  if (keep(e)) out.push_back(&e);
  for (const XmlElement& child : e.children) collect(child, keep, out);
}

std::vector<const XmlElement*> find_all(const XmlElement& root, const std::string& name,
                                        const std::string& css_class = "") {
  std::vector<const XmlElement*> out;
  collect(
      root,
      [&](const XmlElement& e) {
        return e.name == name && (css_class.empty() || e.has_class(css_class));
      },
      out);
  return out;
}

// "translate(12.50,34.00)" -> {12.5, 34}
std::pair<double, double> translation(const XmlElement& e) {
  const std::string& t = e.attr("transform");
  const std::size_t open = t.find('('), comma = t.find(','), close = t.find(')');
  REQUIRE(t.rfind("translate(", 0) == 0);
  return {std::stod(t.substr(open + 1, comma - open - 1)),
          std::stod(t.substr(comma + 1, close - comma - 1))};
}

// The axis transform a panel declares.
struct Axes {
  double x_min, x_max, y_min, y_max, left, top, width, height;
  explicit Axes(const XmlElement& panel)
      : x_min(panel.number("data-x-min")),
        x_max(panel.number("data-x-max")),
        y_min(panel.number("data-y-min")),
        y_max(panel.number("data-y-max")),
        left(panel.number("data-plot-left")),
        top(panel.number("data-plot-top")),
        width(panel.number("data-plot-width")),
        height(panel.number("data-plot-height")) {}
  double x(double ai) const {
    return left +
           width * (std::log10(ai) - std::log10(x_min)) / (std::log10(x_max) - std::log10(x_min));
  }
  double y(double flops) const {
    return top + height * (std::log10(y_max) - std::log10(flops)) /
                     (std::log10(y_max) - std::log10(y_min));
  }
  double ai_at(double px) const {
    return std::pow(
        10.0, std::log10(x_min) + (px - left) / width * (std::log10(x_max) - std::log10(x_min)));
  }
  double flops_at(double py) const {
    return std::pow(
        10.0, std::log10(y_max) - (py - top) / height * (std::log10(y_max) - std::log10(y_min)));
  }
};

constexpr double kPixel = 0.006;  // coordinates are written with 2 decimals

const std::string kReports = std::string(ROOFLINE_TEST_DATA_DIR) + "/reports/";
std::string fixture(const std::string& name) {
  return kReports + name;
}

bool is_decade(double value) {
  const double l = std::log10(value);
  return std::fabs(l - std::round(l)) < 1e-9;
}

}  // namespace

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
        cells[row(a.algorithmic_flops_per_second)][col(a.dram->intensity * scale)];
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
