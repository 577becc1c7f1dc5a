// The terminal table of a report: one line per row, what judged it in the header, notes and
// warnings below. The columns are for reading, not parsing (that is what JSON and CSV are for).
#include <algorithm>
#include <cmath>
#include <sstream>

#include "lib/core/base/table_layout.hpp"
#include "lib/core/base/text.hpp"
#include "lib/core/model/roofline.hpp"
#include "lib/core/verdict/advice.hpp"
#include "lib/core/verdict/analysis.hpp"
#include "lib/core/verdict/flop_convention.hpp"
#include "lib/core/verdict/report_notes.hpp"
#include "lib/core/writers/report_writers.hpp"

namespace roofline {
namespace {

// "1.23 J", "12.3 mJ", "456 µJ": three significant figures.
std::string joules_text(double joules) {
  const double scale = joules >= 1 ? 1 : joules >= 1e-3 ? 1e3 : 1e6;
  const double v = joules * scale;
  return format_fixed(v, v >= 100  ? 0
                         : v >= 10 ? 1
                                   : 2) +
         (scale == 1     ? " J"
          : scale == 1e3 ? " mJ"
                         : " µJ");
}

// The energy model in a cell: the dominant cost and its share, and modelled ÷ measured joules
// where the row's energy was measured: "static 58%", "DRAM 47% ×1.04".
std::string energy_model_brief(const EnergyAnalysis& e) {
  return e.dominant + " " + format_fixed(100 * e.dominant_share, 0) + "%" +
         (std::isfinite(e.modelled_vs_measured) ? " ×" + format_fixed(e.modelled_vs_measured, 2)
                                                : std::string());
}

std::string bytes_text(double bytes) {
  return std::isnan(bytes) ? "-" : format_si(bytes) + "B";
}

// Column indices, in the table's order.
enum Column : std::size_t {
  kKernel,
  kWorkload,
  kTime,
  kGflop,
  kTflops,
  kDramBytes,
  kDramRate,
  kBandwidthUtil,
  kIntensity,
  kCeiling,
  kRegime,
  kRidge,
  kBound,
  kOfBound,
  kXuRoof,
  kTryNext,
  // The measured extras, last: each left out of a table whose rows have none (unless chosen).
  kEnergy,
  kFlopsPerJoule,
  kStall,
  kEnergyModel,
  kColumnCount,
};

// What the rows' non-verdict statuses said, once per status and message.
struct StatusNote {
  std::string status, message;
  std::string first_row;
  std::size_t rows = 0;
};

// The regime in eight characters or fewer, for a table too narrow for the whole one:
// "mem DRAM", "compute", "tail 52%", "exp XU"; a row judged on nothing its text before the
// colon ("time only").
std::string short_regime(const RowAnalysis& a) {
  if (a.exp_bound) return "exp XU";
  if (a.tail_bound && a.tail) return "tail " + format_fixed(100 * a.tail->efficiency, 0) + "%";
  if (a.compute_bound) return "compute";
  for (MemoryLevel level : kAllMemoryLevels)
    if (a.binding == display_name(level)) return "mem " + a.binding;
  return a.regime.substr(0, a.regime.find(':'));
}

}  // namespace

const std::vector<TableColumn>& report_table_columns() {
  // Priority: what a narrow terminal keeps longest is where the row stands (time, rate, how
  // close to its bound, and on which roof); the inputs of those figures (bytes, intensity,
  // ridge distance) and the XU roof go first. The regime is cut before the bound goes. The
  // kernel and workload cells (a profiled launch's: its demangled name; its grid, block and
  // index) are cut before `of bound`, time and TFLOP/s go, so that those numbers stay.
  static const std::vector<TableColumn> columns = {
      {"kernel", "kernel", false, 0, 24, 2},
      {"workload", "workload", false, 0, 16, 2},
      {"time", "time", true, 1, 0},
      {"gflop", "GFLOP", true, 8, 0},
      {"tflops", "TFLOP/s", true, 1, 0},
      {"dram-bytes", "DRAM bytes", true, 10, 0},
      {"dram-gbps", "DRAM GB/s", true, 8, 0},
      {"bw-util", "BW util", true, 7, 0},
      {"ai", "AI FLOP/B", true, 9, 0},
      {"ceiling", "ceiling", false, 5, 12, 5},
      {"regime", "regime", false, 3, 14, 4},
      {"ridge", "ridge distance", true, 10, 0},
      {"bound", "bound TFLOP/s", true, 4, 0},
      {"of-bound", "of bound", true, 2, 0},
      {"xu-roof", "XU roof TFLOP/s", true, 11, 0},
      {"try-next", "try next", false, 9, 12, 9},
      {"energy", "J/launch", true, 9, 0},
      {"flop-per-j", "GFLOP/J", true, 9, 0},
      {"stall", "stall", false, 9, 12, 9},
      {"energy-model", "energy model", false, 9, 14, 9},
  };
  return columns;
}

std::string render_table(const Report& report, const TableOptions& options) {
  return render_table(JudgedReport(report), options);
}

std::string render_table(const JudgedReport& judged, const TableOptions& options) {
  const Report& report = judged.report();
  // Rows from several devices or hosts (one table per context), or judged against several GPUs
  // (model --gpu h200,a100: one table per GPU, headed by the spec it judges against): a table
  // per part, in the order of its first row.
  const bool by_origin = !report.origins.empty();
  std::vector<std::vector<std::size_t>> parts;
  std::vector<std::string> part_keys;
  for (std::size_t i = 0; i < report.rows.size(); ++i) {
    const Row& row = report.rows[i];
    const std::string key =
        by_origin ? (row.origin ? std::to_string(*row.origin) : "-") : row.spec_key;
    const auto at = std::find(part_keys.begin(), part_keys.end(), key);
    if (at == part_keys.end()) {
      part_keys.push_back(key);
      parts.push_back({i});
    } else {
      parts[static_cast<std::size_t>(at - part_keys.begin())].push_back(i);
    }
  }
  if (by_origin || parts.size() > 1) {
    std::string out;
    for (const std::vector<std::size_t>& part : parts) {
      if (!out.empty()) out += "\n";
      out += render_table(judged.part(part), options);
    }
    return out;
  }
  std::ostringstream out;
  const std::size_t width = options.max_width;
  // Every line outside the table is wrapped to the width (none without one).
  auto say = [&](const std::string& text) { out << wrap_words(one_line(text), width); };
  const ReportContext& c = report.context;
  // Header: what judged what.
  std::vector<std::string> spec_names;
  for (const GpuSpec& spec : report.specs) {
    const bool judges = std::any_of(report.rows.begin(), report.rows.end(),
                                    [&](const Row& row) { return row.spec_key == spec.key; });
    if (judges || report.rows.empty())
      spec_names.push_back(one_line(spec.name) + " [" + one_line(spec.key) + "]");
  }
  say("cuflash-roofline " + c.command + " — judged against " + join(spec_names, ", ") +
      (c.ceilings == "calibrated" ? " (measured ceilings: `calibrate`)" : ""));
  if (c.device)
    say("measured on " + c.device->name + " (" +
        (c.green_context_sms > 0
             ? std::to_string(c.green_context_sms) + " of its " +
                   std::to_string(c.device->sm_count) + " SMs: a green context (run --sms)"
             : std::to_string(c.device->sm_count) + " SMs") +
        ", CC " + c.device->compute_capability + ")" +
        (c.projection ? " — PROJECTION: measured on this device, judged against another GPU's peaks"
                      : ""));
  else
    say("analytic model only: no GPU was used; time is the roofline floor");
  if (!c.counters.empty()) say("counters: " + c.counters);
  // The FlashAttention convention counts attention workloads; a table with none (a profiled
  // program's kernels) counts every FLOP on the kernel's own pipe, and says so.
  const FlopConvention flops =
      options.flops == FlopConvention::kAlgorithmic && !report.rows.empty() &&
              std::none_of(report.rows.begin(), report.rows.end(), has_workload)
          ? FlopConvention::kPipe
          : options.flops;
  const bool algorithmic = flops == FlopConvention::kAlgorithmic;
  const bool any_decode = std::any_of(report.rows.begin(), report.rows.end(),
                                      [](const Row& row) { return row.workload.decode(); });
  const bool any_prefill = std::any_of(report.rows.begin(), report.rows.end(), [](const Row& row) {
    return has_workload(row) && !row.workload.decode();
  });
  const std::string convention =
      std::string(any_prefill || !any_decode
                      ? "4·B·H·N²·d forward, halved when causal, backward 2.5×"
                      : "") +
      (any_prefill && any_decode ? "; " : "") +
      (any_decode ? "decode: 4·d per query row and key it sees" : "");
  say(algorithmic
          ? "FLOPs: FlashAttention convention (" + convention +
                ") in GFLOP, TFLOP/s, AI, bound and XU roof; of bound = time floor ÷ time = "
                "TFLOP/s ÷ bound (--flops pipe: the FLOPs the kernel's pipe executed)"
          : std::string("FLOPs: executed on the kernel's own pipe (counted, else the model's) in "
                        "GFLOP, TFLOP/s, AI, bound and XU roof; of bound = time floor ÷ time = "
                        "TFLOP/s ÷ bound ") +
                (flops != options.flops
                     ? "(no row is an attention workload, which the FlashAttention convention "
                       "counts)"
                     : "(--flops algorithmic: the FlashAttention convention)"));

  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> short_regimes;  // per row, for a narrow table
  std::vector<std::string> notes;
  std::vector<StatusNote> status_notes;
  bool any_model = false;
  bool any_projected = false;
  bool any_stand_in = false;
  for (const Row& row : report.rows) {
    const RowAnalysis& a = judged.of(row);
    const std::string workload = row_label(row);
    auto mark = [&](Source s) {
      if (s == Source::kModel) any_model = true;
      if (s == Source::kProjected) any_projected = true;
      return s == Source::kModel       ? std::string("*")
             : s == Source::kProjected ? std::string("~")
                                       : std::string();
    };
    if (!a.has_verdict) {
      // The message goes below the table, once per status and message, not into a column.
      std::vector<std::string> cells(kColumnCount, "");
      cells[kKernel] = row.kernel;
      cells[kWorkload] = workload;
      cells[kTime] = std::string(to_string(row.status));
      cells[kRegime] = row.message.empty() ? "-" : "see note";
      short_regimes.push_back(cells[kRegime]);
      rows.push_back(std::move(cells));
      if (row.message.empty()) continue;
      const std::string status(to_string(row.status));
      auto it = std::find_if(status_notes.begin(), status_notes.end(), [&](const StatusNote& n) {
        return n.status == status && n.message == row.message;
      });
      if (it == status_notes.end())
        it = status_notes.insert(status_notes.end(),
                                 {status, row.message, row.kernel + " " + workload, 0});
      ++it->rows;
      continue;
    }
    // One convention for every FLOP figure of the row: the roofs (pipe FLOPs) scaled into it.
    const ViewFlops view = view_flops(row, a, flops);
    any_stand_in = any_stand_in || view.pipe_stand_in;
    const double view_rate = view.flops / a.time_seconds;
    // The view's FLOPs at the time floor: TFLOP/s ÷ this is the time floor ÷ the time.
    const double bound = view.flops / a.time_floor_seconds;
    const bool counted_flops = flops == FlopConvention::kPipe || view.pipe_stand_in;
    // A launch judged on bytes alone has no FLOP figure to print.
    auto flop_cell = [&](std::string text) { return a.bandwidth_only ? std::string("-") : text; };
    const double intensity = a.dram()->intensity * view.scale;
    const double ms = a.time_seconds * 1e3;
    const std::optional<Advice>& advice = judged.advice_of(row);
    short_regimes.push_back(short_regime(a));
    rows.push_back({
        row.kernel,
        workload,
        format_fixed(ms, ms < 1 ? 3 : 2) + " ms" + mark(a.time_source),
        flop_cell(format_fixed(view.flops / 1e9, 2) + (counted_flops ? mark(a.flops_source) : "")),
        flop_cell(format_fixed(view_rate / 1e12, 1) + mark(a.time_source)),
        bytes_text(a.dram()->bytes) + mark(a.dram()->bytes_source),
        format_fixed(a.dram()->achieved_bytes_per_second / 1e9, 0),
        format_fixed(100 * a.dram()->bandwidth_utilisation, 0) + "%",
        flop_cell(format_fixed(intensity, intensity < 10 ? 2 : 0) + mark(a.dram()->bytes_source)),
        a.ceiling ? a.ceiling->label() : "-",
        a.regime,
        flop_cell(describe_ridge_factor(a.ridge_factor)),
        flop_cell(std::isfinite(bound) ? format_fixed(bound / 1e12, 1) : std::string("-")),
        std::isfinite(a.fraction_of_bound) ? format_fixed(100 * a.fraction_of_bound, 0) + "%"
                                           : std::string("-"),
        // The exponential roof in FLOP units for this row's FLOPs per exponential.
        a.exp.present ? format_fixed(a.exp.roof_flops_per_second * view.scale / 1e12, 1) +
                            mark(a.exp.exponentials_source)
                      : std::string("-"),
        advice ? advice->brief() : std::string("-"),
        row.energy ? joules_text(row.energy->joules_per_launch) : std::string("-"),
        row.energy && row.energy->joules_per_launch > 0 && !a.bandwidth_only
            ? format_fixed(view.flops / row.energy->joules_per_launch / 1e9, 1)
            : std::string("-"),
        row.stalls && row.stalls->samples > 0 ? stall_brief(*row.stalls) : std::string("-"),
        a.energy ? energy_model_brief(*a.energy) : std::string("-"),
    });
    if (a.projected) notes.push_back(row.kernel + " " + row_label(row) + ": " + a.projection_note);
  }
  // Too narrow for the regime whole: the table again with it in a word or two, kept when that
  // brings it back.
  const std::vector<std::vector<std::string>>* cells = &rows;
  std::vector<std::vector<std::string>> short_rows;
  const CellDecorator colour = [&](std::size_t column, std::size_t r, const std::string& padded) {
    const std::string& cell = (*cells)[r][column];
    if (column != kRegime || cell.empty() || cell == "-" || cell == "see note") return padded;
    return (cell.rfind("mem", 0) == 0   ? "\033[33m"
            : cell.rfind("exp", 0) == 0 ? "\033[35m"
                                        : "\033[32m") +
           padded + "\033[0m";
  };
  const CellDecorator decorate = options.color ? colour : CellDecorator{};
  // The measured extras only where a row has them (run --energy, --stalls), unless chosen. They
  // are the last columns, so that leaving them out moves no other column's index.
  const auto any_row = [&](auto has) {
    return std::any_of(report.rows.begin(), report.rows.end(), has);
  };
  const bool present[] = {any_row([](const Row& r) { return r.energy.has_value(); }),
                          any_row([](const Row& r) { return r.energy.has_value(); }),
                          any_row([](const Row& r) { return r.stalls.has_value(); }),
                          any_row([&](const Row& r) { return judged.of(r).energy.has_value(); })};
  std::vector<TableColumn> columns;
  std::vector<std::size_t> kept;
  for (std::size_t col = 0; col < kColumnCount; ++col)
    if (col < kEnergy || !options.columns.empty() || present[col - kEnergy]) {
      columns.push_back(report_table_columns()[col]);
      kept.push_back(col);
    }
  if (kept.size() < kColumnCount)
    for (std::vector<std::string>& cells_of_row : rows) {
      std::vector<std::string> kept_cells;
      for (std::size_t col : kept) kept_cells.push_back(std::move(cells_of_row[col]));
      cells_of_row = std::move(kept_cells);
    }
  FittedTable table = fit_table(columns, rows, {width, options.columns}, decorate);
  auto has_regime = [](const FittedTable& t) {
    return std::find(t.shown.begin(), t.shown.end(), kRegime) != t.shown.end();
  };
  if (width > 0 && options.columns.empty() && !has_regime(table)) {
    short_rows = rows;
    for (std::size_t r = 0; r < short_rows.size(); ++r) short_rows[r][kRegime] = short_regimes[r];
    cells = &short_rows;
    FittedTable shorter = fit_table(columns, short_rows, {width, {}}, decorate);
    if (has_regime(shorter))
      table = std::move(shorter);
    else
      cells = &rows;
  }
  out << table.text;
  auto shown = [&](Column column) {
    return std::find(table.shown.begin(), table.shown.end(), column) != table.shown.end();
  };
  out << fit_footer(table, width);
  if (cells == &short_rows)
    say("regime in short: mem LEVEL = memory-bound on that level, compute = compute-bound, "
        "tail N% = tail-bound with the SMs N% busy, exp XU = exp-bound; --wide prints it whole.");
  for (const StatusNote& n : status_notes)
    say("note: " + n.status + " (" + n.first_row +
        (n.rows > 1 ? " and " + std::to_string(n.rows - 1) + " more" : "") + "): " + n.message);
  if (shown(kTryNext))
    say("try next: the lever the numbers point to, and the most it could gain (an upper bound: "
        "`show` and the JSON's analysis.advice say why).");
  if (shown(kRegime) || shown(kRidge) || shown(kXuRoof))
    say("regime and ridge distance: on the roofs of the kernel's own pipe (ratios: the same in "
        "either convention). XU roof: the exponential unit's rate × the row's FLOPs per "
        "exponential.");
  // The energy verdict of each modelled row, under the table that shows its column (at its
  // index among the columns kept).
  const auto energy_at = std::find(kept.begin(), kept.end(), kEnergyModel);
  if (energy_at != kept.end() &&
      std::find(table.shown.begin(), table.shown.end(),
                static_cast<std::size_t>(energy_at - kept.begin())) != table.shown.end()) {
    say("energy model: the dominant cost by the calibrated coefficients (P_static × time + FLOPs "
        "× J/FLOP per pipe + integer instructions × J/instruction + bytes × J/byte per level); "
        "×: modelled ÷ measured joules.");
    // A note every modelled row shares (the work the counter set did not count) is said once.
    std::vector<std::string> row_notes;
    for (const Row& row : report.rows)
      if (const auto& e = judged.of(row).energy) row_notes.push_back(e->note);
    const bool one_note = std::all_of(row_notes.begin(), row_notes.end(),
                                      [&](const std::string& n) { return n == row_notes.front(); });
    for (const Row& row : report.rows)
      if (const auto& e = judged.of(row).energy)
        say("energy: " + row.kernel + " " + row_label(row) + ": " +
            e->verdict.substr(std::string("energy: ").size()) + "; modelled " +
            joules_text(e->model.joules) +
            (std::isfinite(e->measured_joules)
                 ? ", measured " + joules_text(e->measured_joules) + " (×" +
                       format_fixed(e->modelled_vs_measured, 2) + ")"
                 : std::string()) +
            "; " + format_fixed(e->flops_per_joule / 1e9, 1) + " GFLOP/J" +
            (std::isfinite(e->fraction_of_roof)
                 ? ", " + format_fixed(100 * e->fraction_of_roof, 0) + "% of the energy roof"
                 : std::string()) +
            (e->note.empty() || one_note ? std::string() : " (" + e->note + ")"));
    if (one_note && !row_notes.front().empty())
      say("energy model, every row: " + row_notes.front());
  }
  if (any_stand_in)
    say("a launch without an attention workload has no FlashAttention count: its FLOP figures "
        "are its counted FLOPs.");
  if (any_model) say("* model: not measured (analytic model or roofline floor)");
  if (any_projected)
    say("~ projected: counted on the GPU measured, placed on this spec's roofs (docs/model.md, "
        "projection)");
  // Warnings go to stderr (report_warnings); fixed properties are footnotes, once per cause.
  for (const ReportNote& note : report_footnotes(judged)) say("note: " + describe(note));
  for (const std::string& note : notes) say("note: " + note);
  return out.str();
}

}  // namespace roofline
