// A whole program on other GPUs: the summary's groups (summary.hpp) with their measured time
// and their time projected onto each target spec (verdict/reproject.hpp), the roof that binds
// each on the target, and the total. What `show REPORT --gpu h100,b200` prints.
#pragma once

#include <string>
#include <vector>

#include "lib/core/domain/gpu_spec.hpp"
#include "lib/core/verdict/judged_report.hpp"
#include "lib/core/writers/summary.hpp"

namespace roofline {

struct ProjectionTarget {
  GpuSpec spec;     // the GPU projected onto
  Summary summary;  // of the report projected onto it, grouped as the measured one
  // What the projection could not carry over as measured (a pipe the target lacks, ...): each
  // distinct note and how many rows it concerns.
  std::vector<std::pair<std::string, std::size_t>> fallbacks;
  // Rows whose time on a share of the SMs was read from their share run (`show --share-run`).
  std::size_t from_share_run = 0;
  // Rows without one that filled their level on all the SMs: their time there is at most this.
  std::size_t share_time_at_most = 0;
};

// The distinct notes of rows whose projection fell back (analysis.hpp: "... has no wgmma: the
// work falls back to ..."), with their counts.
std::vector<std::pair<std::string, std::size_t>> projection_fallbacks(const JudgedReport& report);

// How many rows of a projected report have `flag` set in their analysis
// (RowAnalysis::from_share_run, RowAnalysis::share_time_at_most).
std::size_t projected_rows_with(const JudgedReport& report, bool RowAnalysis::*flag);

// What moves a group's time between two GPUs: the roof that binds it on `to` and that roof on
// both ("DRAM 4.80 → 3.35 TB/s", "tail 132 → 148 SMs", "tensor FP16 (wgmma) 989 → 989
// TFLOP/s"); the roof's name alone when `from` has no roof of that name (a pipe it lacks).
std::string roof_change(const std::string& binding, const GpuSpec& from, const GpuSpec& to);

// `measured`'s top `top` groups (0: all) by measured time, each with its time on every target
// (× the measured time) and the roof that binds it there, on both GPUs; then the totals, and
// the fallbacks. `max_width`: the terminal's columns (the group name is cut with "…"); 0: whole.
std::string render_projection(const Summary& measured, const GpuSpec& measured_spec,
                              const std::string& device_name,
                              const std::vector<ProjectionTarget>& targets, std::size_t top,
                              std::size_t max_width = 0);

}  // namespace roofline
