#include "lib/core/compare.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>

#include "lib/core/compare_format.hpp"
#include "lib/core/errors.hpp"
#include "lib/core/metric_catalog.hpp"
#include "lib/core/statistics.hpp"
#include "lib/core/text.hpp"

namespace roofline {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

bool judged(RowStatus status) {
  return status == RowStatus::kOk || status == RowStatus::kCountersUnavailable;
}

double counter(const Row& row, const char* id) {
  auto it = row.counters.find(id);
  return it == row.counters.end() ? kNaN : it->second;
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

}  // namespace

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

  const RowMatching matching =
      match_rows(base, head, {options.kernel_base, options.kernel_head}, base_origin, head_origin);
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

}  // namespace roofline
