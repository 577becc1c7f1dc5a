// The noise model and the verdicts on real recordings: scripts/gate_check.sh on the H200
// (tests/data/reports/h200_gate.tar.xz, unpacked at configure time; README.md there). a_NN are
// independent processes of unchanged code, h_NN the heads with the test aids of `run`: per
// variants.tsv, one kernel 5% slower, one 10% slower, one reading 12% of its model DRAM bytes
// more in every counted range.
#include <doctest/doctest.h>

#include <cmath>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "lib/core/base/text.hpp"
#include "lib/core/compare/compare.hpp"
#include "lib/core/compare/noise_model.hpp"
#include "lib/core/report/report_read.hpp"

using namespace roofline;

namespace {

const std::string kDir = ROOFLINE_GATE_REPORTS_DIR;

struct Variant {
  std::string pair;  // "01"
  std::string slow5, slow10, bytes;
};

std::vector<Variant> variants() {
  std::ifstream in(kDir + "/variants.tsv");
  std::vector<Variant> out;
  std::string line;
  while (std::getline(in, line)) {
    const auto f = split(line, '\t');
    REQUIRE(f.size() == 4);
    out.push_back({f[0], f[1], f[2], f[3]});
  }
  return out;
}

const Report& report(const std::string& name) {
  static std::map<std::string, Report> cache;
  auto it = cache.find(name);
  if (it == cache.end())
    it = cache.emplace(name, read_report_file(kDir + "/" + name + ".json")).first;
  return it->second;
}

std::string previous(const std::string& pair) {
  const int n = std::stoi(pair) - 1;
  return (n < 10 ? "0" : "") + std::to_string(n);
}

Comparison compare_kernel(const std::string& base, const std::string& head,
                          const std::string& kernel = "") {
  CompareOptions options;
  options.kernel_base = options.kernel_head = kernel;
  return compare_reports(report(base), report(head), options, base, head);
}

}  // namespace

TEST_CASE("gate recordings: every row timed in rounds and counted three times") {
  const auto pairs = variants();
  REQUIRE(pairs.size() >= 10);
  const Report& a = report("a_00");
  REQUIRE(a.rows.size() == 48);
  for (const Row& row : a.rows) {
    REQUIRE(row.timing);
    CHECK(row.timing->rounds == 5);
    CHECK(row.timing->samples_seconds.size() == 20);
    const TimeSide side = time_side(*row.timing);
    CHECK(side.rounds == 5);
    CHECK(side.log_center.df == 4);
    for (const QuantityDef& def : quantity_defs()) {
      const QuantityValue v = quantity_value(def, row);
      if (std::isnan(v.value)) continue;
      CHECK(v.counts == 3);
      // FLOPs and L1 bytes are instruction counts: the same in every range.
      if (def.id == "tensor_flops" || def.id == "l1_bytes") CHECK(v.spread == 0);
    }
  }
}

TEST_CASE("gate recordings: A/A pairs of unchanged code stay quiet") {
  std::size_t rows = 0, not_same = 0, regressed_pairs = 0;
  for (const Variant& v : variants()) {
    const Comparison c = compare_kernel("a_" + previous(v.pair), "a_" + v.pair);
    rows += c.rows.size();
    not_same += c.rows.size() - c.count(Verdict::kSame);
    regressed_pairs += c.regressed();
    CHECK(c.more_work_count() == 0);
    // What a pair can see: a 5% slowdown on nearly every row.
    CHECK(c.detectable_count(0.05) + 2 >= c.rows.size());
  }
  CHECK(regressed_pairs == 0);
  CHECK(static_cast<double>(not_same) < 0.02 * static_cast<double>(rows));
}

TEST_CASE("gate recordings: A/B heads are caught") {
  for (const Variant& v : variants()) {
    CAPTURE(v.pair);
    const std::string base = "a_" + v.pair, head = "h_" + v.pair;
    // 10% slower: every pair exits 1, nearly every row is `slower`.
    const Comparison slow10 = compare_kernel(base, head, v.slow10);
    CHECK(slow10.exit_code() == 1);
    CHECK(slow10.count(Verdict::kSlower) >= 15);
    CHECK(slow10.more_work_count() == 0);  // the busy-wait moves no bytes
    // 5% slower: at the 4% threshold most rows are `slower`.
    const Comparison slow5 = compare_kernel(base, head, v.slow5);
    CHECK(slow5.exit_code() == 1);
    CHECK(slow5.count(Verdict::kSlower) >= 12);
    // Extra bytes read, timed launches unchanged: more work, not slower.
    const Comparison bytes = compare_kernel(base, head, v.bytes);
    CHECK(bytes.exit_code() == 1);
    CHECK(bytes.count(Verdict::kSlower) == 0);
    std::size_t flagged = 0;
    for (const RowComparison& row : bytes.rows) {
      double l2 = 0, dram_read = 0;
      for (const QuantityChange& q : row.quantities) {
        if (q.id == "l2_bytes") l2 = q.relative_change;
        if (q.id == "dram_read_bytes") dram_read = q.relative_change;
      }
      CHECK(std::max(l2, dram_read) >= 0.10);  // the variant moves >= 10% more
      flagged += row.more_work;
    }
    CHECK(flagged >= 14);
  }
}
