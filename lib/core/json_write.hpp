// Helpers shared by every JSON writer (reports, comparisons): one spelling of a number and of a
// workload in every file this tool writes.
#pragma once

#include <nlohmann/json.hpp>

#include "lib/core/launch.hpp"
#include "lib/core/workload.hpp"

namespace roofline {

// JSON has no NaN or infinity: such numbers are written as null.
nlohmann::json json_number(double value);

// {"batch", "heads", "seq_len", "head_dim", "causal", "pass", "dtype"}
nlohmann::json workload_json(const Workload& workload);

// Every field of a profiled launch (KernelLaunch), under its own name.
nlohmann::json launch_json(const KernelLaunch& launch);

}  // namespace roofline
