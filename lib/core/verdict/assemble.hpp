// How measured or modelled rows become a report: the one place where `run`, `run --devices`,
// `profile` and `model` attach the judging spec and the analytic model to their rows.
#pragma once

#include <vector>

#include "lib/core/domain/spec_choice.hpp"
#include "lib/core/report/report.hpp"

namespace roofline {

// Adds `rows` to `report`, judged as `choice` says:
//   - every row's spec_key is choice.spec's, and the report carries that spec (once);
//   - a projection (choice.projection) marks the context and carries the spec of the GPU
//     measured (context.measured_spec), which analyze(row, report) scales from, where that GPU
//     has a spec;
//   - a bundled kernel's row gets the analytic model's prediction for the GPU measured
//     (choice.measured: its L2 and SM count are what the counters saw), made here and nowhere
//     else; a launch of another program (row.launch) has no model and keeps what it has.
// The caller fills the rest of the context (command, device, counters) and the rows' status.
void add_rows(Report& report, const SpecChoice& choice, std::vector<Row> rows);

// The choice for a spec judged on its own (`model`: no device, no projection).
SpecChoice own_spec(const GpuSpec& spec);

}  // namespace roofline
