#include "lib/core/chart/svg_labels.hpp"

#include <algorithm>
#include <cmath>

#include "lib/core/base/text.hpp"
#include "lib/core/chart/chart_labels.hpp"
#include "lib/core/chart/svg_draw.hpp"

namespace roofline {

std::vector<std::string> wrap_text(const std::string& text, std::size_t width) {
  std::vector<std::string> lines;
  std::size_t start = 0;
  while (text.size() - start > width) {
    std::size_t cut = start + width;
    for (std::size_t i = start + width; i > start + width / 2; --i) {
      const char c = text[i - 1];
      if (c == ':' || c == '_' || c == ',' || c == ' ' || c == '<') {
        cut = i;
        break;
      }
    }
    lines.push_back(text.substr(start, cut - start));
    start = cut;
  }
  lines.push_back(text.substr(start));
  return lines;
}

bool overlaps(const Box& a, const Box& b) {
  return a.x0 < b.x1 && b.x0 < a.x1 && a.y0 < b.y1 && b.y0 < a.y1;
}

LabelPlacer::LabelPlacer(Box bounds)
    : bounds_(bounds),
      columns_(cells_along(bounds.x1 - bounds.x0)),
      rows_(cells_along(bounds.y1 - bounds.y0)),
      buckets_(columns_ * rows_) {}

bool LabelPlacer::is_free(const Box& box) const {
  if (box.x0 < bounds_.x0 || box.x1 > bounds_.x1 || box.y0 < bounds_.y0 || box.y1 > bounds_.y1)
    return false;
  const Cells c = cells(box);
  for (std::size_t row = c.row0; row <= c.row1; ++row)
    for (std::size_t col = c.col0; col <= c.col1; ++col)
      for (std::size_t index : buckets_[row * columns_ + col])
        if (overlaps(box, taken_[index])) return false;
  return true;
}

void LabelPlacer::take(const Box& box) {
  if (!(box.x0 < bounds_.x1 && bounds_.x0 < box.x1 && box.y0 < bounds_.y1 && bounds_.y0 < box.y1))
    return;  // outside the bounds: no query can meet it
  const Cells c = cells(box);
  for (std::size_t row = c.row0; row <= c.row1; ++row)
    for (std::size_t col = c.col0; col <= c.col1; ++col)
      buckets_[row * columns_ + col].push_back(taken_.size());
  taken_.push_back(box);
}

std::size_t LabelPlacer::cells_along(double length) {
  return static_cast<std::size_t>(std::ceil(std::max(length, kCell) / kCell));
}

LabelPlacer::Cells LabelPlacer::cells(const Box& box) const {
  auto index = [](double offset, std::size_t count) {
    const double cell = std::floor(offset / kCell);
    return static_cast<std::size_t>(std::clamp(cell, 0.0, static_cast<double>(count - 1)));
  };
  return {index(box.x0 - bounds_.x0, columns_), index(box.x1 - bounds_.x0, columns_),
          index(box.y0 - bounds_.y0, rows_), index(box.y1 - bounds_.y0, rows_)};
}

double text_width(const std::string& text, double size, bool bold) {
  return (bold ? 0.7 : 0.62) * size * static_cast<double>(display_width(text));
}

Box text_box(double x, double baseline, const std::string& text, double size, Anchor anchor,
             bool bold) {
  const double w = text_width(text, size, bold);
  const double x0 = anchor == Anchor::kStart ? x : anchor == Anchor::kMiddle ? x - w / 2 : x - w;
  return {x0 - 1, baseline - 0.82 * size, x0 + w + 1, baseline + 0.25 * size};
}

std::string svg_text(double x, double y, const std::string& content, double size, Anchor anchor,
                     const std::string& extra) {
  std::string out =
      "<text x=\"" + px(x) + "\" y=\"" + px(y) + "\" font-size=\"" + number_text(size, 6) + "\"";
  if (anchor == Anchor::kMiddle) out += " text-anchor=\"middle\"";
  if (anchor == Anchor::kEnd) out += " text-anchor=\"end\"";
  if (!extra.empty()) out += " " + extra;
  return out + ">" + xml_escape(content) + "</text>\n";
}

}  // namespace roofline
