// A measured report judged against another GPU: the rows of a `run` or `profile` report saved
// on one GPU, projected onto another spec as `run --gpu` and `profile --gpu` project them when
// they measure (analysis.hpp: time = the target's floor ÷ the fraction of the bound reached when
// measured; DRAM bytes rescaled for the target's L2; a pipe the target lacks falls back, noted).
#pragma once

#include "lib/core/domain/gpu_spec.hpp"
#include "lib/core/report/report.hpp"

namespace roofline {

// `measured` with every row judged against `target`: the context a projection from the spec
// its rows were measured against (context.measured_spec), both specs carried. Throws
// InputError naming `origin` for a report with nothing measured (a model report), one that is
// a projection already, or rows judged against several specs (a merged report).
Report reproject(const Report& measured, const GpuSpec& target, const std::string& origin);

}  // namespace roofline
