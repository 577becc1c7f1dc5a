// How the record files of a profiled program become one report: every process's rows, judged
// against the spec of the device they ran on (or the one asked for: a projection), with the
// provenance of their counters.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "lib/core/domain/gpu_spec.hpp"
#include "lib/core/report/report.hpp"
#include "lib/profile/profile_protocol.hpp"

namespace roofline {

struct ProfileRun {
  std::vector<std::string> command_line;     // the whole `profile` command line
  std::vector<std::string> program_command;  // the program and its arguments
  ProfileOptions options;                    // as passed to the injection library
  std::optional<std::string> gpu;            // --gpu: the spec to judge against
};

// The report of `processes` (parents first, as read), or none when no process recorded a device
// or none has a row. Throws InputError when no spec names the device and none was asked for.
std::optional<Report> profile_report(const std::vector<ProcessRecords>& processes,
                                     const SpecRegistry& registry, const ProfileRun& run);

}  // namespace roofline
