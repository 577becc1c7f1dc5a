#include "lib/core/verdict/assemble.hpp"

#include <algorithm>
#include <utility>

#include "lib/core/model/model.hpp"

namespace roofline {
namespace {

void carry_spec(Report& report, const GpuSpec& spec) {
  const bool carried = std::any_of(report.specs.begin(), report.specs.end(),
                                   [&](const GpuSpec& s) { return s.key == spec.key; });
  if (!carried) report.specs.push_back(spec);
}

}  // namespace

void add_rows(Report& report, const SpecChoice& choice, std::vector<Row> rows) {
  carry_spec(report, choice.spec);
  // A device no spec file names, with nothing derived from it, has no spec to scale from.
  const bool measured_known = !choice.measured.key.empty();
  if (choice.projection) {
    report.context.projection = true;
    if (measured_known) {
      report.context.measured_spec = choice.measured.key;
      carry_spec(report, choice.measured);
    }
  }
  for (Row& row : rows) {
    row.spec_key = choice.spec.key;
    if (row.launch.has_value()) {  // another program's launch: no model
      report.rows.push_back(std::move(row));
      continue;
    }
    const KernelModel& model = find_kernel_model(row.kernel);  // InputError for an unknown name
    row.prediction = measured_known ? predict(model, row.workload, choice.measured)
                                    : predict(model, row.workload);
    report.rows.push_back(std::move(row));
  }
}

SpecChoice own_spec(const GpuSpec& spec) {
  SpecChoice choice;
  choice.spec = spec;
  choice.measured = spec;
  return choice;
}

}  // namespace roofline
