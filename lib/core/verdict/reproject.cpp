#include "lib/core/verdict/reproject.hpp"

#include <algorithm>

#include "lib/core/base/errors.hpp"

namespace roofline {

Report reproject(const Report& measured, const GpuSpec& target, const std::string& origin) {
  if (!measured.context.device)
    throw InputError(origin + ": an analytic model report: nothing measured to project");
  if (measured.context.projection)
    throw InputError(origin + ": already projected onto " + measured.rows.front().spec_key +
                     "; project the report measured on its own GPU");
  const std::string& from = measured.rows.front().spec_key;
  if (std::any_of(measured.rows.begin(), measured.rows.end(),
                  [&](const Row& row) { return row.spec_key != from; }))
    throw InputError(origin +
                     ": rows judged against several specs (a merged report); project "
                     "each device's report on its own");
  Report out = measured;
  out.context.projection = true;
  out.context.measured_spec = from;
  out.specs = {target, measured.spec_for(measured.rows.front())};
  out.specs.front().file.clear();
  if (target.key == from) out.specs.pop_back();  // onto its own spec: a projection of 1
  for (Row& row : out.rows) row.spec_key = target.key;
  return out;
}

}  // namespace roofline
