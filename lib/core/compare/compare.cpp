#include "lib/core/compare/compare.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

#include "lib/core/base/errors.hpp"
#include "lib/core/base/statistics.hpp"
#include "lib/core/base/text.hpp"
#include "lib/core/compare/compare_format.hpp"
#include "lib/core/compare/launch_groups.hpp"
#include "lib/core/compare/noise_model.hpp"
#include "lib/core/domain/metric_catalog.hpp"

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

// The GPU a report was measured on; a merged report of several GPU types names each, in order of
// first appearance ("NVIDIA H200 + NVIDIA A100-SXM4-80GB"); empty for an analytic model report.
std::string device_name(const Report& report) {
  if (report.context.device) return report.context.device->name;
  std::vector<std::string> names;
  for (const ReportContext& origin : report.origins)
    if (origin.device && std::find(names.begin(), names.end(), origin.device->name) == names.end())
      names.push_back(origin.device->name);
  std::string joined;
  for (const std::string& name : names) joined += (joined.empty() ? "" : " + ") + name;
  return joined;
}
// ---- counted quantities ----

bool has_work_counters(const Row& row) {
  for (const QuantityDef& def : quantity_defs())
    if (!std::isnan(quantity_value(def, row).value)) return true;
  return false;
}

// Sum of the FLOP quantities both rows counted; NaN when none.
std::pair<double, double> common_flops(const Row& base, const Row& head) {
  double b = 0, h = 0;
  bool any = false;
  for (const QuantityDef& def : quantity_defs()) {
    if (!def.flops) continue;
    const double vb = quantity_value(def, base).value;
    const double vh = quantity_value(def, head).value;
    if (std::isnan(vb) || std::isnan(vh)) continue;
    b += vb;
    h += vh;
    any = true;
  }
  return any ? std::pair{b, h} : std::pair{kNaN, kNaN};
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
  const auto [flops_base, flops_head] = common_flops(base, head);
  const bool total_flops_grew = flops_base > 0 && flops_head / flops_base - 1 > options.tolerance;
  for (const QuantityDef& def : quantity_defs()) {
    const QuantityValue b = quantity_value(def, base);
    const QuantityValue h = quantity_value(def, head);
    if (std::isnan(b.value) && std::isnan(h.value)) continue;
    if (std::isnan(b.value) || std::isnan(h.value)) {
      out.notes.push_back(def.label + " counted in " + (std::isnan(b.value) ? "head" : "base") +
                          " only");
      continue;
    }
    QuantityChange change;
    change.id = def.id;
    change.label = def.label;
    change.unit = def.unit;
    change.kind = def.kind;
    change.gated = def.gated();
    change.base = b.value;
    change.head = h.value;
    change.base_counts = b.counts;
    change.head_counts = h.counts;
    change.base_spread = b.spread;
    change.head_spread = h.spread;
    change.relative_change = b.value != 0 ? h.value / b.value - 1 : (h.value == 0 ? 0 : kInf);
    change.margin = def.gated() ? quantity_margin(def, b, h, options.tolerance, options.noise)
                                : options.tolerance;
    change.changed = std::fabs(change.relative_change) > change.margin;
    if (change.changed && change.relative_change > 0 && def.gated()) {
      if (b.value == 0) {
        out.notes.push_back(def.label +
                            " new in head (none in base): work on another pipe, "
                            "not a regression by itself");
      } else if (def.flops && !total_flops_grew) {
        out.notes.push_back(def.label + " " + signed_percent(change.relative_change) +
                            ", but the counted FLOPs of all pipes " +
                            signed_percent(flops_head / flops_base - 1) +
                            ": work moved between pipes");
      } else {
        change.increased = true;
      }
    }
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

// Two groups of profiled launches (launch_groups.hpp). With as many launches on each side, the
// k-th launch of each is the same call of the program, so the test is on the launches' log
// ratios (paired: launches of one group may differ in their inputs, and their ratios do not);
// else on each side's mean log. Either way a side's variance is at least what each launch's
// noise between processes gives (launch_noise, or the floor in seconds where larger).
DifferenceTest launch_group_test(const Timing& base, const Timing& head, const NoiseModel& noise) {
  const auto per_launch = [&](double seconds) {
    const double floor = noise.launch_floor_seconds / seconds;
    return noise.launch_noise * noise.launch_noise + floor * floor;
  };
  // The mean of `values` whose noise is at least `model_sum` summed over them.
  const auto estimate = [](const std::vector<double>& values, double model_sum) {
    Estimate e = mean_estimate(values);
    const double n = static_cast<double>(values.size());
    const double model = model_sum / (n * n);
    if (!(e.variance >= model)) {
      e.variance = model;
      e.df = kInfiniteDf;
    }
    return e;
  };
  const double process = 2 * noise.process_noise * noise.process_noise;
  const std::vector<double>& b = base.samples_seconds;
  const std::vector<double>& h = head.samples_seconds;
  if (b.size() == h.size()) {
    std::vector<double> ratios;
    double model = 0;
    for (std::size_t k = 0; k < b.size(); ++k) {
      ratios.push_back(std::log(h[k]) - std::log(b[k]));
      model += per_launch(b[k]) + per_launch(h[k]);
    }
    return difference_test(Estimate{0, 0, kInfiniteDf}, estimate(ratios, model), process);
  }
  const auto side = [&](const std::vector<double>& samples) {
    std::vector<double> logs;
    double model = 0;
    for (double seconds : samples) {
      logs.push_back(std::log(seconds));
      model += per_launch(seconds);
    }
    return estimate(logs, model);
  };
  return difference_test(side(b), side(h), process);
}

TimeComparison compare_time(const Timing& base, const Timing& head, const CompareOptions& options,
                            bool launch_groups) {
  TimeComparison t;
  t.base = time_side(base);
  t.head = time_side(head);
  const double floor = options.noise.process_noise;
  const DifferenceTest test =
      launch_groups ? launch_group_test(base, head, options.noise)
                    : difference_test(t.base.log_center, t.head.log_center, 2 * floor * floor);
  t.relative_change = std::expm1(test.difference);
  t.standard_error = test.standard_error;
  t.df = test.df;
  t.p_value = test.p_value;
  t.exceeds_threshold = std::fabs(t.relative_change) > options.threshold;
  t.significant = t.p_value < options.alpha;
  // The smallest slowdown detected: the threshold applies to the relative change, the test to
  // the logs.
  t.detectable_change = std::expm1(minimum_detectable_difference(
      t.standard_error, t.df, options.alpha, options.power, std::log1p(options.threshold)));

  const std::string change = signed_percent(t.relative_change);
  const std::string threshold = percent(options.threshold);
  const std::string noise = "±" + format_fixed(100 * t.standard_error, 1) + "%";
  if (t.exceeds_threshold && t.significant) {
    t.verdict = t.relative_change > 0 ? Verdict::kSlower : Verdict::kFaster;
  } else if (t.exceeds_threshold) {
    t.verdict = Verdict::kAmbiguous;
    t.note = change + " exceeds the " + threshold + " threshold but not the noise (" + noise +
             ", " + p_text(t.p_value) + ")";
  } else {
    t.verdict = Verdict::kSame;
    if (t.significant)
      t.note = "a real change of " + change + " (" + p_text(t.p_value) + "), below the " +
               threshold + " threshold";
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

std::size_t Comparison::count(Verdict verdict) const {
  return static_cast<std::size_t>(std::count_if(
      rows.begin(), rows.end(), [&](const RowComparison& r) { return r.verdict == verdict; }));
}

std::size_t Comparison::timed_count() const {
  return static_cast<std::size_t>(
      std::count_if(rows.begin(), rows.end(), [](const RowComparison& r) { return r.time; }));
}

std::size_t Comparison::detectable_count(double level) const {
  return static_cast<std::size_t>(std::count_if(
      rows.begin(), rows.end(),
      [&](const RowComparison& r) { return r.time && r.time->detectable_change <= level; }));
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
    } else if (row.timing && row.timing->sm_clock_around_mhz() > 0) {
      // The readings around the launches, not the median while timed: every report has them
      // (those before 2026-12-02 have no other), and the false-alarm rates of the gate were
      // measured on them (docs/results/2026-11-30-h200-gate-rates.md).
      clocks.push_back(row.timing->sm_clock_around_mhz());
    }
  }
  return median(std::move(clocks));
}

Comparison compare_reports(const Report& base_report, const Report& head_report,
                           const CompareOptions& options, const std::string& base_origin,
                           const std::string& head_origin) {
  if (base_report.rows.empty()) throw InputError(base_origin + ": the report has no rows");
  if (head_report.rows.empty()) throw InputError(head_origin + ": the report has no rows");
  const bool grouped =
      options.group_launches && is_launch_report(base_report) && is_launch_report(head_report);
  std::optional<Report> base_groups, head_groups;
  if (grouped) {
    base_groups = group_launches(base_report);
    head_groups = group_launches(head_report);
  }
  const Report& base = grouped ? *base_groups : base_report;
  const Report& head = grouped ? *head_groups : head_report;
  // A profiled launch is counted once, with no spread of its own: its cache quantities get the
  // launches' floor.
  CompareOptions quantity_options = options;
  if (grouped)
    quantity_options.noise.cache_floor =
        std::max(options.noise.cache_floor, options.noise.launch_cache_floor);
  const auto point_of = [&](const Row& row) {
    return grouped ? launch_group_label(row) : row_label(row);
  };

  Comparison c;
  c.base_origin = base_origin;
  c.head_origin = head_origin;
  c.options = quantity_options;  // what the footer states: the floors applied
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
    row.point = point_of(b);
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
          throw InputError(*origin + ": " + one_line(r->kernel) + " " + point_of(*r) +
                           " has no timing samples (compare needs reports written by "
                           "`cuflash-roofline run`)");
      row.time = compare_time(*b.timing, *h.timing, options, grouped);
      row.verdict = row.time->verdict;
      compare_quantities(b, h, quantity_options, row);
      // A row that is significantly faster paid for its extra work already: the time says so.
      const bool work_excused =
          row.more_work && row.verdict == Verdict::kFaster && !options.fail_on_more_work;
      if (work_excused) {
        std::vector<std::string> grown;
        for (const QuantityChange& q : row.quantities)
          if (q.increased) grown.push_back(q.label + " " + signed_percent(q.relative_change));
        row.notes.push_back("more work (" + join(grown, ", ") +
                            ") but significantly faster: not a regression (--fail-on-more-work "
                            "makes it one)");
      }
      row.regressed = row.verdict == Verdict::kSlower || (row.more_work && !work_excused);
    }
    c.rows.push_back(std::move(row));
  }
  auto one_round = [&](bool base_side) {
    return std::any_of(c.rows.begin(), c.rows.end(), [&](const RowComparison& r) {
      return r.time && (base_side ? r.time->base : r.time->head).rounds == 0;
    });
  };
  std::vector<std::string> one_round_origins;
  if (grouped)
    c.notes.push_back(
        "profiles compared by group of launches (kernel, grid, block; graph nodes "
        "apart): " +
        std::to_string(base_report.rows.size()) + " launches in " +
        std::to_string(base.rows.size()) + " groups (base), " +
        std::to_string(head_report.rows.size()) + " in " + std::to_string(head.rows.size()) +
        " (head); each launch's noise " + percent(options.noise.launch_noise) + " or " +
        format_fixed(options.noise.launch_floor_seconds * 1e6, 2) + " µs");
  if (!grouped && one_round(true)) one_round_origins.push_back(base_origin);
  if (!grouped && one_round(false) && !(one_round(true) && head_origin == base_origin))
    one_round_origins.push_back(head_origin);
  for (const std::string& origin : one_round_origins)
    c.notes.push_back(origin +
                      " was timed in one round: its samples show within-run noise only (run "
                      "with --rounds 2 or more)");
  for (std::size_t i : matching.only_base)
    c.only_base.push_back({base.rows[i].kernel, base.rows[i].workload, point_of(base.rows[i]),
                           base.rows[i].spec_key});
  for (std::size_t i : matching.only_head)
    c.only_head.push_back({head.rows[i].kernel, head.rows[i].workload, point_of(head.rows[i]),
                           head.rows[i].spec_key});
  return c;
}

}  // namespace roofline
