#include "lib/core/compare.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "lib/core/errors.hpp"
#include "lib/core/metric_catalog.hpp"
#include "lib/core/text.hpp"

namespace roofline {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

// ---- small formatting helpers ----

std::string signed_percent(double fraction, int digits = 1) {
  if (std::isnan(fraction)) return "-";
  if (std::isinf(fraction)) return fraction > 0 ? "new" : "gone";
  std::string text = format_fixed(100 * fraction, digits);
  const bool zero = text.find_first_not_of("-0.") == std::string::npos;
  if (zero && text.front() == '-') text.erase(0, 1);  // "-0.0" reads as a change; it is none
  return (fraction > 0 && !zero ? "+" : "") + text + "%";
}

std::string percent(double fraction) {
  // 0.05 -> "5%", 0.025 -> "2.5%"
  std::string text = format_fixed(100 * fraction, 2);
  while (!text.empty() && text.back() == '0') text.pop_back();
  if (!text.empty() && text.back() == '.') text.pop_back();
  return text + "%";
}

std::string p_text(double p) {
  if (p < 0.001) return "p < 0.001";
  return "p = " + format_fixed(p, p < 0.01 ? 4 : 3);
}

std::string time_text(double seconds) {
  if (std::isnan(seconds)) return "-";
  if (seconds < 1e-3) return format_fixed(seconds * 1e6, 1) + " µs";
  if (seconds < 1) return format_fixed(seconds * 1e3, 3) + " ms";
  return format_fixed(seconds, 3) + " s";
}

std::string test_name(SignificanceTest test) {
  return test == SignificanceTest::kMannWhitney ? "Mann–Whitney" : "ranges";
}

bool judged(RowStatus status) {
  return status == RowStatus::kOk || status == RowStatus::kCountersUnavailable;
}

double counter(const Row& row, const char* id) {
  auto it = row.counters.find(id);
  return it == row.counters.end() ? kNaN : it->second;
}

double median(std::vector<double> values) {
  if (values.empty()) return kNaN;
  std::sort(values.begin(), values.end());
  const std::size_t mid = values.size() / 2;
  return values.size() % 2 == 1 ? values[mid] : (values[mid - 1] + values[mid]) / 2;
}

std::string row_name(const std::string& kernel, const Workload& workload) {
  return kernel + " " + workload.label();
}

std::string device_name(const Report& report) {
  return report.context.device ? report.context.device->name : std::string();
}

// ---- deterministic quantities ----

struct QuantityDef {
  const char* id;
  const char* label;
  const char* unit;
  std::function<double(const Row&)> value;  // NaN when not measured
};

const std::vector<QuantityDef>& quantity_defs() {
  static const std::vector<QuantityDef> kDefs = {
      {"dram_bytes", "DRAM bytes", "bytes",
       [](const Row& row) {
         return counter(row, quantity::kDramRead) + counter(row, quantity::kDramWrite);
       }},
      {"l2_bytes", "L2 bytes", "bytes", [](const Row& row) { return counter(row, quantity::kL2); }},
      {"l1_bytes", "L1 bytes", "bytes", [](const Row& row) { return counter(row, quantity::kL1); }},
      {"shared_bytes", "shared bytes", "bytes",
       [](const Row& row) { return counter(row, quantity::kShared); }},
      {"tensor_flops", "tensor FLOPs", "flops",
       [](const Row& row) {
         const double mma = counter(row, quantity::kTensorMmaSync);
         const double wgmma = counter(row, quantity::kTensorWgmma);
         if (std::isnan(mma) && std::isnan(wgmma)) return kNaN;
         return (std::isnan(mma) ? 0 : mma) + (std::isnan(wgmma) ? 0 : wgmma);
       }},
      {"fp16_flops", "FP16 FLOPs", "flops",
       [](const Row& row) { return counter(row, quantity::kFp16Flops); }},
      {"fp32_flops", "FP32 FLOPs", "flops",
       [](const Row& row) { return counter(row, quantity::kFp32Flops); }},
  };
  return kDefs;
}

bool has_work_counters(const Row& row) {
  for (const QuantityDef& def : quantity_defs())
    if (!std::isnan(def.value(row))) return true;
  return false;
}

void compare_quantities(const Row& base, const Row& head, const CompareOptions& options,
                        RowComparison& out) {
  const bool base_counted = has_work_counters(base);
  const bool head_counted = has_work_counters(head);
  if (base_counted != head_counted) {
    out.notes.push_back(std::string("no counters in ") + (base_counted ? "head" : "base") +
                        ": bytes and FLOPs not compared");
    return;
  }
  for (const QuantityDef& def : quantity_defs()) {
    const double b = def.value(base);
    const double h = def.value(head);
    if (std::isnan(b) && std::isnan(h)) continue;
    if (std::isnan(b) || std::isnan(h)) {
      out.notes.push_back(std::string(def.label) + " measured in " +
                          (std::isnan(b) ? "head" : "base") + " only");
      continue;
    }
    QuantityChange change;
    change.id = def.id;
    change.label = def.label;
    change.unit = def.unit;
    change.base = b;
    change.head = h;
    change.relative_change = b != 0 ? h / b - 1 : (h == 0 ? 0 : kInf);
    change.beyond_tolerance = std::fabs(change.relative_change) > options.tolerance;
    change.increased = change.beyond_tolerance && change.relative_change > 0;
    out.more_work = out.more_work || change.increased;
    out.quantities.push_back(change);
  }
  // Tensor work moving between instruction families is worth a note, not a verdict.
  auto wgmma_share = [](const Row& row) {
    const double mma = counter(row, quantity::kTensorMmaSync);
    const double wgmma = counter(row, quantity::kTensorWgmma);
    const double total = (std::isnan(mma) ? 0 : mma) + (std::isnan(wgmma) ? 0 : wgmma);
    return total > 0 ? (std::isnan(wgmma) ? 0 : wgmma) / total : kNaN;
  };
  const double share_base = wgmma_share(base);
  const double share_head = wgmma_share(head);
  if (!std::isnan(share_base) && !std::isnan(share_head) &&
      std::fabs(share_head - share_base) > 0.10)
    out.notes.push_back("tensor FLOPs on wgmma: " + format_fixed(100 * share_base, 0) + "% → " +
                        format_fixed(100 * share_head, 0) + "% (the rest mma.sync)");
}

// ---- time ----

TimeComparison compare_time(const Timing& base, const Timing& head, const CompareOptions& options) {
  TimeComparison t;
  t.base_samples = base.samples_seconds.size();
  t.head_samples = head.samples_seconds.size();
  t.base_median_seconds = base.median_seconds();
  t.head_median_seconds = head.median_seconds();
  t.base_min_seconds = base.min_seconds();
  t.base_max_seconds = base.max_seconds();
  t.head_min_seconds = head.min_seconds();
  t.head_max_seconds = head.max_seconds();
  t.base_relative_spread = base.relative_spread();
  t.head_relative_spread = head.relative_spread();
  t.relative_change = t.head_median_seconds / t.base_median_seconds - 1;
  t.exceeds_threshold = std::fabs(t.relative_change) > options.threshold;
  t.ranges_overlap =
      !(t.base_max_seconds < t.head_min_seconds || t.head_max_seconds < t.base_min_seconds);
  if (t.base_samples >= static_cast<std::size_t>(kMinSamplesForUTest) &&
      t.head_samples >= static_cast<std::size_t>(kMinSamplesForUTest)) {
    t.test = SignificanceTest::kMannWhitney;
    t.p_value = mann_whitney_u(base.samples_seconds, head.samples_seconds).p_value;
  } else {
    t.test = SignificanceTest::kRanges;
    t.p_value = t.ranges_overlap ? 1.0 : disjoint_ranges_p_value(t.base_samples, t.head_samples);
  }
  t.significant = t.p_value < options.alpha;

  const std::string change = signed_percent(t.relative_change);
  const std::string threshold = percent(options.threshold);
  if (t.exceeds_threshold && t.significant) {
    t.verdict = t.relative_change > 0 ? Verdict::kSlower : Verdict::kFaster;
  } else if (!t.exceeds_threshold && !t.significant) {
    t.verdict = Verdict::kSame;
  } else if (t.exceeds_threshold) {
    t.verdict = Verdict::kAmbiguous;
    std::string why;
    if (t.test == SignificanceTest::kMannWhitney)
      why = "Mann–Whitney " + p_text(t.p_value);
    else if (t.ranges_overlap)
      why = "the [min, max] ranges overlap";
    else
      why = "disjoint ranges but " + std::to_string(t.base_samples) + " + " +
            std::to_string(t.head_samples) + " samples are too few, " + p_text(t.p_value);
    t.note =
        change + " exceeds the " + threshold + " threshold but is within the noise (" + why + ")";
  } else {
    t.verdict = Verdict::kAmbiguous;
    t.note = change + " is significant (" + test_name(t.test) + " " + p_text(t.p_value) +
             ") but below the " + threshold + " threshold";
  }
  return t;
}

// ---- matching ----

std::string kernel_list(const Report& report) {
  std::vector<std::string> names;
  for (const Row& row : report.rows)
    if (std::find(names.begin(), names.end(), row.kernel) == names.end())
      names.push_back(row.kernel);
  return join(names, ", ");
}

std::vector<std::size_t> select_rows(const Report& report, const std::string& kernel,
                                     const std::string& origin, const char* option) {
  std::vector<std::size_t> out;
  for (std::size_t i = 0; i < report.rows.size(); ++i)
    if (kernel.empty() || report.rows[i].kernel == kernel) out.push_back(i);
  if (out.empty() && !kernel.empty())
    throw InputError(origin + ": no rows of kernel \"" + kernel + "\" (" + option +
                     "; the report has: " + kernel_list(report) + ")");
  return out;
}

// ---- tables ----

std::string kernel_cell(const RowComparison& row) {
  return row.kernel_base == row.kernel_head ? row.kernel_base
                                            : row.kernel_base + " → " + row.kernel_head;
}

std::string time_cell(double median_seconds, double spread) {
  return time_text(median_seconds) + " ±" + format_fixed(100 * spread, 1) + "%";
}

std::string noise_cell(const TimeComparison& t) {
  if (t.test == SignificanceTest::kMannWhitney) return "U " + p_text(t.p_value);
  if (t.ranges_overlap) return "ranges overlap";
  return "ranges disjoint, " + p_text(t.p_value);
}

// "DRAM bytes +12.0%, FP32 FLOPs -3.1%"; "=" when everything is within tolerance; "-" when
// nothing was counted.
std::string quantities_cell(const RowComparison& row) {
  if (row.quantities.empty()) return "-";
  std::vector<std::string> parts;
  for (const QuantityChange& q : row.quantities)
    if (q.beyond_tolerance) parts.push_back(q.label + " " + signed_percent(q.relative_change));
  return parts.empty() ? "=" : join(parts, ", ");
}

std::string row_note(const RowComparison& row) {
  std::vector<std::string> parts;
  if (row.time && !row.time->note.empty()) parts.push_back(row.time->note);
  for (const std::string& note : row.notes) parts.push_back(note);
  return join(parts, "; ");
}

std::string summary_line(const Comparison& c) {
  std::vector<std::string> parts;
  for (Verdict v : {Verdict::kSlower, Verdict::kFailed, Verdict::kFaster, Verdict::kSame,
                    Verdict::kAmbiguous, Verdict::kNotCompared}) {
    const std::size_t n = c.count(v);
    if (n > 0 || v == Verdict::kSlower || v == Verdict::kFaster || v == Verdict::kSame)
      parts.push_back(std::to_string(n) + " " + std::string(to_string(v)));
  }
  std::string out = std::to_string(c.rows.size()) + " rows compared: " + join(parts, ", ");
  out += "; " + std::to_string(c.more_work_count()) + " with more bytes or FLOPs";
  if (!c.only_base.empty()) out += "; " + std::to_string(c.only_base.size()) + " only in base";
  if (!c.only_head.empty()) out += "; " + std::to_string(c.only_head.size()) + " only in head";
  return out;
}

std::string method_line(const Comparison& c) {
  return "time: median of the repetitions; a change counts when it exceeds " +
         percent(c.options.threshold) +
         " and the noise (Mann–Whitney U, α = " + format_fixed(c.options.alpha, 2) + ", from " +
         std::to_string(kMinSamplesForUTest) +
         " samples a side; else disjoint [min, max] ranges). Bytes and FLOPs: counted, " +
         percent(c.options.tolerance) + " tolerance; more is a regression.";
}

std::string side_text(const std::string& origin, const std::string& device, double clock_mhz) {
  std::string out = origin + " (" + (device.empty() ? "analytic model" : device);
  if (!std::isnan(clock_mhz)) out += ", SM " + format_fixed(clock_mhz, 0) + " MHz";
  return out + ")";
}

std::string markdown_escape(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '|' || c == '*' || c == '_' || c == '`' || c == '<' || c == '>' || c == '[' ||
        c == ']' || c == '\\')
      out += '\\';
    out += c;
  }
  return out;
}

std::string verdict_badge(const RowComparison& row) {
  if (row.more_work && row.verdict != Verdict::kSlower && row.verdict != Verdict::kFailed)
    return "🔴 " + std::string(to_string(row.verdict)) + ", **more work**";
  switch (row.verdict) {
    case Verdict::kFaster:
      return "🟢 faster";
    case Verdict::kSlower:
      return "🔴 **slower**";
    case Verdict::kSame:
      return "⚪ same";
    case Verdict::kAmbiguous:
      return "🟡 ambiguous";
    case Verdict::kFailed:
      return "🔴 **failed**";
    case Verdict::kNotCompared:
      return "⚫ not compared";
  }
  return "?";
}

nlohmann::json number(double value) {
  return std::isnan(value) || std::isinf(value) ? nlohmann::json(nullptr) : nlohmann::json(value);
}

nlohmann::json workload_json(const Workload& w) {
  return {{"batch", w.batch},       {"heads", w.heads},   {"seq_len", w.seq_len},
          {"head_dim", w.head_dim}, {"causal", w.causal}, {"pass", to_string(w.pass)},
          {"dtype", w.dtype}};
}

}  // namespace

// ---- statistics ----

MannWhitneyResult mann_whitney_u(const std::vector<double>& a, const std::vector<double>& b) {
  MannWhitneyResult result;
  const double n = static_cast<double>(a.size());
  const double m = static_cast<double>(b.size());
  if (a.empty() || b.empty()) return result;
  struct Item {
    double value;
    bool from_a;
  };
  std::vector<Item> pooled;
  pooled.reserve(a.size() + b.size());
  for (double v : a) pooled.push_back({v, true});
  for (double v : b) pooled.push_back({v, false});
  std::sort(pooled.begin(), pooled.end(),
            [](const Item& x, const Item& y) { return x.value < y.value; });
  double rank_sum_a = 0;
  double tie_term = 0;  // Σ (t³ − t)
  for (std::size_t i = 0; i < pooled.size();) {
    std::size_t j = i;
    while (j < pooled.size() && pooled[j].value == pooled[i].value) ++j;
    const double t = static_cast<double>(j - i);
    const double average_rank = (static_cast<double>(i + 1) + static_cast<double>(j)) / 2;
    for (std::size_t k = i; k < j; ++k)
      if (pooled[k].from_a) rank_sum_a += average_rank;
    tie_term += t * t * t - t;
    i = j;
  }
  const double total = n + m;
  result.u = rank_sum_a - n * (n + 1) / 2;
  const double mean = n * m / 2;
  const double variance = n * m / 12 * ((total + 1) - tie_term / (total * (total - 1)));
  if (!(variance > 0)) return result;  // every value tied: no evidence either way
  const double deviation = std::max(0.0, std::fabs(result.u - mean) - 0.5);
  const double z = deviation / std::sqrt(variance);
  result.z = result.u >= mean ? z : -z;
  result.p_value = std::min(1.0, std::erfc(z / std::sqrt(2.0)));
  return result;
}

double disjoint_ranges_p_value(std::size_t n, std::size_t m) {
  if (n == 0 || m == 0) return 1.0;
  // 2 / C(n+m, n), as a product to stay finite for large n and m.
  double inverse_binomial = 1.0;
  const std::size_t k = std::min(n, m);
  for (std::size_t i = 1; i <= k; ++i)
    inverse_binomial *= static_cast<double>(i) / static_cast<double>(n + m - k + i);
  return std::min(1.0, 2 * inverse_binomial);
}

// ---- comparison ----

std::string_view to_string(Verdict verdict) {
  switch (verdict) {
    case Verdict::kFaster:
      return "faster";
    case Verdict::kSlower:
      return "slower";
    case Verdict::kSame:
      return "same";
    case Verdict::kAmbiguous:
      return "ambiguous";
    case Verdict::kFailed:
      return "failed";
    case Verdict::kNotCompared:
      return "not compared";
  }
  return "?";
}

std::string_view to_string(SignificanceTest test) {
  return test == SignificanceTest::kMannWhitney ? "mann-whitney" : "ranges";
}

std::size_t Comparison::count(Verdict verdict) const {
  return static_cast<std::size_t>(std::count_if(
      rows.begin(), rows.end(), [&](const RowComparison& r) { return r.verdict == verdict; }));
}

std::size_t Comparison::more_work_count() const {
  return static_cast<std::size_t>(
      std::count_if(rows.begin(), rows.end(), [](const RowComparison& r) { return r.more_work; }));
}

bool Comparison::regressed() const {
  return std::any_of(rows.begin(), rows.end(), [](const RowComparison& r) { return r.regressed; });
}

int Comparison::exit_code() const {
  return static_cast<int>(regressed() ? ExitCode::kRegression : ExitCode::kOk);
}

RowMatching match_rows(const Report& base, const Report& head, const CompareOptions& options,
                       const std::string& base_origin, const std::string& head_origin) {
  const std::string kernel_base =
      options.kernel_base.empty() ? options.kernel_head : options.kernel_base;
  const std::string kernel_head =
      options.kernel_head.empty() ? options.kernel_base : options.kernel_head;
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
      if (head_used[hi] || !same_kernel(b, h) || !(b.workload == h.workload) ||
          b.spec_key != h.spec_key)
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
        if (kernel_ok && r.workload == probe.workload) found.push_back(i);
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

double median_sm_clock_mhz(const Report& report) {
  std::vector<double> clocks;
  for (const Row& row : report.rows) {
    const double hz = counter(row, quantity::kSmClock);
    if (hz > 0) {
      clocks.push_back(hz / 1e6);
    } else if (row.timing && row.timing->sm_clock_after_mhz > 0) {
      const Timing& t = *row.timing;
      clocks.push_back(t.sm_clock_before_mhz > 0
                           ? (t.sm_clock_before_mhz + t.sm_clock_after_mhz) / 2
                           : t.sm_clock_after_mhz);
    }
  }
  return median(std::move(clocks));
}

Comparison compare_reports(const Report& base, const Report& head, const CompareOptions& options,
                           const std::string& base_origin, const std::string& head_origin) {
  if (base.rows.empty()) throw InputError(base_origin + ": the report has no rows");
  if (head.rows.empty()) throw InputError(head_origin + ": the report has no rows");

  Comparison c;
  c.base_origin = base_origin;
  c.head_origin = head_origin;
  c.options = options;
  c.base_device = device_name(base);
  c.head_device = device_name(head);
  c.base_sm_clock_mhz = median_sm_clock_mhz(base);
  c.head_sm_clock_mhz = median_sm_clock_mhz(head);

  auto mismatch = [&](const std::string& why) {
    if (!options.allow_mismatch)
      throw InputError(why + "; pass --allow-mismatch to compare anyway");
    c.warnings.push_back("compared despite: " + why);
  };
  if (!iequals(c.base_device, c.head_device)) {
    const std::string base_side = c.base_device.empty()
                                      ? base_origin + " is an analytic model report (no device)"
                                      : base_origin + " was measured on " + c.base_device;
    const std::string head_side =
        c.head_device.empty()   ? head_origin + " is an analytic model report (no device)"
        : c.base_device.empty() ? head_origin + " was measured on " + c.head_device
                                : head_origin + " on " + c.head_device;
    mismatch("devices differ: " + base_side + ", " + head_side);
  }
  if (!std::isnan(c.base_sm_clock_mhz) && !std::isnan(c.head_sm_clock_mhz)) {
    const double change = c.head_sm_clock_mhz / c.base_sm_clock_mhz - 1;
    if (std::fabs(change) > kMaxClockDifference)
      mismatch("SM clocks differ: median " + format_fixed(c.base_sm_clock_mhz, 0) + " MHz in " +
               base_origin + ", " + format_fixed(c.head_sm_clock_mhz, 0) + " MHz in " +
               head_origin + " (" + signed_percent(change) + ", more than " +
               percent(kMaxClockDifference) + ")");
  }

  const RowMatching matching = match_rows(base, head, options, base_origin, head_origin);
  for (const RowMatch& match : matching.matched) {
    const Row& b = base.rows[match.base_index];
    const Row& h = head.rows[match.head_index];
    RowComparison row;
    row.kernel_base = b.kernel;
    row.kernel_head = h.kernel;
    row.workload = b.workload;
    row.spec_base = b.spec_key;
    row.spec_head = h.spec_key;
    row.base_index = match.base_index;
    row.head_index = match.head_index;
    if (!judged(b.status)) {
      row.verdict = Verdict::kNotCompared;
      row.notes.push_back("base: " + std::string(to_string(b.status)) +
                          (b.message.empty() ? "" : ": " + first_line(b.message)));
    } else if (!judged(h.status)) {
      row.verdict = Verdict::kFailed;
      row.regressed = true;
      row.notes.push_back("head: " + std::string(to_string(h.status)) +
                          (h.message.empty() ? "" : ": " + first_line(h.message)));
    } else {
      for (const auto& [origin, r] : {std::pair{&base_origin, &b}, std::pair{&head_origin, &h}})
        if (!r->timing || r->timing->samples_seconds.empty())
          throw InputError(*origin + ": " + row_name(r->kernel, r->workload) +
                           " has no timing samples (compare needs reports written by "
                           "`cuflash-roofline run`)");
      row.time = compare_time(*b.timing, *h.timing, options);
      row.verdict = row.time->verdict;
      compare_quantities(b, h, options, row);
      row.regressed = row.verdict == Verdict::kSlower || row.more_work;
    }
    c.rows.push_back(std::move(row));
  }
  for (std::size_t i : matching.only_base)
    c.only_base.push_back({base.rows[i].kernel, base.rows[i].workload, base.rows[i].spec_key});
  for (std::size_t i : matching.only_head)
    c.only_head.push_back({head.rows[i].kernel, head.rows[i].workload, head.rows[i].spec_key});
  return c;
}

// ---- writers ----

std::string render_compare_table(const Comparison& c) {
  std::ostringstream out;
  out << "cuflash-roofline compare\n"
      << "base: " << side_text(c.base_origin, c.base_device, c.base_sm_clock_mhz) << "\n"
      << "head: " << side_text(c.head_origin, c.head_device, c.head_sm_clock_mhz) << "\n";
  for (const std::string& warning : c.warnings) out << "warning: " << warning << "\n";

  const std::vector<std::string> header = {"kernel", "workload", "base",        "head", "change",
                                           "noise",  "verdict",  "bytes/FLOPs", "note"};
  const std::vector<bool> right = {false, false, true, true, true, false, false, false, false};
  std::vector<std::vector<std::string>> cells;
  for (const RowComparison& row : c.rows) {
    std::vector<std::string> line = {kernel_cell(row), row.workload.label()};
    if (row.time) {
      const TimeComparison& t = *row.time;
      line.push_back(time_cell(t.base_median_seconds, t.base_relative_spread));
      line.push_back(time_cell(t.head_median_seconds, t.head_relative_spread));
      line.push_back(signed_percent(t.relative_change));
      line.push_back(noise_cell(t));
    } else {
      line.insert(line.end(), {"-", "-", "-", "-"});
    }
    std::string verdict(to_string(row.verdict));
    if (row.regressed) verdict += " !";
    line.push_back(verdict);
    line.push_back(quantities_cell(row));
    line.push_back(row_note(row));
    cells.push_back(std::move(line));
  }
  std::vector<std::size_t> widths(header.size());
  for (std::size_t i = 0; i < header.size(); ++i) widths[i] = display_width(header[i]);
  for (const auto& line : cells)
    for (std::size_t i = 0; i < line.size(); ++i)
      widths[i] = std::max(widths[i], display_width(line[i]));
  auto emit = [&](const std::vector<std::string>& line, bool is_header) {
    std::string text;
    for (std::size_t i = 0; i < line.size(); ++i) {
      if (i > 0) text += "  ";
      text += pad(line[i], widths[i], right[i] && !is_header);
    }
    while (!text.empty() && text.back() == ' ') text.pop_back();
    out << text << "\n";
  };
  emit(header, true);
  for (const auto& line : cells) emit(line, false);
  for (const UnmatchedRow& row : c.only_base)
    out << "only in base: " << row_name(row.kernel, row.workload) << " [" << row.spec_key << "]\n";
  for (const UnmatchedRow& row : c.only_head)
    out << "only in head: " << row_name(row.kernel, row.workload) << " [" << row.spec_key << "]\n";
  out << method_line(c) << "\n";
  if (c.regressed()) out << "!: regressed (slower, failed, or more bytes or FLOPs)\n";
  out << summary_line(c) << "\n";
  out << (c.regressed() ? "result: regression (exit 1)" : "result: no regression (exit 0)") << "\n";
  return out.str();
}

std::string render_compare_markdown(const Comparison& c) {
  std::ostringstream out;
  out << "### cuflash-roofline compare: " << (c.regressed() ? "❌ regression" : "✅ no regression")
      << "\n\n";
  out << "**base** `" << side_text(c.base_origin, c.base_device, c.base_sm_clock_mhz)
      << "` → **head** `" << side_text(c.head_origin, c.head_device, c.head_sm_clock_mhz)
      << "`\n\n";
  for (const std::string& warning : c.warnings)
    out << "> ⚠️ " << markdown_escape(warning) << "\n\n";
  out << summary_line(c) << "\n\n";

  auto table = [&](const std::vector<const RowComparison*>& rows) {
    out << "| verdict | kernel | workload | base | head | change | noise | bytes / FLOPs | note |\n"
        << "|---|---|---|---:|---:|---:|---|---|---|\n";
    for (const RowComparison* row : rows) {
      out << "| " << verdict_badge(*row) << " | " << markdown_escape(kernel_cell(*row)) << " | "
          << markdown_escape(row->workload.label()) << " | ";
      if (row->time) {
        const TimeComparison& t = *row->time;
        out << time_cell(t.base_median_seconds, t.base_relative_spread) << " | "
            << time_cell(t.head_median_seconds, t.head_relative_spread) << " | "
            << (row->verdict == Verdict::kSlower ? "**" + signed_percent(t.relative_change) + "**"
                                                 : signed_percent(t.relative_change))
            << " | " << markdown_escape(noise_cell(t)) << " | ";
      } else {
        out << "- | - | - | - | ";
      }
      std::string quantities = markdown_escape(quantities_cell(*row));
      if (row->more_work) quantities = "**" + quantities + "**";
      out << quantities << " | " << markdown_escape(row_note(*row)) << " |\n";
    }
  };
  std::vector<const RowComparison*> changed;
  std::vector<const RowComparison*> unchanged;
  for (const RowComparison& row : c.rows) {
    const bool quiet = row.verdict == Verdict::kSame && !row.regressed &&
                       quantities_cell(row).find('%') == std::string::npos && row.notes.empty();
    (quiet ? unchanged : changed).push_back(&row);
  }
  if (!changed.empty()) table(changed);
  if (!unchanged.empty()) {
    out << "\n<details><summary>" << unchanged.size() << " unchanged row"
        << (unchanged.size() == 1 ? "" : "s") << "</summary>\n\n";
    table(unchanged);
    out << "\n</details>\n";
  }
  if (!c.only_base.empty() || !c.only_head.empty()) {
    out << "\n";
    for (const UnmatchedRow& row : c.only_base)
      out << "- only in base: " << markdown_escape(row_name(row.kernel, row.workload)) << " ["
          << markdown_escape(row.spec_key) << "]\n";
    for (const UnmatchedRow& row : c.only_head)
      out << "- only in head: " << markdown_escape(row_name(row.kernel, row.workload)) << " ["
          << markdown_escape(row.spec_key) << "]\n";
  }
  out << "\n<sub>" << markdown_escape(method_line(c)) << "</sub>\n";
  return out.str();
}

std::string render_compare_json(const Comparison& c) {
  using nlohmann::json;
  json root;
  root["kind"] = "cuflash-roofline compare";
  root["schema_version"] = 1;
  root["base"] = {{"file", c.base_origin},
                  {"device", c.base_device.empty() ? json(nullptr) : json(c.base_device)},
                  {"median_sm_clock_mhz", number(c.base_sm_clock_mhz)}};
  root["head"] = {{"file", c.head_origin},
                  {"device", c.head_device.empty() ? json(nullptr) : json(c.head_device)},
                  {"median_sm_clock_mhz", number(c.head_sm_clock_mhz)}};
  root["options"] = {{"tolerance", c.options.tolerance},
                     {"threshold", c.options.threshold},
                     {"alpha", c.options.alpha},
                     {"min_samples_for_u_test", kMinSamplesForUTest},
                     {"allow_mismatch", c.options.allow_mismatch},
                     {"kernel_base", c.options.kernel_base},
                     {"kernel_head", c.options.kernel_head}};
  json summary = json::object();
  for (Verdict v : {Verdict::kFaster, Verdict::kSlower, Verdict::kSame, Verdict::kAmbiguous,
                    Verdict::kFailed, Verdict::kNotCompared}) {
    std::string key(to_string(v));
    std::replace(key.begin(), key.end(), ' ', '_');
    summary[key] = c.count(v);
  }
  summary["more_work"] = c.more_work_count();
  summary["only_base"] = c.only_base.size();
  summary["only_head"] = c.only_head.size();
  summary["regressed"] = c.regressed();
  summary["exit_code"] = c.exit_code();
  root["summary"] = summary;
  root["warnings"] = c.warnings;
  root["rows"] = json::array();
  for (const RowComparison& row : c.rows) {
    json r = {{"kernel_base", row.kernel_base},
              {"kernel_head", row.kernel_head},
              {"workload", workload_json(row.workload)},
              {"spec_base", row.spec_base},
              {"spec_head", row.spec_head},
              {"verdict", to_string(row.verdict)},
              {"regressed", row.regressed},
              {"more_work", row.more_work},
              {"notes", row.notes}};
    if (row.time) {
      const TimeComparison& t = *row.time;
      r["time"] = {{"base_samples", t.base_samples},
                   {"head_samples", t.head_samples},
                   {"base_median_seconds", number(t.base_median_seconds)},
                   {"head_median_seconds", number(t.head_median_seconds)},
                   {"base_min_seconds", number(t.base_min_seconds)},
                   {"base_max_seconds", number(t.base_max_seconds)},
                   {"head_min_seconds", number(t.head_min_seconds)},
                   {"head_max_seconds", number(t.head_max_seconds)},
                   {"base_relative_spread", number(t.base_relative_spread)},
                   {"head_relative_spread", number(t.head_relative_spread)},
                   {"relative_change", number(t.relative_change)},
                   {"test", to_string(t.test)},
                   {"p_value", number(t.p_value)},
                   {"ranges_overlap", t.ranges_overlap},
                   {"exceeds_threshold", t.exceeds_threshold},
                   {"significant", t.significant},
                   {"verdict", to_string(t.verdict)},
                   {"note", t.note}};
    } else {
      r["time"] = nullptr;
    }
    r["quantities"] = json::array();
    for (const QuantityChange& q : row.quantities)
      r["quantities"].push_back({{"id", q.id},
                                 {"unit", q.unit},
                                 {"base", number(q.base)},
                                 {"head", number(q.head)},
                                 {"relative_change", number(q.relative_change)},
                                 {"beyond_tolerance", q.beyond_tolerance},
                                 {"increased", q.increased}});
    root["rows"].push_back(std::move(r));
  }
  auto unmatched = [&](const std::vector<UnmatchedRow>& rows) {
    json out = json::array();
    for (const UnmatchedRow& row : rows)
      out.push_back({{"kernel", row.kernel},
                     {"workload", workload_json(row.workload)},
                     {"spec", row.spec_key}});
    return out;
  };
  root["only_base"] = unmatched(c.only_base);
  root["only_head"] = unmatched(c.only_head);
  return root.dump(2) + "\n";
}

}  // namespace roofline
