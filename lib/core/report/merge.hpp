// Merging reports: shards of one sweep (`run --shard`), the workers of `run --devices`, and
// sweeps measured on different GPUs or hosts (`merge`). A pure function of its inputs.
//
// Rules:
//   - Every input has the current schema version (the reader already refuses others).
//   - Specs are united by key; one key with different contents is a conflict.
//   - A row is identified by kernel, workload, spec key and the name of the device it was
//     measured on ("" for the analytic model); a profiled launch also by process and index.
//     Two rows with one identity and the same contents collapse into one; different contents
//     are a conflict.
//   - Contexts that describe the same place (same host, device, tool version, projection, metric
//     list, pass count and ceilings; time, command and the counters' provenance text may differ)
//     are one: when every row has the same place the result is a plain report with the first
//     input's context. Otherwise each row keeps its own context in Report::origins, and the
//     report's context is a "merge" context whose device is set only when all rows share one
//     device.
// Conflicts throw InputError naming both inputs and the row (exit code 2).
#pragma once

#include <string>
#include <vector>

#include "lib/core/report/report.hpp"

namespace roofline {

// `names` label the inputs in messages (file names); missing names read "report N".
Report merge_reports(const std::vector<Report>& reports, const std::vector<std::string>& names);

// Whether two contexts describe the same place (see above).
bool same_place(const ReportContext& a, const ReportContext& b);

// The name of the device a row was measured on; "" for analytic-model rows.
std::string device_name_of(const Report& report, const Row& row);

}  // namespace roofline
