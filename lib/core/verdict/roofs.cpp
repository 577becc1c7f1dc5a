// The roofs analyze asks, in order (roof.hpp): a later roof binds over an earlier one it is
// lower than, so the memory levels come first and the exponential unit, whose roof per SM
// binds below the tail's, last.
#include "lib/core/verdict/roof.hpp"

namespace roofline {

// One file each.
std::unique_ptr<const Roof> memory_levels_roof();  // roof_memory.cpp
std::unique_ptr<const Roof> tail_roof();           // roof_tail.cpp
std::unique_ptr<const Roof> exp_unit_roof();       // roof_exp.cpp

const std::vector<std::unique_ptr<const Roof>>& roofs() {
  static const std::vector<std::unique_ptr<const Roof>> all = [] {
    std::vector<std::unique_ptr<const Roof>> v;
    v.push_back(memory_levels_roof());
    v.push_back(tail_roof());
    v.push_back(exp_unit_roof());
    return v;
  }();
  return all;
}

}  // namespace roofline
