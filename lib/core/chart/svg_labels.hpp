// Where an SVG chart's labels go: boxes in pixels, the estimated size of a text, and a placer
// that keeps labels from landing on each other or on markers.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace roofline {

struct Box {
  double x0, y0, x1, y1;
};

bool overlaps(const Box& a, const Box& b);

// `text` in lines of at most `width` characters, broken after "::", "_", ",", " " or "<" where
// one is near the end, else hard: a long kernel name in a legend is wrapped, never cut.
std::vector<std::string> wrap_text(const std::string& text, std::size_t width);

// Keeps labels from landing on each other or on markers: first free candidate wins. Taken boxes
// are filed in a grid of kCell-pixel buckets over the bounds, so that a query looks only at the
// boxes near it (charts of many points reserve a box per marker).
class LabelPlacer {
 public:
  explicit LabelPlacer(Box bounds);
  bool is_free(const Box& box) const;
  void take(const Box& box);

 private:
  static constexpr double kCell = 16;
  struct Cells {
    std::size_t col0, col1, row0, row1;
  };
  static std::size_t cells_along(double length);
  // The buckets a box touches, clamped to the grid (boxes reaching past the bounds included).
  Cells cells(const Box& box) const;

  Box bounds_;
  std::size_t columns_, rows_;
  std::vector<Box> taken_;
  std::vector<std::vector<std::size_t>> buckets_;
};

// Width of `text` in DejaVu Sans / Helvetica, generously estimated (digits are 0.64 em).
double text_width(const std::string& text, double size, bool bold = false);

enum class Anchor { kStart, kMiddle, kEnd };

// The box of `text` drawn at `x` (anchored as `anchor`) on `baseline`.
Box text_box(double x, double baseline, const std::string& text, double size, Anchor anchor,
             bool bold = false);

// A <text> element: `content` escaped, anchored as `anchor`, `extra` attributes added.
std::string svg_text(double x, double y, const std::string& content, double size, Anchor anchor,
                     const std::string& extra = "");

}  // namespace roofline
