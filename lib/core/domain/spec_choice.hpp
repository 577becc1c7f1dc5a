// Which spec judges a device's rows: one rule for every command that measures (run, run
// --devices, calibrate, profile). The spec asked for (--gpu NAME) when given, a projection when
// it is not the device's own; else the spec file whose device_names match the device; else one
// derived from the device's properties (approximate, and said so) where the command can derive
// one, or none (an input error that says what to pass).
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "lib/core/domain/gpu_spec.hpp"

namespace roofline {

struct SpecChoice {
  GpuSpec spec;             // the spec the rows are judged against
  bool projection = false;  // judged against another GPU than the one measured
  GpuSpec measured;         // the device's own spec (derived when no file names it)
  std::string note;         // what to tell the user (empty when nothing to say)
};

// `derive`: the device's spec from its properties, called only when no spec file names the
// device; nullptr where the command cannot derive one. Throws InputError (from the registry)
// for an unknown `requested` name, and when the device has no spec and none can be derived.
SpecChoice choose_judging_spec(const SpecRegistry& registry, const std::string& device_name,
                               const std::optional<std::string>& requested,
                               const std::function<GpuSpec()>& derive);

}  // namespace roofline
