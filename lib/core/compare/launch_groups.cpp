#include "lib/core/compare/launch_groups.hpp"

#include <algorithm>
#include <map>
#include <tuple>
#include <vector>

namespace roofline {
namespace {

// What tells a group apart: kernel, spec, shape, and whether a launch, a graph launch or a node.
using GroupKey =
    std::tuple<std::string, std::string, std::array<int, 3>, std::array<int, 3>, bool, std::string>;

GroupKey key_of(const Row& row) {
  const KernelLaunch& l = *row.launch;
  return {row.kernel, row.spec_key, l.grid, l.block, l.graph, l.node_kind};
}

}  // namespace

bool is_launch_report(const Report& report) {
  return !report.rows.empty() &&
         std::all_of(report.rows.begin(), report.rows.end(),
                     [](const Row& row) { return row.launch && !has_workload(row); });
}

Report group_launches(const Report& report) {
  Report out = report;
  out.rows.clear();
  std::map<GroupKey, std::size_t> group_of;
  std::vector<std::vector<const Row*>> members;
  for (const Row& row : report.rows) {
    auto [it, added] = group_of.try_emplace(key_of(row), members.size());
    if (added) members.emplace_back();
    members[it->second].push_back(&row);
  }
  for (const std::vector<const Row*>& group : members) {
    const Row& first = *group.front();
    Row row;
    row.kernel = first.kernel;
    row.spec_key = first.spec_key;
    row.launch = first.launch;
    row.origin = first.origin;
    const auto ok = std::find_if(group.begin(), group.end(),
                                 [](const Row* r) { return r->status == RowStatus::kOk; });
    row.status = ok != group.end() ? RowStatus::kOk : first.status;
    row.message = ok != group.end() ? (*ok)->message : first.message;
    Timing timing;
    for (const Row* r : group) {
      if (!r->timing || r->timing->samples_seconds.empty()) continue;
      timing.samples_seconds.push_back(r->timing->median_seconds());
      if (timing.sm_clock_timed_mhz == 0) timing.sm_clock_timed_mhz = r->timing->sm_clock_mhz();
    }
    timing.rounds = static_cast<int>(timing.samples_seconds.size());
    if (!timing.samples_seconds.empty()) row.timing = timing;
    // A quantity every launch of the group counted: its mean per launch (a program that runs a
    // group more or fewer times is not a kernel doing more or less work).
    for (const auto& [id, value] : first.counters) {
      double sum = 0;
      bool everywhere = true;
      for (const Row* r : group) {
        auto c = r->counters.find(id);
        if (c == r->counters.end()) {
          everywhere = false;
          break;
        }
        sum += c->second;
      }
      if (everywhere) row.counters[id] = sum / static_cast<double>(group.size());
    }
    out.rows.push_back(std::move(row));
  }
  return out;
}

std::string launch_group_label(const Row& group) {
  const std::size_t n = group.timing ? group.timing->samples_seconds.size() : 0;
  const KernelLaunch& l = *group.launch;
  const std::string count = std::to_string(n) + (n == 1 ? " launch" : " launches");
  if (l.graph) return std::to_string(n) + " graph " + (n == 1 ? "launch" : "launches");
  return "grid " + dims_text(l.grid) + " block " + dims_text(l.block) + ", " + count +
         (l.is_graph_node() ? " in graphs" : "");
}

}  // namespace roofline
