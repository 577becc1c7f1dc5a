#include "lib/core/writers/stall_section.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>
#include <vector>

#include "lib/core/base/text.hpp"
#include "lib/core/domain/stalls.hpp"

namespace roofline {
namespace {

std::string percent(double share) {
  return format_fixed(100 * share, share < 0.1 ? 1 : 0) + "%";
}

std::string base_name(const std::string& path) {
  const std::size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// Line `line` (from 1) of `path`, trimmed; empty when unreadable.
std::string source_text(const std::string& path, int line) {
  std::ifstream in(path);
  std::string text;
  for (int n = 1; n <= line && std::getline(in, text); ++n) {
  }
  if (!in) return "";
  const std::size_t first = text.find_first_not_of(" \t");
  return first == std::string::npos ? "" : text.substr(first);
}

std::string share_of(std::uint64_t samples, const StallSampling& s) {
  return percent(static_cast<double>(samples) / static_cast<double>(s.samples));
}

}  // namespace

std::string render_stalls(const JudgedReport& judged, const StallSectionOptions& options) {
  const Report& report = judged.report();
  std::ostringstream out;
  const auto say = [&](const std::string& text, std::string_view indent = "  ") {
    out << (options.max_width > 0 ? wrap_words(text, options.max_width, indent) : text + "\n");
  };
  bool any = false;
  for (const Row& row : report.rows) {
    if (!row.stalls) continue;
    const StallSampling& s = *row.stalls;
    if (!any) {
      say("warp stalls (samples of one launch per row; a share is of all its samples, ±" +
          std::string("the half-width of a 95% binomial interval, a floor on the uncertainty):"));
      any = true;
    }
    const std::string name = row.kernel + " " + row_label(row);
    if (s.samples == 0) {
      say("  " + name + ": no samples" + (s.note.empty() ? "" : " (" + s.note + ")"), "    ");
      continue;
    }
    std::vector<std::pair<std::string, std::uint64_t>> reasons(s.reasons.begin(), s.reasons.end());
    std::stable_sort(reasons.begin(), reasons.end(),
                     [](const auto& a, const auto& b) { return a.second > b.second; });
    std::string line = "  " + name + ": " + format_si(static_cast<double>(s.samples)) +
                       " samples (±" + format_fixed(100 * stall_half_width(s), 1) +
                       " points, one per SM every 2^" + std::to_string(s.period_log2) +
                       " cycles): ";
    std::uint64_t shown = 0;
    for (std::size_t i = 0; i < reasons.size() && i < options.reasons; ++i) {
      line += (i ? ", " : "") + reasons[i].first + " " + share_of(reasons[i].second, s);
      shown += reasons[i].second;
    }
    if (shown < s.samples) line += ", other " + share_of(s.samples - shown, s);
    if (s.dropped > 0) line += "; " + std::to_string(s.dropped) + " dropped";
    say(line, "    ");
    const std::string dominant = dominant_stall(s);
    if (const StallReasonInfo* info = stall_reason_info(dominant); info != nullptr)
      say("    " + dominant + ": " + info->meaning + ". Lever: " + stall_lever(s, dominant) + ".",
          "      ");
    for (std::size_t i = 0; i < s.lines.size() && i < options.listed; ++i) {
      const StallLine& l = s.lines[i];
      std::string text = "    " + base_name(l.file) + ":" + std::to_string(l.line) + "  " +
                         share_of(l.samples, s) + "  " + l.reason;
      if (options.source)
        if (const std::string src = source_text(l.file, l.line); !src.empty()) text += "  | " + src;
      say(text, "      ");
    }
    for (std::size_t i = 0; i < s.hottest.size() && i < options.listed; ++i) {
      const StallInstruction& ins = s.hottest[i];
      std::ostringstream offset;
      offset << std::hex << ins.pc_offset;
      say("    0x" + offset.str() + "  " + share_of(ins.samples, s) + "  " + ins.reason + "  " +
              (ins.sass.empty() ? std::string("(no SASS)") : ins.sass) +
              (ins.file.empty()
                   ? ""
                   : "  [" + base_name(ins.file) + ":" + std::to_string(ins.line) + "]") +
              (ins.waits_on.empty() || ins.waits_on == ins.sass
                   ? ""
                   : "  (the branch of the mbarrier wait " + ins.waits_on + ")"),
          "      ");
    }
    if (!s.note.empty()) say("    note: " + s.note, "      ");
  }
  return out.str();
}

}  // namespace roofline
