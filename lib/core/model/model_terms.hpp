// What the model's byte and FLOP terms are written with (model.cpp, model_decode.cpp,
// model_prefill_dram.cpp): a term added to its list and to the total it explains, and the
// megabytes a formula quotes.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "lib/core/base/text.hpp"
#include "lib/core/model/model.hpp"

namespace roofline {

inline void add_term(std::vector<ModelTerm>& terms, double& total, std::string name,
                     std::string formula, double value) {
  terms.push_back({std::move(name), std::move(formula), value});
  total += value;
}

// "12.6 MB" (decimal megabytes, one decimal).
inline std::string mb_text(double bytes) {
  return format_fixed(bytes / 1e6, 1) + " MB";
}

}  // namespace roofline
