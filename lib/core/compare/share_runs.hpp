// A projection onto a share of the SMs reads a memory-bound row's bytes in flight from the same
// point measured on a few SMs (`show --gpu SPEC --sms N --share-run REPORT`): the rows of that
// report, matched to the measured report's as `compare` matches rows.
#pragma once

#include <string>

#include "lib/core/report/report.hpp"

namespace roofline {

// `measured` with each row's share run (Row::share_run, sm_share.hpp) from `few`, the same
// points measured on a few SMs of the same device (`run --sms N`), matched as `compare` matches
// rows: its median time and counted bytes per level there. A projection onto a share of the SMs
// reads a row's bytes in flight from them. Throws InputError naming `few_origin` for a report
// not measured on a green context, on another device, on no fewer SMs than `measured` (which must
// be measured on all of them), or with no timed row matching.
Report with_share_runs(Report measured, const Report& few, const std::string& few_origin,
                       const std::string& origin);

}  // namespace roofline
