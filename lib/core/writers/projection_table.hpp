// A whole program on other GPUs: the summary's groups (summary.hpp) with their measured time
// and their time projected onto each target spec (verdict/reproject.hpp), the roof that binds
// each on the target, and the total. What `show REPORT --gpu h100,b200` prints.
#pragma once

#include <string>
#include <vector>

#include "lib/core/verdict/judged_report.hpp"
#include "lib/core/writers/summary.hpp"

namespace roofline {

struct ProjectionTarget {
  std::string spec_key;   // "h100-sxm5"
  std::string spec_name;  // "NVIDIA H100 SXM5 80GB"
  Summary summary;        // of the report projected onto it, grouped as the measured one
  // What the projection could not carry over as measured (a pipe the target lacks, ...): each
  // distinct note and how many rows it concerns.
  std::vector<std::pair<std::string, std::size_t>> fallbacks;
};

// The distinct notes of rows whose projection fell back (analysis.hpp: "... has no wgmma: the
// work falls back to ..."), with their counts.
std::vector<std::pair<std::string, std::size_t>> projection_fallbacks(const JudgedReport& report);

// `measured`'s top `top` groups (0: all) by measured time, each with its time on every target
// (× the measured time) and the roof that binds it there; then the totals, and the fallbacks.
// `max_width`: the terminal's columns (the group name is cut with "…"); 0: whole.
std::string render_projection(const Summary& measured, const std::string& measured_name,
                              const std::vector<ProjectionTarget>& targets, std::size_t top,
                              std::size_t max_width = 0);

}  // namespace roofline
