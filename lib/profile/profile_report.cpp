#include "lib/profile/profile_report.hpp"

#include "lib/core/domain/metric_catalog.hpp"
#include "lib/core/domain/spec_choice.hpp"
#include "lib/core/verdict/assemble.hpp"

namespace roofline {
namespace {

// How the counters were collected, for the report's context.
std::string counters_provenance(const ProfileRun& run, const ProcessRecords& first) {
  const ProfileOptions& o = run.options;
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
  report.context.metrics = with_device->metrics;
  report.context.counter_passes = with_device->counter_passes;
  report.context.counters = counters_provenance(run, *with_device);
  // No spec derived: the device's properties are the record's, not CUDA's.
  const SpecChoice choice = choose_judging_spec(registry, device.name, run.gpu, nullptr);
  std::vector<Row> all;
  for (const ProcessRecords& p : processes) all.insert(all.end(), p.rows.begin(), p.rows.end());
  add_rows(report, choice, std::move(all));
  return report;
}

}  // namespace roofline
