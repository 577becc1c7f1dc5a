#include "lib/core/compare/row_match.hpp"

#include <algorithm>

#include "lib/core/base/errors.hpp"
#include "lib/core/base/suggest.hpp"
#include "lib/core/base/text.hpp"

namespace roofline {
namespace {

std::vector<std::string> kernel_list(const Report& report) {
  std::vector<std::string> names;
  for (const Row& row : report.rows)
    if (std::find(names.begin(), names.end(), row.kernel) == names.end())
      names.push_back(row.kernel);
  return names;
}

std::vector<std::size_t> select_rows(const Report& report, const std::string& kernel,
                                     const std::string& origin, const char* option) {
  std::vector<std::size_t> out;
  for (std::size_t i = 0; i < report.rows.size(); ++i)
    if (kernel.empty() || report.rows[i].kernel == kernel) out.push_back(i);
  if (out.empty() && !kernel.empty()) {
    const std::vector<std::string> names = kernel_list(report);
    const std::string hint = did_you_mean(kernel, names);
    throw InputError(origin + ": no rows of kernel \"" + kernel + "\" (" + option +
                     (hint.empty() ? "; " : "): " + hint + " (") +
                     "the report has: " + join(names, ", ") + ")");
  }
  return out;
}

}  // namespace

RowMatching match_rows(const Report& base, const Report& head, const KernelPair& kernels,
                       const std::string& base_origin, const std::string& head_origin) {
  const std::string kernel_base =
      kernels.kernel_base.empty() ? kernels.kernel_head : kernels.kernel_base;
  const std::string kernel_head =
      kernels.kernel_head.empty() ? kernels.kernel_base : kernels.kernel_head;
  const bool kernel_pair = !kernel_base.empty();
  const std::vector<std::size_t> base_rows =
      select_rows(base, kernel_base, base_origin, "--kernel-base");
  const std::vector<std::size_t> head_rows =
      select_rows(head, kernel_head, head_origin, "--kernel-head");

  auto same_kernel = [&](const Row& b, const Row& h) {
    return kernel_pair || b.kernel == h.kernel;
  };
  std::vector<bool> base_used(base.rows.size(), false);
  std::vector<bool> head_used(head.rows.size(), false);
  RowMatching out;
  // Pass 1: kernel, workload and spec.
  for (std::size_t bi : base_rows) {
    const Row& b = base.rows[bi];
    for (std::size_t hi : head_rows) {
      const Row& h = head.rows[hi];
      if (head_used[hi] || !same_kernel(b, h) || !same_point(b, h) || b.spec_key != h.spec_key)
        continue;
      out.matched.push_back({bi, hi});
      base_used[bi] = head_used[hi] = true;
      break;
    }
  }
  // Pass 2: kernel and workload, when exactly one row on each side is left.
  for (std::size_t bi : base_rows) {
    if (base_used[bi]) continue;
    const Row& b = base.rows[bi];
    auto candidates = [&](const Row& probe, const Report& report,
                          const std::vector<std::size_t>& rows, const std::vector<bool>& used,
                          bool probe_is_base) {
      std::vector<std::size_t> found;
      for (std::size_t i : rows) {
        if (used[i]) continue;
        const Row& r = report.rows[i];
        const bool kernel_ok = probe_is_base ? same_kernel(probe, r) : same_kernel(r, probe);
        if (kernel_ok && same_point(r, probe)) found.push_back(i);
      }
      return found;
    };
    const auto heads = candidates(b, head, head_rows, head_used, true);
    if (heads.size() != 1) continue;
    const auto bases = candidates(head.rows[heads[0]], base, base_rows, base_used, false);
    if (bases.size() != 1) continue;
    out.matched.push_back({bi, heads[0]});
    base_used[bi] = head_used[heads[0]] = true;
  }
  std::sort(out.matched.begin(), out.matched.end(),
            [](const RowMatch& x, const RowMatch& y) { return x.base_index < y.base_index; });
  for (std::size_t bi : base_rows)
    if (!base_used[bi]) out.only_base.push_back(bi);
  for (std::size_t hi : head_rows)
    if (!head_used[hi]) out.only_head.push_back(hi);
  return out;
}

}  // namespace roofline
