#include "lib/core/writers/projection_table.hpp"

#include <map>
#include <sstream>
#include <string_view>

#include "lib/core/base/table_layout.hpp"
#include "lib/core/base/text.hpp"

namespace roofline {
namespace {

std::string ratio_text(double projected, double measured) {
  if (!(measured > 0) || !(projected > 0)) return "-";
  return "×" + format_fixed(projected / measured, 2);
}

}  // namespace

std::size_t projected_rows_with(const JudgedReport& report, bool RowAnalysis::*flag) {
  std::size_t n = 0;
  for (std::size_t i = 0; i < report.rows().size(); ++i) n += report.at(i).*flag ? 1 : 0;
  return n;
}

std::vector<std::pair<std::string, std::size_t>> projection_fallbacks(const JudgedReport& report) {
  std::map<std::string, std::size_t> count;
  std::vector<std::string> order;
  for (std::size_t i = 0; i < report.rows().size(); ++i) {
    const RowAnalysis& a = report.at(i);
    if (!a.projected) continue;
    // The note's clauses, "; "-separated: keep the ones that say what could not carry over.
    std::size_t from = 0;
    const std::string& note = a.projection_note;
    while (from <= note.size()) {
      const std::size_t end = std::min(note.find("; ", from), note.size());
      const std::string clause = note.substr(from, end - from);
      if (clause.find(" has no ") != std::string::npos && count[clause]++ == 0)
        order.push_back(clause);
      from = end + 2;
    }
  }
  std::vector<std::pair<std::string, std::size_t>> out;
  for (const std::string& clause : order) out.push_back({clause, count[clause]});
  return out;
}

std::string roof_change(const std::string& binding, const GpuSpec& from, const GpuSpec& to) {
  for (MemoryLevel level : {MemoryLevel::kDram, MemoryLevel::kL2, MemoryLevel::kL1}) {
    if (binding != display_name(level)) continue;
    const MemoryLevelSpec* a = from.level(level);
    const MemoryLevelSpec* b = to.level(level);
    if (a == nullptr || b == nullptr) return binding;
    return binding + " " + format_fixed(a->bandwidth_gbps / 1e3, 2) + " → " +
           format_fixed(b->bandwidth_gbps / 1e3, 2) + " TB/s";
  }
  if (binding == "tail")
    return "tail " + std::to_string(from.sm_count) + " → " + std::to_string(to.sm_count) + " SMs";
  // A roof at the power cap (a calibrated spec's) is the same pipe as the other side's roof.
  const std::string_view cap = " at the power cap";
  const std::string pipe =
      binding.size() > cap.size() &&
              binding.compare(binding.size() - cap.size(), cap.size(), cap) == 0
          ? binding.substr(0, binding.size() - cap.size())
          : binding;
  const auto peak = [&](const GpuSpec& spec) {
    for (ComputeCeiling c : spec.compute) {
      c.at_power_cap = false;
      if (c.label() == pipe) return c.peak_tflops;
    }
    return 0.0;
  };
  const double a = peak(from), b = peak(to);
  if (a > 0 && b > 0)
    return binding + " " + format_fixed(a, 0) + " → " + format_fixed(b, 0) + " TFLOP/s";
  return binding;
}

std::string render_projection(const Summary& measured, const GpuSpec& measured_spec,
                              const std::string& device_name,
                              const std::vector<ProjectionTarget>& targets, std::size_t top,
                              std::size_t max_width) {
  const std::string measured_name = device_name + " [" + measured_spec.key + "]";
  std::vector<TableColumn> columns = {{"group", "group", false, 0, 24, 3},
                                      {"measured", "measured", true, 0}};
  for (const ProjectionTarget& t : targets) {
    columns.push_back({t.spec.key, t.spec.key, true, 0});
    columns.push_back({t.spec.key + "-ratio", "×", true, 0});
    columns.push_back({t.spec.key + "-binds", "binds there (here → there)", false, 2, 12, 2});
  }
  // Each target's groups by key (the same grouping on both sides: same rows, same keys).
  std::vector<std::map<std::string, const KernelGroup*>> by_key(targets.size());
  for (std::size_t t = 0; t < targets.size(); ++t)
    for (const KernelGroup& g : targets[t].summary.groups) by_key[t][g.key] = &g;
  std::vector<std::vector<std::string>> rows;
  const std::size_t shown =
      top == 0 ? measured.groups.size() : std::min(top, measured.groups.size());
  for (std::size_t i = 0; i < shown; ++i) {
    const KernelGroup& g = measured.groups[i];
    std::vector<std::string> row = {g.key, seconds_text(g.total_seconds)};
    for (std::size_t t = 0; t < targets.size(); ++t) {
      auto it = by_key[t].find(g.key);
      if (it == by_key[t].end()) {
        row.insert(row.end(), {"-", "-", "-"});
        continue;
      }
      row.push_back(seconds_text(it->second->total_seconds));
      row.push_back(ratio_text(it->second->total_seconds, g.total_seconds));
      row.push_back(it->second->binding.empty()
                        ? std::string("-")
                        : roof_change(it->second->binding, measured_spec, targets[t].spec));
    }
    rows.push_back(std::move(row));
  }
  if (shown < measured.groups.size()) {
    double rest = 0;
    std::vector<double> rest_t(targets.size(), 0);
    for (std::size_t i = shown; i < measured.groups.size(); ++i) {
      rest += measured.groups[i].total_seconds;
      for (std::size_t t = 0; t < targets.size(); ++t)
        if (auto it = by_key[t].find(measured.groups[i].key); it != by_key[t].end())
          rest_t[t] += it->second->total_seconds;
    }
    std::vector<std::string> row = {
        "the other " + std::to_string(measured.groups.size() - shown) + " groups",
        seconds_text(rest)};
    for (std::size_t t = 0; t < targets.size(); ++t)
      row.insert(row.end(), {seconds_text(rest_t[t]), ratio_text(rest_t[t], rest), ""});
    rows.push_back(std::move(row));
  }
  std::vector<std::string> total = {"total", seconds_text(measured.total_seconds)};
  for (const ProjectionTarget& t : targets)
    total.insert(total.end(), {seconds_text(t.summary.total_seconds),
                               ratio_text(t.summary.total_seconds, measured.total_seconds), ""});
  rows.push_back(std::move(total));

  std::ostringstream out;
  std::string head = "The program on other GPUs: each row's time as measured on " + measured_name +
                     " and projected onto ";
  for (std::size_t t = 0; t < targets.size(); ++t)
    head += (t == 0                    ? ""
             : t + 1 == targets.size() ? " and "
                                       : ", ") +
            targets[t].spec.name + " [" + targets[t].spec.key + "]";
  head +=
      " (its floor there ÷ the share of its bound it reached here, a causal grid's CTAs in "
      "launch order, and on a share of its own GPU's SMs a memory-bound row by its bytes in "
      "flight: each row's note says which; kernel time summed by group, overlaps counted once "
      "per kernel)";
  out << wrap_words(head, max_width);
  const FittedTable table = fit_table(columns, rows, TableFit{max_width, {}});
  out << table.text;
  if (table.cut || !table.left_out.empty())
    out << wrap_words(
        (table.left_out.empty() ? std::string()
                                : "left out to fit " + std::to_string(max_width) +
                                      " columns: " + join(table.left_out, ", ") + ". ") +
            (table.cut ? "…: cut to fit. " : "") + "--wide prints every column whole.",
        max_width);
  out << wrap_words(
      "×: projected ÷ measured. binds there: the roof that bounds the group's "
      "projected time on that GPU (DRAM, a tensor pipe, the tail of a grid on "
      "its SM count, ...) and its value on both GPUs: what the change follows.",
      max_width);
  for (const ProjectionTarget& t : targets)
    for (const auto& [note, n] : t.fallbacks)
      out << wrap_words("not as measured on " + t.spec.key + " (" + std::to_string(n) +
                            (n == 1 ? " row): " : " rows): ") + note,
                        max_width);
  const auto memory_rows = [](std::size_t n) {
    return std::to_string(n) + (n == 1 ? " memory-bound row" : " memory-bound rows");
  };
  for (const ProjectionTarget& t : targets) {
    if (t.from_share_run > 0)
      out << wrap_words("share run: " + memory_rows(t.from_share_run) + " on " + t.spec.key +
                            " timed from the share run and the time on all the SMs (each row's "
                            "note says how)",
                        max_width);
    if (t.share_time_at_most > 0)
      out << wrap_words(memory_rows(t.share_time_at_most) +
                            " filled DRAM or L2 on all the SMs, which shows the least they hold "
                            "in flight: their time on " +
                            t.spec.key +
                            " is the longest they "
                            "may take; --share-run with the same points run on a few SMs (run "
                            "--sms 16) measures it",
                        max_width);
  }
  return out.str();
}

}  // namespace roofline
