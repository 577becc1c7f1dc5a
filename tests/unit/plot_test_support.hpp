// What the chart tests read an SVG with: a minimal XML well-formedness checker and tree, the axis
// transform a panel declares, and the recorded reports. Header-only, for test_plot*.cpp.
#pragma once

#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <map>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace roofline::plot_test {

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

inline XmlElement parse_xml(const std::string& text) {
  return XmlParser(text).parse();
}

inline void collect(const XmlElement& e, const std::function<bool(const XmlElement&)>& keep,
                    std::vector<const XmlElement*>& out) {
  if (keep(e)) out.push_back(&e);
  for (const XmlElement& child : e.children) collect(child, keep, out);
}

inline std::vector<const XmlElement*> find_all(const XmlElement& root, const std::string& name,
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
inline std::pair<double, double> translation(const XmlElement& e) {
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

inline constexpr double kPixel = 0.006;  // coordinates are written with 2 decimals

inline const std::string kReports = std::string(ROOFLINE_TEST_DATA_DIR) + "/reports/";
inline std::string fixture(const std::string& name) {
  return kReports + name;
}

inline bool is_decade(double value) {
  const double l = std::log10(value);
  return std::fabs(l - std::round(l)) < 1e-9;
}

}  // namespace roofline::plot_test
