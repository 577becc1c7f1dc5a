#include "lib/core/writers/kernel_section.hpp"

#include <algorithm>
#include <sstream>
#include <vector>

#include "lib/core/base/text.hpp"
#include "lib/core/domain/launch.hpp"
#include "lib/core/domain/point_kernels.hpp"

namespace roofline {
namespace {

// A kernel's time beside earlier ones is said from this on (below it, the medians' jitter).
constexpr double kBesideSeconds = 0.05e-6;

std::string share(double part, double whole) {
  return whole > 0 ? format_fixed(100 * part / whole, 0) + "%" : "-";
}

// "grid 8x8x8, 128 threads, 90 registers, 64 KiB shared"
std::string resources(const PointKernel& k) {
  std::string out = "grid " + dims_text(k.grid) + ", " +
                    std::to_string(k.block[0] * k.block[1] * k.block[2]) + " threads";
  if (k.registers_per_thread > 0)
    out += ", " + std::to_string(k.registers_per_thread) + " registers";
  if (k.shared_bytes > 0)
    out += ", " + format_fixed(static_cast<double>(k.shared_bytes) / 1024, 0) + " KiB shared";
  return out;
}

}  // namespace

std::string render_kernels(const Report& report, std::size_t max_width) {
  // A projection's rows keep the kernels measured on the GPU the report was measured on, whose
  // times are not the table's.
  if (report.context.projection) return "";
  std::ostringstream out;
  const auto say = [&](const std::string& text, std::string_view indent) {
    out << (max_width > 0 ? wrap_words(text, max_width, indent) : text + "\n");
  };
  bool any = false;
  for (const Row& row : report.rows) {
    if (row.kernels.size() < 2) continue;
    if (!any) {
      say("kernels of each launch (CUPTI's activity records, start to end, medians of the kernel "
          "pass's launches; a share is of the row's time, a kernel's time beside an earlier "
          "one's counted once, in the earlier one's):",
          "  ");
      any = true;
    }
    const double time = row.timing ? row.timing->median_seconds() : 0;
    say("  " + row.kernel + " " + row_label(row) + ": " + std::to_string(row.kernels.size()) +
            " kernels" + (time > 0 ? " in " + seconds_text(time) + " a launch" : ""),
        "    ");
    for (std::size_t i = 0; i < row.kernels.size(); ++i) {
      const PointKernel& k = row.kernels[i];
      const double beside = overlap_with_earlier_seconds(row.kernels, i);
      const std::string head = "    " + pad(seconds_text(k.seconds), 9, true) + " " +
                               pad(share(k.seconds - beside, time), 4, true) + "  ";
      const std::string tail = "(" + resources(k) + ")";
      const std::size_t whole =
          display_width(head) + display_width(k.name) + 2 + display_width(tail);
      const std::string indent(display_width(head), ' ');
      if (max_width == 0 || whole <= max_width) {
        out << head << k.name << "  " << tail << "\n";
      } else {
        // Too wide for one line: the name cut to fit, its resources on the next.
        const std::size_t room =
            max_width > display_width(head) ? max_width - display_width(head) : 0;
        out << head << elide(k.name, std::max<std::size_t>(room, 16)) << "\n";
        say(indent + tail, indent + " ");
      }
      if (beside > kBesideSeconds)
        say(indent + seconds_text(beside) +
                " of it beside the kernels before it (started before they ended, as a "
                "programmatic dependent launch does, and waited for them)",
            indent + " ");
    }
    if (time > 0) {
      // Its columns kept as the kernels' lines have them; only the words after them wrap.
      const double idle = std::max(0.0, time - kernels_busy_seconds(row.kernels));
      const std::string head =
          "    " + pad(seconds_text(idle), 9, true) + " " + pad(share(idle, time), 4, true) + "  ";
      const std::string text =
          "no kernel of it ran (the first one's launch latency, the gaps between them)";
      const std::size_t width = display_width(head);
      if (max_width == 0 || width + display_width(text) <= max_width) {
        out << head << text << "\n";
      } else {
        const std::vector<std::string> lines =
            split(wrap_words(text, max_width > width + 16 ? max_width - width : 16, ""), '\n');
        for (std::size_t i = 0; i < lines.size(); ++i)
          if (!lines[i].empty())
            out << (i == 0 ? head : std::string(width, ' ')) << lines[i] << "\n";
      }
    }
  }
  return out.str();
}

}  // namespace roofline
