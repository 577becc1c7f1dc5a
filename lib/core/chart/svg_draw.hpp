// Pieces every SVG drawing of a chart shares: escaping, number formats, the kernel palette,
// the strokes of memory roofs and the marker of each memory level.
#pragma once

#include <cstddef>
#include <string>

#include "lib/core/chart/chart.hpp"

namespace roofline {

// Text for XML character data and attribute values, always well-formed (svg_draw.cpp says how).
std::string xml_escape(const std::string& text);
// A coordinate (two decimals) and a data value (ten significant digits).
std::string px(double value);
std::string si(double value);

// The colour of kernel `kernel` (an index into Chart::kernels): the Okabe–Ito palette.
const char* kernel_colour(std::size_t kernel);
// The stroke attributes of a memory roof, on a chart and in its legend alike: context roofs
// (another spec's) grey and thin, DRAM dark and thick, the caches dashed.
std::string memory_stroke(const MemoryRoof& roof);
// The stroke of the panel's compute roof number `index`: each roof its own colour and dash, so
// that the legend tells them apart (judged roofs heavier than context ones).
std::string compute_stroke(std::size_t index, bool judged);
// The marker of a point at `level` (circle DRAM, square L2, triangle L1), centred on 0,0.
std::string marker_svg(MemoryLevel level, const std::string& fill, const std::string& stroke);

}  // namespace roofline
