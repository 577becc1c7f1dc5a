#include <sstream>
#include <vector>

#include "lib/core/base/text.hpp"
#include "lib/core/compare/compare_format.hpp"
#include "lib/core/compare/compare_writers.hpp"

namespace roofline {
namespace {

// Control characters as one_line() writes them, then Markdown's special characters escaped.
std::string markdown_escape(const std::string& text) {
  std::string out;
  for (char c : one_line(text)) {
    if (c == '|' || c == '*' || c == '_' || c == '`' || c == '<' || c == '>' || c == '[' ||
        c == ']' || c == '\\')
      out += '\\';
    out += c;
  }
  return out;
}

std::string verdict_badge(const RowComparison& row) {
  if (row.more_work && row.verdict != Verdict::kSlower && row.verdict != Verdict::kFailed)
    return row.regressed ? "🔴 " + std::string(to_string(row.verdict)) + ", **more work**"
                         : "🟢 " + std::string(to_string(row.verdict)) + ", more work";
  switch (row.verdict) {
    case Verdict::kFaster:
      return "🟢 faster";
    case Verdict::kSlower:
      return "🔴 **slower**";
    case Verdict::kSame:
      return "⚪ same";
    case Verdict::kAmbiguous:
      return "🟡 ambiguous";
    case Verdict::kFailed:
      return "🔴 **failed**";
    case Verdict::kNotCompared:
      return "⚫ not compared";
  }
  return "?";
}

}  // namespace

std::string render_compare_markdown(const Comparison& c) {
  std::ostringstream out;
  out << "### cuflash-roofline compare: " << (c.regressed() ? "❌ regression" : "✅ no regression")
      << "\n\n";
  out << "**base** `" << side_text(c.base_origin, c.base_device, c.base_sm_clock_mhz)
      << "` → **head** `" << side_text(c.head_origin, c.head_device, c.head_sm_clock_mhz)
      << "`\n\n";
  for (const std::string& warning : c.warnings)
    out << "> ⚠️ " << markdown_escape(warning) << "\n\n";
  for (const std::string& note : c.notes) out << "> " << markdown_escape(note) << "\n\n";
  out << summary_line(c) << "\n\n";
  if (const std::string line = detectable_line(c); !line.empty()) out << line << "\n\n";

  auto table = [&](const std::vector<const RowComparison*>& rows) {
    out << "| verdict | kernel | workload | base | head | change | noise | detects | bytes / FLOPs "
           "| "
           "note |\n"
        << "|---|---|---|---:|---:|---:|---|---:|---|---|\n";
    for (const RowComparison* row : rows) {
      out << "| " << verdict_badge(*row) << " | " << markdown_escape(kernel_cell(*row)) << " | "
          << markdown_escape(row->point) << " | ";
      if (row->time) {
        const TimeComparison& t = *row->time;
        out << time_cell(t.base.median_seconds, t.base.relative_spread) << " | "
            << time_cell(t.head.median_seconds, t.head.relative_spread) << " | "
            << (row->verdict == Verdict::kSlower ? "**" + signed_percent(t.relative_change) + "**"
                                                 : signed_percent(t.relative_change))
            << " | " << markdown_escape(noise_cell(t)) << " | " << detectable_cell(t) << " | ";
      } else {
        out << "- | - | - | - | - | ";
      }
      std::string quantities = markdown_escape(quantities_cell(*row));
      if (row->more_work && row->regressed) quantities = "**" + quantities + "**";
      out << quantities << " | " << markdown_escape(row_note(*row)) << " |\n";
    }
  };
  std::vector<const RowComparison*> changed;
  std::vector<const RowComparison*> unchanged;
  for (const RowComparison& row : c.rows) {
    const bool quiet = row.verdict == Verdict::kSame && !row.regressed &&
                       quantities_cell(row).find('%') == std::string::npos && row.notes.empty();
    (quiet ? unchanged : changed).push_back(&row);
  }
  if (!changed.empty()) table(changed);
  if (!unchanged.empty()) {
    out << "\n<details><summary>" << unchanged.size() << " unchanged row"
        << (unchanged.size() == 1 ? "" : "s") << "</summary>\n\n";
    table(unchanged);
    out << "\n</details>\n";
  }
  if (!c.only_base.empty() || !c.only_head.empty()) {
    out << "\n";
    for (const UnmatchedRow& row : c.only_base)
      out << "- only in base: " << markdown_escape(one_line(row.kernel) + " " + row.point) << " ["
          << markdown_escape(row.spec_key) << "]\n";
    for (const UnmatchedRow& row : c.only_head)
      out << "- only in head: " << markdown_escape(one_line(row.kernel) + " " + row.point) << " ["
          << markdown_escape(row.spec_key) << "]\n";
  }
  out << "\n<sub>" << markdown_escape(method_line(c)) << "</sub>\n";
  return out.str();
}

}  // namespace roofline
