// Matching the rows of two reports (or two kernels of one report), shared by `compare` and
// `plot`: which base row is compared with, or drawn an arrow to, which head row.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "lib/core/report/report.hpp"

namespace roofline {

// Which kernels to pair. Both empty: rows are matched by kernel name. Otherwise base rows of
// `kernel_base` are matched with head rows of `kernel_head`; when only one is given, the other
// defaults to it (that kernel alone).
struct KernelPair {
  std::string kernel_base;
  std::string kernel_head;
};

// A base row and the head row it is matched with (indices into each report's rows).
struct RowMatch {
  std::size_t base_index;
  std::size_t head_index;
};

struct RowMatching {
  std::vector<RowMatch> matched;       // in base order
  std::vector<std::size_t> only_base;  // indices of unmatched rows
  std::vector<std::size_t> only_head;
};

// Rows are matched by kernel (or the kernel pair), workload (a profiled launch without one: its
// grid and block, see same_point) and spec key; a row left over is
// then matched by kernel and workload alone when exactly one candidate remains on each side
// (the same device judged against another spec). Throws InputError when a kernel filter selects
// no rows, naming the kernels the report has.
RowMatching match_rows(const Report& base, const Report& head, const KernelPair& kernels,
                       const std::string& base_origin, const std::string& head_origin);

}  // namespace roofline
