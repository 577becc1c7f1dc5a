#include "app/projection_output.hpp"

#include "lib/core/verdict/reproject.hpp"
#include "lib/core/writers/projection_table.hpp"

namespace roofline::app {

ProgramProjection project_program(const JudgedReport& measured, const std::vector<GpuSpec>& specs,
                                  GroupBy by, std::size_t top, std::size_t max_width,
                                  const std::string& origin) {
  ProgramProjection out;
  std::vector<ProjectionTarget> targets;
  for (const GpuSpec& spec : specs) {
    JudgedReport projected(reproject(measured.report(), spec, origin));
    targets.push_back({spec, summarize(projected, by), projection_fallbacks(projected),
                       projected_rows_with(projected, &RowAnalysis::from_share_run),
                       projected_rows_with(projected, &RowAnalysis::share_time_at_most)});
    if (specs.size() == 1) out.only.emplace(std::move(projected));
  }
  const Report& report = measured.report();
  out.text = render_projection(summarize(measured, by), report.spec_for(report.rows.front()),
                               report.context.device ? report.context.device->name : "?", targets,
                               top, max_width);
  return out;
}

}  // namespace roofline::app
