// A profile's launches compared by group, not one by one. A program launches the same kernel
// with the same grid and block many times, and one launch of 2 µs varies by more from one
// process to the next than the 4% a regression must exceed (0.1-0.3 µs of launch jitter), so
// `compare` of two profiles launch by launch flagged 12-32% of the launches of unchanged code.
// Folded into one row per kernel, grid, block and kind (a plain launch, a graph node, a graph
// launch), each launch is one sample of its group: the group's time is the mean log of its
// launches' times (each launch a "round" of noise_model.hpp's TimeSide), with their spread as
// the group's noise, and a group's counted quantities are its launches' means.
#pragma once

#include <string>

#include "lib/core/report/report.hpp"

namespace roofline {

// True when every row is a profiled launch without an attention workload (a `profile` report).
bool is_launch_report(const Report& report);

// The report with one row per group of launches, in the order each group first ran: kernel,
// spec, launch (the first launch's, its index the first's), status (ok when any launch is),
// timing (one sample and one round per timed launch), counters (the mean per launch of each
// quantity all of them counted). Other fields of the report are kept.
Report group_launches(const Report& report);

// "grid 128x1x1 block 256x1x1, 12 launches" (", in graphs" for graph nodes; "graph launches"
// for the graph rows): what a group row is, for compare's tables.
std::string launch_group_label(const Row& group);

}  // namespace roofline
