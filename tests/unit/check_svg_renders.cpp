// Proves the SVG charts render: draws the recorded reports' charts, converts them to PNG with
// rsvg-convert (Debian: librsvg2-bin) and checks the PNG's signature and size against the SVG's.
// Run by CTest; exits 77 (reported as skipped) when rsvg-convert is not installed.
//
//   check_svg_renders REPORTS_DIR OUTPUT_DIR     (the PNGs stay in OUTPUT_DIR to look at)
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "lib/core/base/output.hpp"
#include "lib/core/chart/svg_chart.hpp"
#include "lib/core/report/report_read.hpp"

namespace {

constexpr int kSkip = 77;

std::uint32_t big_endian(const unsigned char* bytes) {
  return (std::uint32_t{bytes[0]} << 24) | (std::uint32_t{bytes[1]} << 16) |
         (std::uint32_t{bytes[2]} << 8) | std::uint32_t{bytes[3]};
}

// Width and height from the PNG's IHDR chunk; {0, 0} when it is not a PNG.
std::pair<std::uint32_t, std::uint32_t> png_size(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  unsigned char header[24] = {};
  in.read(reinterpret_cast<char*>(header), sizeof header);
  const unsigned char signature[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'};
  if (!in || !std::equal(signature, signature + 8, header) ||
      std::string(reinterpret_cast<char*>(header + 12), 4) != "IHDR")
    return {0, 0};
  return {big_endian(header + 16), big_endian(header + 20)};
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: check_svg_renders REPORTS_DIR OUTPUT_DIR\n";
    return 2;
  }
  if (std::system("command -v rsvg-convert >/dev/null 2>&1") != 0) {
    std::cout << "SKIPPED: rsvg-convert not found (Debian/Ubuntu: apt install librsvg2-bin)\n";
    return kSkip;
  }
  const std::filesystem::path reports = argv[1];
  const std::filesystem::path out = argv[2];
  std::filesystem::create_directories(out);
  struct Chart {
    std::string name;
    std::vector<std::string> files;
  } charts[] = {
      {"base", {"base.json"}},
      {"base_vs_head", {"base.json", "head.json"}},
      {"model", {"model.json"}},
      {"a100", {"head_a100.json"}},
  };
  int failures = 0;
  for (const Chart& chart : charts) {
    std::vector<roofline::Report> loaded;
    for (const std::string& file : chart.files)
      loaded.push_back(roofline::read_report_file(reports / file));
    const std::filesystem::path svg = out / (chart.name + ".svg");
    const std::filesystem::path png = out / (chart.name + ".png");
    std::filesystem::remove(png);
    const std::string text = roofline::render_svg(loaded);
    roofline::write_output(svg.string(), text);
    // The height the SVG declares (a panel grows past 600 px when its legend needs it).
    const std::size_t at = text.find("height=\"");
    const unsigned declared =
        at == std::string::npos ? 0 : static_cast<unsigned>(std::stoul(text.substr(at + 8)));
    const std::string command = "rsvg-convert '" + svg.string() + "' -o '" + png.string() + "'";
    const int status = std::system(command.c_str());
    const auto [width, height] = png_size(png);
    const bool ok = status == 0 && width == 1040 && declared >= 600 && height == declared;
    std::cout << (ok ? "ok   " : "FAIL ") << png.string() << ": rsvg-convert status " << status
              << ", " << width << " × " << height << " px\n";
    if (!ok) ++failures;
  }
  return failures == 0 ? 0 : 1;
}
