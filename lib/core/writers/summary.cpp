#include "lib/core/writers/summary.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <sstream>

#include "lib/core/base/table_layout.hpp"
#include "lib/core/base/text.hpp"
#include "lib/core/domain/metric_catalog.hpp"
#include "lib/core/verdict/advice.hpp"
#include "lib/core/verdict/analysis.hpp"

namespace roofline {
namespace {

std::string trim(const std::string& text) {
  const std::size_t begin = text.find_first_not_of(' ');
  if (begin == std::string::npos) return "";
  return text.substr(begin, text.find_last_not_of(' ') - begin + 1);
}

// The template arguments of the first template in `text` (split at top-level commas).
std::vector<std::string> template_arguments(const std::string& text) {
  std::vector<std::string> out;
  std::size_t open = std::string::npos;
  int paren = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '(') ++paren;
    if (text[i] == ')') --paren;
    if (text[i] == '<' && paren == 0) {
      open = i;
      break;
    }
  }
  if (open == std::string::npos) return out;
  int depth = 0;
  std::string current;
  for (std::size_t i = open + 1; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '<' || c == '(' || c == '{' || c == '[') ++depth;
    if (c == ')' || c == '}' || c == ']') --depth;
    if (c == '>') {
      if (depth == 0) break;
      --depth;
    }
    if (c == ',' && depth == 0) {
      out.push_back(trim(current));
      current.clear();
      continue;
    }
    current += c;
  }
  out.push_back(trim(current));
  return out;
}

bool is_value(const std::string& argument) {
  if (argument.empty()) return true;
  if (argument == "true" || argument == "false") return true;
  const char c = argument[0];
  return std::isdigit(static_cast<unsigned char>(c)) != 0 || c == '-' || c == '(';
}

// The last name of a qualified name, up to its own template or parameter list.
std::string last_name(std::string name) {
  for (const char* noise : {"(anonymous namespace)::", "{anonymous}::"})
    for (std::size_t at; (at = name.find(noise)) != std::string::npos;)
      name.erase(at, std::string(noise).size());
  const std::size_t end = name.find_first_of("<(");
  name = name.substr(0, end);
  const std::size_t colon = name.rfind("::");
  return colon == std::string::npos ? name : name.substr(colon + 2);
}

double median_of(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

}  // namespace

std::string functor_of(const std::string& demangled) {
  for (const std::string& argument : template_arguments(demangled)) {
    if (is_value(argument)) continue;
    std::string name = last_name(argument);
    // A plain type argument (float, c10::Half) names no functor.
    if (name.empty() || name == "float" || name == "double" || name == "int" || name == "Half" ||
        name == "BFloat16" || name == "bool" || name == "char" || name == "long" ||
        name == "unsigned" || name == "array")
      continue;
    return name;
  }
  return "";
}

std::string group_key(const Row& row, GroupBy by) {
  const std::string base = row.kernel;
  switch (by) {
    case GroupBy::kName:
      return base;
    case GroupBy::kShape:
      return base + " " + row_label(row);
    case GroupBy::kNvtx: {
      if (!row.launch) return base;
      const std::string& range = row.launch->nvtx_range;
      const std::size_t cut = range.rfind(" / ");
      const std::string inner = cut == std::string::npos ? range : range.substr(cut + 3);
      return inner.empty() ? "(no NVTX range)" : inner;
    }
    case GroupBy::kFunctor:
    default: {
      if (!row.launch) return base;
      const std::string functor = functor_of(row.launch->demangled_name);
      return functor.empty() ? base : base + " [" + functor + "]";
    }
  }
}

bool is_graph_parent(const Row& row) {
  return row.launch && row.launch->graph && row.launch->graph_nodes > 0;
}

namespace {

// The length of the union of [start, end) intervals (ns), in seconds.
double union_seconds(std::vector<std::pair<std::int64_t, std::int64_t>> intervals) {
  std::sort(intervals.begin(), intervals.end());
  double total = 0;
  std::int64_t start = 0, end = 0;
  bool open = false;
  for (const auto& [s, e] : intervals) {
    if (open && s <= end) {
      end = std::max(end, e);
      continue;
    }
    if (open) total += static_cast<double>(end - start);
    start = s;
    end = e;
    open = true;
  }
  if (open) total += static_cast<double>(end - start);
  return total * 1e-9;
}

}  // namespace

Summary summarize(const Report& report, GroupBy by, SummarySort sort) {
  return summarize(JudgedReport(report), by, sort);
}

Summary summarize(const JudgedReport& judged, GroupBy by, SummarySort sort) {
  const Report& report = judged.report();
  Summary summary;
  std::vector<std::pair<std::int64_t, std::int64_t>> intervals;
  struct Gathered {
    KernelGroup group;
    std::vector<double> times;
    std::map<std::string, double> time_by_binding;
    std::map<std::string, double> time_by_lever;
    std::map<std::string, std::pair<double, std::string>> longest_by_lever;  // time, advice
    double target_seconds = 0;  // Σ targets of the rows with advice, + time of those without
    double judged_seconds = 0;  // time of the rows with a floor
  };
  std::map<std::string, std::size_t> index;
  std::vector<Gathered> gathered;
  for (std::size_t i = 0; i < report.rows.size(); ++i) {
    const Row& row = report.rows[i];
    if (is_graph_parent(row)) {
      ++summary.graph_launches;
      const auto time = row.counters.find(quantity::kGpuTime);
      const auto idle = row.counters.find(quantity::kGraphIdle);
      if (time != row.counters.end() && time->second > 0 && idle != row.counters.end()) {
        summary.graph_seconds += time->second;
        summary.graph_idle_seconds += idle->second;
      }
      continue;
    }
    const RowAnalysis& a = judged.at(i);
    if (!a.has_verdict || a.time_source == Source::kModel || !(a.time_seconds > 0)) {
      ++summary.left_out;
      continue;
    }
    if (row.launch && row.launch->is_graph_node()) ++summary.graph_node_rows;
    if (row.launch && row.launch->gpu_start_ns > 0 &&
        row.launch->gpu_end_ns > row.launch->gpu_start_ns) {
      intervals.emplace_back(row.launch->gpu_start_ns, row.launch->gpu_end_ns);
      summary.interval_seconds +=
          static_cast<double>(row.launch->gpu_end_ns - row.launch->gpu_start_ns) * 1e-9;
    }
    const std::string key = group_key(row, by);
    auto [it, inserted] = index.try_emplace(key, gathered.size());
    if (inserted) {
      Gathered g;
      g.group.key = key;
      g.group.first_launch = row.launch ? row.launch->index : static_cast<std::int64_t>(i);
      gathered.push_back(std::move(g));
    }
    Gathered& g = gathered[it->second];
    ++g.group.launches;
    g.group.total_seconds += a.time_seconds;
    // A row without a floor (nothing counted) claims no headroom and is left out of the
    // fraction of the roof.
    if (std::isfinite(a.time_floor_seconds)) {
      g.judged_seconds += a.time_seconds;
      g.group.floor_seconds += std::min(a.time_floor_seconds, a.time_seconds);
      g.group.headroom_seconds += std::max(0.0, a.time_seconds - a.time_floor_seconds);
    }
    g.times.push_back(a.time_seconds);
    g.time_by_binding[a.binding] += a.time_seconds;
    if (const auto shared = row.counters.find(quantity::kGraphShared);
        shared != row.counters.end() && shared->second > 0) {
      g.group.shared_seconds += shared->second;
      const auto alone = row.counters.find(quantity::kReplayTime);
      if (shared->second > quantity::kGraphSharedNoted * a.time_seconds &&
          alone != row.counters.end() && alone->second > 0) {
        ++g.group.shared_replayed;
        g.group.shared_graph_seconds += a.time_seconds;
        g.group.shared_alone_seconds += alone->second;
      }
    }
    if (const std::optional<Advice>& advice = judged.advice_at(i)) {
      const std::string lever = to_string(advice->lever);
      g.time_by_lever[lever] += a.time_seconds;
      auto& longest = g.longest_by_lever[lever];
      if (a.time_seconds > longest.first) longest = {a.time_seconds, advice->line()};
      g.target_seconds += std::min(a.time_seconds, advice->target_time_seconds);
    } else {
      g.target_seconds += a.time_seconds;
    }
    summary.total_seconds += a.time_seconds;
    ++summary.rows;
  }
  summary.timed_rows = intervals.size();
  summary.busy_seconds = union_seconds(std::move(intervals));
  for (Gathered& g : gathered) {
    KernelGroup& group = g.group;
    group.share = group.total_seconds / summary.total_seconds;
    group.median_seconds = median_of(g.times);
    group.min_seconds = *std::min_element(g.times.begin(), g.times.end());
    group.max_seconds = *std::max_element(g.times.begin(), g.times.end());
    group.fraction_of_bound =
        g.judged_seconds > 0 ? group.floor_seconds / g.judged_seconds : std::nan("");
    group.program_gain = group.headroom_seconds / summary.total_seconds;
    group.binding =
        std::max_element(g.time_by_binding.begin(), g.time_by_binding.end(),
                         [](const auto& a, const auto& b) { return a.second < b.second; })
            ->first;
    if (!g.time_by_lever.empty()) {
      group.lever =
          std::max_element(g.time_by_lever.begin(), g.time_by_lever.end(),
                           [](const auto& a, const auto& b) { return a.second < b.second; })
              ->first;
      group.advice = g.longest_by_lever[group.lever].second;
    }
    group.lever_saving_seconds = std::max(0.0, group.total_seconds - g.target_seconds);
    group.lever_speedup = g.target_seconds > 0 ? group.total_seconds / g.target_seconds : 1.0;
    summary.groups.push_back(std::move(group));
  }
  for (KernelGroup& group : summary.groups)
    group.program_speedup =
        summary.total_seconds / (summary.total_seconds - group.lever_saving_seconds);
  std::stable_sort(summary.groups.begin(), summary.groups.end(),
                   [sort](const KernelGroup& a, const KernelGroup& b) {
                     switch (sort) {
                       case SummarySort::kGain:
                         return a.program_gain > b.program_gain;
                       case SummarySort::kLaunch:
                         return a.first_launch < b.first_launch;
                       case SummarySort::kTime:
                       default:
                         return a.total_seconds > b.total_seconds;
                     }
                   });
  return summary;
}

std::string shared_note(const KernelGroup& g) {
  if (!(g.shared_seconds > quantity::kGraphSharedNoted * g.total_seconds)) return "";
  std::string note = "ran beside other nodes of its graph launches for " +
                     seconds_text(g.shared_seconds) + " (" +
                     format_fixed(100 * g.shared_seconds / g.total_seconds, 0) +
                     "% of its time): its rates, and the bounds above, are those of a shared GPU";
  if (g.shared_replayed > 0)
    note += "; replayed alone, its " + std::to_string(g.shared_replayed) +
            (g.shared_replayed == 1 ? " node" : " nodes") + " that shared more than " +
            format_fixed(100 * quantity::kGraphSharedNoted, 0) + "% of their time took " +
            seconds_text(g.shared_alone_seconds) + ", against " +
            seconds_text(g.shared_graph_seconds) + " in the graph";
  return note;
}

std::string graph_gap_advice(const Summary& s) {
  constexpr double kGapNoted = 0.05;  // of the graph launches' time
  if (!(s.graph_seconds > 0) || !(s.graph_idle_seconds > kGapNoted * s.graph_seconds)) return "";
  return "latency: " + seconds_text(s.graph_idle_seconds) + " of the graph launches' " +
         seconds_text(s.graph_seconds) + " (" +
         format_fixed(100 * s.graph_idle_seconds / s.graph_seconds, 1) +
         "%) ran none of their nodes, the GPU waiting between dependent nodes; fewer nodes (fuse "
         "the short ones), or programmatic dependent launch between them so that a node starts "
         "while its predecessor ends; these launches up to ×" +
         format_fixed(s.graph_seconds / (s.graph_seconds - s.graph_idle_seconds), 2);
}

std::vector<const KernelGroup*> groups_to_advise(const Summary& summary, std::size_t top) {
  std::vector<const KernelGroup*> by_saving;
  for (const KernelGroup& g : summary.groups)
    if (!g.lever.empty() && g.lever_saving_seconds > 0) by_saving.push_back(&g);
  std::stable_sort(by_saving.begin(), by_saving.end(),
                   [](const KernelGroup* a, const KernelGroup* b) {
                     return a->lever_saving_seconds > b->lever_saving_seconds;
                   });
  by_saving.resize(std::min(by_saving.size(), top == 0 ? std::size_t{5} : top));
  return by_saving;
}

std::string render_summary(const Summary& summary, std::size_t top, std::size_t max_width) {
  std::ostringstream out;
  auto say = [&](const std::string& text, std::string_view indent = "  ") {
    out << wrap_words(one_line(text), max_width, indent);
  };
  std::string title = "Where the time goes: " + std::to_string(summary.rows) + " launches, " +
                      seconds_text(summary.total_seconds) + " of kernel time in " +
                      std::to_string(summary.groups.size()) + " groups";
  if (summary.left_out > 0)
    title += " (" + std::to_string(summary.left_out) + " rows without a measured time left out)";
  say(title);
  if (summary.graph_launches > 0)
    say(std::to_string(summary.graph_node_rows) + " of the launches are nodes of " +
        std::to_string(summary.graph_launches) + " CUDA graph launch" +
        (summary.graph_launches == 1 ? "" : "es") +
        ", each node in its own row; the graph launches themselves are not counted again" +
        (summary.graph_seconds > 0
             ? ". They took " + seconds_text(summary.graph_seconds) + ", of which " +
                   seconds_text(summary.graph_idle_seconds) + " (" +
                   format_fixed(100 * summary.graph_idle_seconds / summary.graph_seconds, 1) +
                   "%) ran none of their nodes: the gaps between dependent nodes"
             : std::string()));
  if (summary.timed_rows > 1 && summary.interval_seconds > 0) {
    const double overlapped = std::max(0.0, summary.interval_seconds - summary.busy_seconds);
    say("GPU busy " + seconds_text(summary.busy_seconds) + " with these kernels; " +
        seconds_text(overlapped) + " (" +
        format_fixed(100 * overlapped / summary.interval_seconds, 1) +
        "%) of their time ran beside another's (parallel graph branches, streams). Shares "
        "below are of the summed kernel time, " +
        seconds_text(summary.total_seconds) + ", in which overlapped time counts once per kernel" +
        // A launch's time counts from its submission (as ncu's gpu__time_duration does), its
        // interval on the GPU from its start: the difference is the GPU taking up the launches.
        (summary.timed_rows == summary.rows &&
                 summary.total_seconds - summary.interval_seconds > 0.01 * summary.total_seconds
             ? "; a launch's time counts from its submission (" +
                   seconds_text(summary.total_seconds - summary.interval_seconds) +
                   " of it came before the kernels started)"
             : std::string()) +
        ".");
  }
  // The kernel (the group's key) is last and cut first, to 24 columns; headroom and the
  // medians are left out first to fit a width.
  static const std::vector<TableColumn> columns = {
      {"time", "time %", true, 0, 0},           {"total", "total", true, 1, 0},
      {"launches", "launches", true, 4, 0},     {"median", "median", true, 5, 0},
      {"bound-by", "bound by", false, 2, 8, 2}, {"of-roof", "of roof", true, 2, 0},
      {"headroom", "headroom", true, 6, 0},     {"gain", "gain if at roof", true, 3, 0},
      {"kernel", "kernel", false, 0, 24, 7},
  };
  std::vector<std::vector<std::string>> rows;
  const std::size_t shown = top == 0 ? summary.groups.size() : std::min(top, summary.groups.size());
  for (std::size_t i = 0; i < shown; ++i) {
    const KernelGroup& g = summary.groups[i];
    rows.push_back(
        {format_fixed(100 * g.share, 1) + "%", seconds_text(g.total_seconds),
         std::to_string(g.launches), seconds_text(g.median_seconds), g.binding,
         std::isfinite(g.fraction_of_bound) ? format_fixed(100 * g.fraction_of_bound, 0) + "%"
                                            : std::string("-"),
         seconds_text(g.headroom_seconds), format_fixed(100 * g.program_gain, 1) + "%", g.key});
  }
  const FittedTable table = fit_table(columns, rows, {max_width, {}});
  out << table.text << fit_footer(table, max_width);
  if (shown < summary.groups.size()) {
    double rest = 0;
    for (std::size_t i = shown; i < summary.groups.size(); ++i) rest += summary.groups[i].share;
    say("... and " + std::to_string(summary.groups.size() - shown) + " more groups, " +
        format_fixed(100 * rest, 1) + "% of the time");
  }
  say("of roof: Σ time floors ÷ Σ times. gain if at roof: the group's headroom (time above its "
      "floor) ÷ all the kernel time above: an upper bound on what it can save the program.");
  // What to try next: the groups whose levers would save the program most.
  const std::vector<const KernelGroup*> advised = groups_to_advise(summary, top);
  const std::string gaps = graph_gap_advice(summary);
  if (!advised.empty() || !gaps.empty()) {
    out << "\nWhat to try next (upper bounds: each group at the roof its lever opens):\n";
    for (const KernelGroup* group : advised) {
      const KernelGroup& g = *group;
      say("  " + g.key + " (" + format_fixed(100 * g.share, 1) + "% of the time)", "    ");
      say("    " + g.advice, "      ");
      say("    these " + std::to_string(g.launches) + (g.launches == 1 ? " launch" : " launches") +
              " up to ×" + format_fixed(g.lever_speedup, 2) + "; the program up to ×" +
              format_fixed(g.program_speedup, 3) + " (" + seconds_text(g.lever_saving_seconds) +
              " less)",
          "      ");
      if (const std::string note = shared_note(g); !note.empty()) say("    " + note, "      ");
    }
    if (!gaps.empty()) {
      say("  the " + std::to_string(summary.graph_launches) + " CUDA graph launch" +
              (summary.graph_launches == 1 ? "" : "es") + " (the time between their nodes)",
          "    ");
      say("    " + gaps, "      ");
    }
  }
  return out.str();
}

}  // namespace roofline
