// A roof of the roofline verdict: one evaluator per kind of bound (the memory levels, the
// tail effect of a grid, the exponential unit), each in a file of its own, registered in
// roofs.cpp. analyze (analysis.cpp) decides the path, FLOPs and compute ceiling of a row, then
// asks every roof in registration order to
//   1. place the row on it: the roof's own quantities and its time floor, before the time is
//      known (raising a.time_floor_seconds);
//   2. rate the row against it, once the time is known;
//   3. bind: lower a.attainable_flops_per_second where the roof is lower than the bound so far,
//      and name itself (a.binding, a.regime) where it then binds; a later roof sees the bound
//      the earlier ones left;
//   4. check: warn where a measured rate is above the roof.
// A new roof is a new file (a class like roof_tail.cpp's and the function that makes it) and its
// line in roofs.cpp.
#pragma once

#include <memory>
#include <vector>

#include "lib/core/model/model.hpp"
#include "lib/core/verdict/analysis.hpp"

namespace roofline {

// What every roof may read besides the analysis so far.
struct RoofInputs {
  const Row& row;
  const GpuSpec& spec;
  const KernelModel* model;       // the bundled kernel's model; null for another program's
  TensorInstruction instruction;  // of the path chosen (counters, else the model)
  Source flops_source;            // where the FLOPs came from
  bool timed = false;             // the row has measured time samples
  bool projection = false;        // judged against another GPU than the one measured
};

class Roof {
 public:
  virtual ~Roof() = default;
  virtual void place(const RoofInputs& in, RowAnalysis& a) const = 0;
  virtual void rate(RowAnalysis& a) const = 0;
  virtual void bind(RowAnalysis& a) const = 0;
  virtual void check(const RoofInputs& in, RowAnalysis& a) const = 0;
};

// The roofs, in the order analyze asks them (roofs.cpp).
const std::vector<std::unique_ptr<const Roof>>& roofs();

}  // namespace roofline
