// Where a report's time goes: its rows grouped by kernel, each group with its launches, total
// time, share of the measured GPU time, median, the roof that binds it and how close it comes,
// its time floor and headroom (time above the floor), and what the whole program would gain if
// the group ran at its floor (headroom ÷ total time): Nsight Systems' kernel summary with the
// roofline's answer beside it. A pure function of the report (rows without a verdict or a
// measured time are counted apart).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "lib/core/report/report.hpp"
#include "lib/core/verdict/judged_report.hpp"

namespace roofline {

enum class GroupBy {
  kFunctor,  // the kernel's short name and, for templated kernels, the functor or lambda its
             // template arguments name ("vectorized_elementwise_kernel [GeluCUDAKernelImpl]")
  kName,     // the short name alone
  kShape,    // the name and the launch shape (grid, block), or the workload of a bundled kernel
  kNvtx,     // the innermost NVTX range the launch ran under (profiled launches)
};

struct KernelGroup {
  std::string key;  // what the group is, as printed
  std::size_t launches = 0;
  std::int64_t first_launch = 0;  // launch index (profile) or row position (run) of its first
  double total_seconds = 0;
  double share = 0;  // of the summary's total time
  double median_seconds = 0;
  double min_seconds = 0;
  double max_seconds = 0;
  std::string binding;           // the roof binding most of its time ("DRAM", "tensor ...")
  double fraction_of_bound = 0;  // Σ time floors ÷ Σ times of the rows with a floor (NaN: none)
  double floor_seconds = 0;      // Σ time floors
  double headroom_seconds = 0;   // Σ max(0, time − floor)
  double program_gain = 0;       // headroom ÷ the summary's total time
  // What to try next (advice.hpp): the lever of most of its time, the advice of its longest
  // row under that lever (its evidence), the time its rows would save with their levers pulled
  // (Σ time − target), the group's upper-bound speed-up (Σ time ÷ Σ target) and the program's
  // (total ÷ (total − saving)).
  std::string lever;
  std::string advice;  // Advice::line() of the longest row with that lever
  double lever_saving_seconds = 0;
  double lever_speedup = 0;
  double program_speedup = 0;
  // Graph nodes beside other nodes of their launch (parallel branches): Σ graph_shared_seconds
  // of its rows, and of its rows that shared more than kGraphSharedNoted of their time and were
  // replayed alone (counted nodes), how many, their time in the graph and their replays' time.
  double shared_seconds = 0;
  std::size_t shared_replayed = 0;
  double shared_graph_seconds = 0;
  double shared_alone_seconds = 0;
};

struct Summary {
  std::vector<KernelGroup> groups;  // by total time, largest first
  double total_seconds = 0;         // measured time of every summarised row: what shares are of
  std::size_t rows = 0;             // rows summarised
  std::size_t left_out = 0;         // rows without a verdict or a measured time
  // CUDA graph launches whose nodes are rows of their own: the launches are not summarised
  // (their nodes are), so that no time counts twice.
  std::size_t graph_launches = 0;
  std::size_t graph_node_rows = 0;  // of the summarised rows, graph nodes
  // Of the graph launches whose rows say when none of their nodes ran (graph_idle_seconds):
  // their time (first node's start to last node's end) and that part of it, the gaps between
  // dependent nodes, which no node's row holds.
  double graph_seconds = 0;
  double graph_idle_seconds = 0;
  // When the summarised rows ran on the GPU (rows that carry KernelLaunch::gpu_start_ns): the
  // time the GPU was busy with them (the union of their intervals) and the sum of their
  // intervals; the difference ran overlapped (parallel graph branches, several streams).
  // Zero when no row says.
  double busy_seconds = 0;
  double interval_seconds = 0;
  std::size_t timed_rows = 0;  // rows with an interval
};

enum class SummarySort { kTime, kGain, kLaunch };

// The group of `row` under `by`.
std::string group_key(const Row& row, GroupBy by);
// The functor or lambda a templated kernel's demangled signature names, "" when none:
// "void at::native::vectorized_elementwise_kernel<4, at::native::AbsFunctor<float>, ...>(...)"
// gives "AbsFunctor".
std::string functor_of(const std::string& demangled);

Summary summarize(const JudgedReport& report, GroupBy by, SummarySort sort = SummarySort::kTime);
Summary summarize(const Report& report, GroupBy by, SummarySort sort = SummarySort::kTime);

// True for a CUDA graph launch whose nodes are rows of their own (summaries count the nodes).
bool is_graph_parent(const Row& row);

// The groups whose levers would save the program most, largest saving first: at most `top`
// (5 when `top` is 0). What both the table and the Markdown advise.
// "" unless the group spent more than kGraphSharedNoted of its time beside other graph nodes;
// then a sentence saying how long, that its rates (and so its advice) are those of a shared GPU,
// and what its replays alone took.
std::string shared_note(const KernelGroup& group);

// "" unless the graph launches' gaps (graph_idle_seconds) are more than 5% of their time; then
// the lever that closes them, with its bound on those launches.
std::string graph_gap_advice(const Summary& summary);

std::vector<const KernelGroup*> groups_to_advise(const Summary& summary, std::size_t top);

// The summary as a table: the top `top` groups (0: all), the rest counted in one line, then
// what to try next for the groups that would save the program most (at most `top`, 5 by
// default when `top` is 0). `max_width`: the terminal's columns (table_layout.hpp: the columns
// that fit, the kernel name cut with "…"; the prose wrapped); 0: every column whole.
std::string render_summary(const Summary& summary, std::size_t top, std::size_t max_width = 0);

}  // namespace roofline
