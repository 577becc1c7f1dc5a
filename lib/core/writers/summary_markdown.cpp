#include "lib/core/writers/summary_markdown.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <vector>

#include "lib/core/base/text.hpp"

namespace roofline {
namespace {

// A cell's text with the characters that would end or break a Markdown table cell escaped.
std::string cell(const std::string& text) {
  std::string out;
  for (char c : one_line(text)) {
    if (c == '|' || c == '`' || c == '*' || c == '_' || c == '<' || c == '>') out += '\\';
    out += c;
  }
  return out;
}

}  // namespace

std::string render_summary_markdown(const Summary& summary, std::size_t top,
                                    const std::string& source) {
  std::ostringstream out;
  out << "### Where the time goes: " << cell(source) << "\n\n"
      << summary.rows << " launches, " << seconds_text(summary.total_seconds)
      << " of kernel time in " << summary.groups.size() << " groups";
  if (summary.left_out > 0) out << " (" << summary.left_out << " rows without a measured time)";
  out << ".\n\n"
      << "| time % | total | launches | median | bound by | of roof | try next | kernel |\n"
      << "| ---: | ---: | ---: | ---: | --- | ---: | --- | --- |\n";
  const std::size_t shown = top == 0 ? summary.groups.size() : std::min(top, summary.groups.size());
  for (std::size_t i = 0; i < shown; ++i) {
    const KernelGroup& g = summary.groups[i];
    out << "| " << format_fixed(100 * g.share, 1) << "% | " << seconds_text(g.total_seconds)
        << " | " << g.launches << " | " << seconds_text(g.median_seconds) << " | "
        << cell(g.binding) << " | "
        << (std::isfinite(g.fraction_of_bound) ? format_fixed(100 * g.fraction_of_bound, 0) + "%"
                                               : std::string("-"))
        << " | "
        << (g.lever.empty() ? std::string("-")
                            : cell(g.lever) + " ≤×" + format_fixed(g.lever_speedup, 2))
        << " | " << cell(g.key) << " |\n";
  }
  if (shown < summary.groups.size())
    out << "\nand " << summary.groups.size() - shown << " more groups.\n";
  const std::vector<const KernelGroup*> advised = groups_to_advise(summary, top);
  const std::string gaps = graph_gap_advice(summary);
  if (!advised.empty() || !gaps.empty()) {
    out << "\n**What to try next** (upper bounds: each group at the roof its lever opens)\n\n";
    for (const KernelGroup* group : advised) {
      const KernelGroup& g = *group;
      out << "- **" << cell(g.key) << "** (" << format_fixed(100 * g.share, 1)
          << "% of the time): " << cell(g.advice) << ". These " << g.launches
          << (g.launches == 1 ? " launch" : " launches") << " up to ×"
          << format_fixed(g.lever_speedup, 2) << ", the program up to ×"
          << format_fixed(g.program_speedup, 3) << ".";
      if (const std::string note = shared_note(g); !note.empty())
        out << " It " << cell(note) << ".";
      out << "\n";
    }
    if (!gaps.empty())
      out << "- **CUDA graph launches** (the time between their nodes): " << cell(gaps) << ".\n";
  }
  return out.str();
}

}  // namespace roofline
