// The CSV writer: one line per row, one column per entry of kColumns below, which names each
// column and says how its cell is written, so the header and the cells cannot drift apart.
// Numbers are written with 9 significant digits; NaN and infinity (not measured) as empty cells;
// a row without a workload (a profiled launch) has empty workload cells, and the launch columns
// are empty for the bundled kernels' rows.
#include <array>
#include <cmath>
#include <sstream>

#include "lib/core/base/text.hpp"
#include "lib/core/report/analysis.hpp"
#include "lib/core/report/report_io.hpp"

namespace roofline {
namespace {

std::string csv_escape(const std::string& text) {
  if (text.find_first_of(",\"\n\r") == std::string::npos) return text;
  std::string out = "\"";
  for (char c : text) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

std::string csv_number(double value) {
  if (std::isnan(value) || std::isinf(value)) return "";
  std::ostringstream out;
  out.precision(9);
  out << value;
  return out.str();
}

std::string dims(const std::array<int, 3>& d) {
  return std::to_string(d[0]) + "x" + std::to_string(d[1]) + "x" + std::to_string(d[2]);
}

// What a cell is written from.
struct Cell {
  const Row& row;
  const RowAnalysis& a;
  const ReportContext& context;
  const LevelAnalysis* l2;  // null when the row has no such level
  const LevelAnalysis* l1;
  bool known;  // the row has a workload

  // The workload's `text`, empty for a launch without one.
  std::string workload(std::string text) const { return known ? text : std::string(); }
  // A number of the launch, empty for the bundled kernels' rows.
  template <class F>
  std::string launch(F&& f) const {
    return row.launch ? f(*row.launch) : std::string();
  }
  std::string timing(double (Timing::*stat)() const) const {
    return csv_number(row.timing ? (*row.timing.*stat)() : std::nan(""));
  }
  static std::string level(const LevelAnalysis* l, double LevelAnalysis::*field) {
    return csv_number(l ? l->*field : std::nan(""));
  }
};

struct Column {
  const char* name;
  std::string (*cell)(const Cell&);
};

using C = const Cell&;
const Column kColumns[] = {
    {"kernel", [](C c) { return csv_escape(c.row.kernel); }},
    {"batch", [](C c) { return c.workload(std::to_string(c.row.workload.batch)); }},
    {"heads", [](C c) { return c.workload(std::to_string(c.row.workload.heads)); }},
    {"seq_len", [](C c) { return c.workload(std::to_string(c.row.workload.seq_len)); }},
    {"head_dim", [](C c) { return c.workload(std::to_string(c.row.workload.head_dim)); }},
    {"causal", [](C c) { return c.workload(c.row.workload.causal ? "true" : "false"); }},
    {"pass", [](C c) { return c.workload(std::string(to_string(c.row.workload.pass))); }},
    {"dtype", [](C c) { return c.workload(std::string(to_string(c.row.workload.dtype))); }},
    {"spec", [](C c) { return csv_escape(c.row.spec_key); }},
    {"status", [](C c) { return std::string(to_string(c.row.status)); }},
    {"time_s", [](C c) { return csv_number(c.a.time_seconds); }},
    {"time_source", [](C c) { return std::string(to_string(c.a.time_source)); }},
    {"algorithmic_flops", [](C c) { return csv_number(c.a.algorithmic_flops); }},
    {"flops", [](C c) { return csv_number(c.a.flops); }},
    {"flops_source", [](C c) { return std::string(to_string(c.a.flops_source)); }},
    {"tflops_per_s", [](C c) { return csv_number(c.a.flops_per_second / 1e12); }},
    {"algorithmic_tflops_per_s",
     [](C c) { return csv_number(c.a.algorithmic_flops_per_second / 1e12); }},
    {"ceiling", [](C c) { return c.a.ceiling ? c.a.ceiling->id() : ""; }},
    {"peak_tflops", [](C c) { return csv_number(c.a.peak_flops_per_second / 1e12); }},
    {"measured_sm_clock_mhz", [](C c) { return csv_number(c.a.measured_clock_hz / 1e6); }},
    {"compute_utilisation", [](C c) { return csv_number(c.a.compute_utilisation); }},
    {"dram_bytes", [](C c) { return csv_number(c.a.dram->bytes); }},
    {"dram_bytes_source", [](C c) { return std::string(to_string(c.a.dram->bytes_source)); }},
    {"dram_gbps", [](C c) { return csv_number(c.a.dram->achieved_bytes_per_second / 1e9); }},
    {"dram_bandwidth_utilisation", [](C c) { return csv_number(c.a.dram->bandwidth_utilisation); }},
    {"dram_intensity", [](C c) { return csv_number(c.a.dram->intensity); }},
    {"l2_bytes", [](C c) { return Cell::level(c.l2, &LevelAnalysis::bytes); }},
    {"l2_intensity", [](C c) { return Cell::level(c.l2, &LevelAnalysis::intensity); }},
    {"l1_bytes", [](C c) { return Cell::level(c.l1, &LevelAnalysis::bytes); }},
    {"l1_intensity", [](C c) { return Cell::level(c.l1, &LevelAnalysis::intensity); }},
    {"regime", [](C c) { return csv_escape(c.a.regime); }},
    {"ridge_factor", [](C c) { return csv_number(c.a.ridge_factor); }},
    {"attainable_tflops_per_s",
     [](C c) { return csv_number(c.a.attainable_flops_per_second / 1e12); }},
    {"time_floor_s", [](C c) { return csv_number(c.a.time_floor_seconds); }},
    {"fraction_of_bound", [](C c) { return csv_number(c.a.fraction_of_bound); }},
    {"model_flops", [](C c) { return csv_number(c.row.prediction.model_flops); }},
    {"model_dram_bytes", [](C c) { return csv_number(c.row.prediction.model_dram_bytes); }},
    {"compulsory_dram_bytes",
     [](C c) { return csv_number(c.row.prediction.compulsory_dram_bytes); }},
    {"flops_vs_model", [](C c) { return csv_number(c.a.flops_vs_model); }},
    {"dram_bytes_vs_model", [](C c) { return csv_number(c.a.dram_bytes_vs_model); }},
    {"time_median_s", [](C c) { return c.timing(&Timing::median_seconds); }},
    {"time_min_s", [](C c) { return c.timing(&Timing::min_seconds); }},
    {"time_max_s", [](C c) { return c.timing(&Timing::max_seconds); }},
    {"message", [](C c) { return csv_escape(c.row.message); }},
    {"device", [](C c) { return csv_escape(c.context.device ? c.context.device->name : ""); }},
    {"process_id",
     [](C c) {
       return c.launch([](const KernelLaunch& l) { return std::to_string(l.process_id); });
     }},
    {"launch_index",
     [](C c) { return c.launch([](const KernelLaunch& l) { return std::to_string(l.index); }); }},
    {"grid", [](C c) { return c.launch([](const KernelLaunch& l) { return dims(l.grid); }); }},
    {"block", [](C c) { return c.launch([](const KernelLaunch& l) { return dims(l.block); }); }},
    {"registers_per_thread",
     [](C c) {
       return c.launch(
           [](const KernelLaunch& l) { return std::to_string(l.registers_per_thread); });
     }},
    {"shared_bytes",
     [](C c) {
       return c.launch([](const KernelLaunch& l) {
         return std::to_string(l.static_shared_bytes + l.dynamic_shared_bytes);
       });
     }},
    {"nvtx_range",
     [](C c) { return c.launch([](const KernelLaunch& l) { return csv_escape(l.nvtx_range); }); }},
    {"kernel_signature",
     [](C c) {
       return c.launch([](const KernelLaunch& l) { return csv_escape(l.demangled_name); });
     }},
};

const LevelAnalysis* level_of(const RowAnalysis& a, MemoryLevel wanted) {
  for (const LevelAnalysis& l : a.levels)
    if (l.level == wanted) return &l;
  return nullptr;
}

}  // namespace

const std::vector<std::string>& csv_columns() {
  static const std::vector<std::string> kNames = [] {
    std::vector<std::string> names;
    for (const Column& column : kColumns) names.emplace_back(column.name);
    return names;
  }();
  return kNames;
}

std::string render_csv(const Report& report) {
  std::ostringstream out;
  out << join(csv_columns(), ",") << "\n";
  for (const Row& row : report.rows) {
    const ReportContext& context = report.context_of(row);
    const RowAnalysis a = analyze(row, report);
    const Cell cell{row,
                    a,
                    context,
                    level_of(a, MemoryLevel::kL2),
                    level_of(a, MemoryLevel::kL1),
                    has_workload(row)};
    std::vector<std::string> cells;
    for (const Column& column : kColumns) cells.push_back(column.cell(cell));
    out << join(cells, ",") << "\n";
  }
  return out.str();
}

}  // namespace roofline
