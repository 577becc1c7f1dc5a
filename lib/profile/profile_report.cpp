#include "lib/profile/profile_report.hpp"

#include <iterator>

#include "lib/core/domain/metric_catalog.hpp"
#include "lib/core/domain/spec_choice.hpp"
#include "lib/core/verdict/assemble.hpp"

namespace roofline {
namespace {

// How the counters were collected, for the report's context.
std::string counters_provenance(const ProfileRun& run, const ProcessRecords& first) {
  const ProfileOptions& o = run.options;
  if (o.stalls)
    return "none: --stalls samples the warps of each chosen launch (CUPTI PC sampling, "
           "kernel-serialized, a start/stop range around the launch, the period chosen for the "
           "previous launch of the same kernel) instead of counting it, since PC sampling cannot "
           "run beside the range profiler; kernel time from the activity records, cache " +
           std::string(o.cache == CacheControl::kWarm ? "warm" : "cold") +
           "; a graph launch sampled whole, each kernel node given its function's samples";
  const std::string nodes(to_string(o.graph_nodes));
  return "CUPTI range profiler in " + run.program_command.front() +
         (o.replay == ReplayMode::kBatch && first.counter_passes == 1
              ? ": a user range around each kernel or graph launch, one "
                "user-replay pass over many launches, "
              : ": auto range (one range per kernel launch), kernel "
                "replay, ") +
         std::to_string(first.counter_passes) + " pass(es), counter set " + first.counter_set +
         ", cache " + (o.cache == CacheControl::kWarm ? "warm" : "cold") + "; graph nodes " +
         nodes +
         (o.graph_nodes == GraphNodes::kCounted
              ? " (a row per node, timed by its activity record, each kernel node counted in a "
                "replay of its own, device memory saved and restored)"
          : o.graph_nodes == GraphNodes::kTimed ? " (a row per node, timed by its activity record)"
                                                : "") +
         (first.device ? tensor_paths_note(first.device->chip, first.counter_set == "full"
                                                                   ? CounterSet::kFull
                                                                   : CounterSet::kRoofline)
                       : std::string());
}

}  // namespace

std::optional<Report> profile_report(const std::vector<ProcessRecords>& processes,
                                     const SpecRegistry& registry, const ProfileRun& run) {
  const ProcessRecords* with_device = nullptr;
  std::size_t rows = 0;
  for (const ProcessRecords& p : processes) {
    if (p.device && with_device == nullptr) with_device = &p;
    rows += p.rows.size();
  }
  if (rows == 0 || with_device == nullptr) return std::nullopt;
  const DeviceInfo& device = *with_device->device;
  Report report;
  report.context = make_context("profile");
  report.context.command_line = run.command_line;
  report.context.program_command = run.program_command;
  report.context.device = device;
  // Under --stalls nothing was counted (the device record names the set's metrics all the same).
  if (!run.options.stalls) report.context.metrics = with_device->metrics;
  report.context.counter_passes = run.options.stalls ? 0 : with_device->counter_passes;
  report.context.counters = counters_provenance(run, *with_device);
  // No spec derived: the device's properties are the record's, not CUDA's.
  const SpecChoice choice = choose_judging_spec(registry, device.name, run.gpu, nullptr);
  std::vector<Row> all;
  for (const ProcessRecords& p : processes) {
    std::vector<Row> rows_of_process = p.rows;
    attach_stalls(rows_of_process, p.stalls);
    all.insert(all.end(), std::make_move_iterator(rows_of_process.begin()),
               std::make_move_iterator(rows_of_process.end()));
  }
  add_rows(report, choice, std::move(all));
  return report;
}

}  // namespace roofline
