// A whole program on other GPUs, as `show REPORT --gpu h100,b200` and `profile --gpu` print it:
// the measured report's groups projected onto each spec (lib/core/verdict/reproject.hpp,
// lib/core/writers/projection_table.hpp).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "lib/core/domain/gpu_spec.hpp"
#include "lib/core/verdict/judged_report.hpp"
#include "lib/core/writers/summary.hpp"

namespace roofline::app {

struct ProgramProjection {
  std::string text;                  // the table: measured and projected time by group
  std::optional<JudgedReport> only;  // the report projected, when there is one spec
};

// `measured` projected onto each of `specs`, grouped `by`; its top `top` groups in a table of at
// most `max_width` columns (0: whole). `origin` names the report in the projected rows' notes.
ProgramProjection project_program(const JudgedReport& measured, const std::vector<GpuSpec>& specs,
                                  GroupBy by, std::size_t top, std::size_t max_width,
                                  const std::string& origin);

}  // namespace roofline::app
