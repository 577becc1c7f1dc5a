#include "lib/core/chart/svg_draw.hpp"

#include "lib/core/base/text.hpp"
#include "lib/core/chart/chart_labels.hpp"

namespace roofline {
namespace {

// Code point at `i` of UTF-8 `text` and its length in bytes; length 0 for a byte that starts no
// valid sequence (stray continuation, overlong form, surrogate, beyond U+10FFFF, cut short).
std::pair<char32_t, std::size_t> decode_utf8(const std::string& text, std::size_t i) {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char lead = byte(i);
  if (lead < 0x80) return {lead, 1};
  std::size_t length = 0;
  char32_t cp = 0, minimum = 0;
  if ((lead & 0xE0) == 0xC0) {
    length = 2, cp = lead & 0x1Fu, minimum = 0x80;
  } else if ((lead & 0xF0) == 0xE0) {
    length = 3, cp = lead & 0x0Fu, minimum = 0x800;
  } else if ((lead & 0xF8) == 0xF0) {
    length = 4, cp = lead & 0x07u, minimum = 0x10000;
  } else {
    return {0, 0};
  }
  if (i + length > text.size()) return {0, 0};
  for (std::size_t k = 1; k < length; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) return {0, 0};
    cp = (cp << 6) | (byte(i + k) & 0x3Fu);
  }
  if (cp < minimum || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return {0, 0};
  return {cp, length};
}

const char* memory_dash(MemoryLevel level) {
  switch (level) {
    case MemoryLevel::kDram:
      return "";
    case MemoryLevel::kL2:
      return "7 4";
    case MemoryLevel::kL1:
      return "2 3";
  }
  return "";
}

}  // namespace

// Text for XML character data and attribute values: the five markup characters as entities, and
// what XML 1.0 forbids in a document (controls other than tab, newline and carriage return,
// U+FFFE, U+FFFF, bytes that are not UTF-8) written visibly as \xNN or \uNNNN, as are the C1
// controls. The result is always well-formed.
std::string xml_escape(const std::string& text) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    const auto [cp, length] = decode_utf8(text, i);
    if (length == 0) {
      const auto b = static_cast<unsigned char>(text[i]);
      out += "\\x";
      out += kHex[b >> 4];
      out += kHex[b & 0xF];
      ++i;
      continue;
    }
    const bool control = (cp < 0x20 && cp != '\t' && cp != '\n' && cp != '\r') ||
                         (cp >= 0x7F && cp <= 0x9F) || cp == 0xFFFE || cp == 0xFFFF;
    if (control) {
      out += cp <= 0xFF ? "\\x" : "\\u";
      for (int shift = cp <= 0xFF ? 4 : 12; shift >= 0; shift -= 4)
        out += kHex[(cp >> shift) & 0xF];
    } else if (cp == '&') {
      out += "&amp;";
    } else if (cp == '<') {
      out += "&lt;";
    } else if (cp == '>') {
      out += "&gt;";
    } else if (cp == '"') {
      out += "&quot;";
    } else if (cp == '\'') {
      out += "&apos;";
    } else {
      out.append(text, i, length);
    }
    i += length;
  }
  return out;
}

std::string px(double value) {
  return format_fixed(value, 2);
}
std::string si(double value) {
  return number_text(value, 10);
}

namespace {
constexpr const char* kPalette[] = {"#0072B2", "#D55E00", "#009E73", "#CC79A7",
                                    "#E69F00", "#56B4E9", "#000000"};  // Okabe–Ito
}  // namespace

const char* kernel_colour(std::size_t kernel) {
  return kPalette[kernel % (sizeof kPalette / sizeof kPalette[0])];
}

std::string memory_stroke(const MemoryRoof& roof) {
  const bool dram = roof.level == MemoryLevel::kDram;
  const bool twin = !roof.twin.empty();
  std::string out = std::string(" stroke=\"") +
                    (twin   ? "#8a8a8a"
                     : dram ? "#1f4e79"
                            : "#4a7aa6") +
                    "\" stroke-width=\"" +
                    (twin   ? "1.2"
                     : dram ? "2.2"
                            : "1.6") +
                    "\"";
  if (*memory_dash(roof.level))
    out += std::string(" stroke-dasharray=\"") + memory_dash(roof.level) + "\"";
  return out;
}

std::string compute_stroke(std::size_t index, bool judged) {
  struct Style {
    const char* colour;
    const char* dash;
  };
  static constexpr Style kStyles[] = {{"#1f1f1f", ""},    {"#7b3294", "9 3"},
                                      {"#a6611a", "2 3"}, {"#008837", "9 3 2 3"},
                                      {"#c51b7d", "5 2"}, {"#5a5a5a", "12 4"}};
  const Style& style = kStyles[index % (sizeof kStyles / sizeof kStyles[0])];
  std::string out = std::string(" stroke=\"") + style.colour + "\" stroke-width=\"" +
                    (judged ? "2.2" : "1.4") + "\"";
  if (*style.dash) out += std::string(" stroke-dasharray=\"") + style.dash + "\"";
  return out;
}

std::string marker_svg(MemoryLevel level, const std::string& fill, const std::string& stroke) {
  const std::string paint = "fill=\"" + fill + "\" stroke=\"" + stroke + "\" stroke-width=\"1.6\"";
  switch (level) {
    case MemoryLevel::kDram:
      return "<circle r=\"5\" " + paint + "/>";
    case MemoryLevel::kL2:
      return "<rect x=\"-4.5\" y=\"-4.5\" width=\"9\" height=\"9\" " + paint + "/>";
    case MemoryLevel::kL1:
      return "<path d=\"M0,-6 L5.4,4 L-5.4,4 Z\" " + paint + "/>";
  }
  return "";
}

}  // namespace roofline
