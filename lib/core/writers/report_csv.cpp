// The CSV writer: one line per row, one column per entry of kColumns below, which names each
// column, says what it holds and how its cell is written, so the header, the cells and the
// column reference in docs/columns.md (render_csv_column_reference) cannot drift apart.
// Numbers are written with 9 significant digits; NaN and infinity (not measured) as empty cells;
// a row without a workload (a profiled launch) has empty workload cells, and the launch columns
// are empty for the bundled kernels' rows.
#include <array>
#include <cmath>
#include <sstream>

#include "lib/core/base/text.hpp"
#include "lib/core/verdict/advice.hpp"
#include "lib/core/verdict/analysis.hpp"
#include "lib/core/writers/report_writers.hpp"

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

// What a cell is written from.
struct Cell {
  const Row& row;
  const RowAnalysis& a;
  const ReportContext& context;
  const std::optional<Advice>& advice;
  const LevelAnalysis* l2;  // null when the row has no such level
  const LevelAnalysis* l1;
  bool known;  // the row has a workload

  // The workload's `text`, empty for a launch without one.
  std::string workload(std::string text) const { return known ? text : std::string(); }
  // A decode workload's field, empty for prefill rows and launches without a workload.
  std::string decode(long long value) const {
    return known && row.workload.decode() ? std::to_string(value) : std::string();
  }
  // A number of the launch, empty for the bundled kernels' rows.
  template <class F>
  std::string launch(F&& f) const {
    return row.launch ? f(*row.launch) : std::string();
  }
  // The joules of the energy model's terms that `pick` chooses; empty without a model or such
  // a term.
  template <class F>
  std::string energy_joules(F&& pick) const {
    if (!a.energy) return "";
    double joules = 0;
    bool any = false;
    for (const EnergyTerm& t : a.energy->model.terms)
      if (pick(t)) {
        joules += t.joules;
        any = true;
      }
    return any ? csv_number(joules) : std::string();
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
  const char* meaning;  // one line of the column reference, docs/columns.md
  std::string (*cell)(const Cell&);
};

using C = const Cell&;
const Column kColumns[] = {
    {"kernel",
     "kernel name: a bundled kernel (`flash-v2`), or a profiled launch's demangled name without "
     "template arguments and parameters",
     [](C c) { return csv_escape(c.row.kernel); }},
    {"batch", "workload batch B (empty for a profiled launch without a workload)",
     [](C c) { return c.workload(std::to_string(c.row.workload.batch)); }},
    {"heads", "workload heads H",
     [](C c) { return c.workload(std::to_string(c.row.workload.heads)); }},
    {"seq_len", "workload sequence length N",
     [](C c) { return c.workload(std::to_string(c.row.workload.seq_len)); }},
    {"head_dim", "workload head dimension d",
     [](C c) { return c.workload(std::to_string(c.row.workload.head_dim)); }},
    {"causal", "`true` for a causal mask",
     [](C c) { return c.workload(c.row.workload.causal ? "true" : "false"); }},
    {"pass", "`fwd` or `bwd`",
     [](C c) { return c.workload(std::string(to_string(c.row.workload.pass))); }},
    {"dtype", "element type of the inputs and outputs: `fp16` or `bf16`",
     [](C c) { return c.workload(std::string(to_string(c.row.workload.dtype))); }},
    {"spec", "key of the GPU spec the row is judged against (`h200-sxm`)",
     [](C c) { return csv_escape(c.row.spec_key); }},
    {"status", "`ok`, `incorrect`, `too_large`, `counters_unavailable` or `error`",
     [](C c) { return std::string(to_string(c.row.status)); }},
    {"time_s", "kernel time in seconds: the median measured time, or the model's time floor",
     [](C c) { return csv_number(c.a.time_seconds); }},
    {"time_source", "where `time_s` comes from: `measured`, `model` or `projected`",
     [](C c) { return std::string(to_string(c.a.time_source)); }},
    {"algorithmic_flops",
     "FLOPs in the FlashAttention convention (4·B·H·N²·d forward, halved when causal, 2.5× "
     "backward)",
     [](C c) { return csv_number(c.a.algorithmic_flops); }},
    {"flops",
     "roofline FLOPs: the FLOPs on the binding pipe, counted when counters ran, else the model's",
     [](C c) { return csv_number(c.a.flops); }},
    {"flops_source", "where `flops` comes from: `measured` or `model`",
     [](C c) { return std::string(to_string(c.a.flops_source)); }},
    {"tflops_per_s", "`flops` ÷ `time_s`, in 10¹² FLOP/s",
     [](C c) { return csv_number(c.a.flops_per_second / 1e12); }},
    {"algorithmic_tflops_per_s",
     "`algorithmic_flops` ÷ `time_s`, in 10¹² FLOP/s (compare with PyTorch and papers)",
     [](C c) { return csv_number(c.a.algorithmic_flops_per_second / 1e12); }},
    {"ceiling", "id of the compute ceiling the row is judged against (the pipe the kernel used)",
     [](C c) { return c.a.ceiling ? c.a.ceiling->id() : ""; }},
    {"peak_tflops", "that ceiling's peak at the spec's clock, in 10¹² FLOP/s",
     [](C c) { return csv_number(c.a.peak_flops_per_second / 1e12); }},
    {"measured_sm_clock_mhz",
     "SM clock measured during the counted ranges, in MHz; without counters, the median "
     "sampled while the launches were timed (empty when neither was measured)",
     [](C c) { return csv_number(c.a.measured_clock_hz / 1e6); }},
    {"compute_utilisation", "`tflops_per_s` ÷ `peak_tflops` (a fraction, not a percentage)",
     [](C c) { return csv_number(c.a.compute_utilisation); }},
    {"dram_bytes", "DRAM bytes read and written: counted, else the cache-aware model's",
     [](C c) { return csv_number(c.a.dram()->bytes); }},
    {"dram_bytes_source", "where `dram_bytes` comes from: `measured`, `model` or `projected`",
     [](C c) { return std::string(to_string(c.a.dram()->bytes_source)); }},
    {"dram_gbps", "`dram_bytes` ÷ `time_s`, in 10⁹ B/s",
     [](C c) { return csv_number(c.a.dram()->achieved_bytes_per_second / 1e9); }},
    {"dram_bandwidth_utilisation", "`dram_gbps` ÷ the spec's DRAM bandwidth (a fraction)",
     [](C c) { return csv_number(c.a.dram()->bandwidth_utilisation); }},
    {"dram_intensity", "`flops` ÷ `dram_bytes`, in FLOP/byte",
     [](C c) { return csv_number(c.a.dram()->intensity); }},
    {"l2_bytes", "L2 bytes the SMs asked for (empty without an L2 level)",
     [](C c) { return Cell::level(c.l2, &LevelAnalysis::bytes); }},
    {"l2_intensity", "`flops` ÷ `l2_bytes`, in FLOP/byte",
     [](C c) { return Cell::level(c.l2, &LevelAnalysis::intensity); }},
    {"l1_bytes", "L1 bytes: global and local accesses through L1TEX (empty without an L1 level)",
     [](C c) { return Cell::level(c.l1, &LevelAnalysis::bytes); }},
    {"l1_intensity", "`flops` ÷ `l1_bytes`, in FLOP/byte",
     [](C c) { return Cell::level(c.l1, &LevelAnalysis::intensity); }},
    {"regime",
     "`compute-bound (CEILING)` or `memory-bound (LEVEL)`: the roof that binds at the row's "
     "intensities",
     [](C c) { return csv_escape(c.a.regime); }},
    {"ridge_factor", "`dram_intensity` ÷ the DRAM ridge point (above 1: right of the ridge)",
     [](C c) { return csv_number(c.a.ridge_factor); }},
    {"attainable_tflops_per_s",
     "the bound: min(ceiling, intensity × bandwidth) over the levels, in 10¹² FLOP/s",
     [](C c) { return csv_number(c.a.attainable_flops_per_second / 1e12); }},
    {"time_floor_s",
     "the roofline floor in seconds: max(`flops` ÷ peak, bytes ÷ bandwidth over the levels)",
     [](C c) { return csv_number(c.a.time_floor_seconds); }},
    {"fraction_of_bound", "`time_floor_s` ÷ `time_s` (a fraction)",
     [](C c) { return csv_number(c.a.fraction_of_bound); }},
    {"tail_efficiency",
     "the tail effect: the share of the chip's peak the grid can keep busy (empty: no grid known)",
     [](C c) { return c.a.tail ? csv_number(c.a.tail->efficiency) : std::string(); }},
    {"tail_roof_tflops_per_s", "the compute ceiling × `tail_efficiency`, TFLOP/s",
     [](C c) { return csv_number(c.a.tail_roof_flops_per_second / 1e12); }},
    {"waves", "CTAs ÷ (SMs × CTAs resident per SM), rounded up (empty: occupancy unknown)",
     [](C c) {
       return c.a.tail && c.a.tail->waves > 0 ? std::to_string(c.a.tail->waves) : std::string();
     }},
    {"lever",
     "what to try next: more CTAs, fusion, reuse, tensor cores, wgmma, on-chip reuse, fewer exp, "
     "bandwidth, at roof or latency",
     [](C c) { return c.advice ? std::string(to_string(c.advice->lever)) : std::string(); }},
    {"estimated_speedup",
     "the row's time ÷ its floor with the lever pulled: an upper bound on the gain",
     [](C c) { return c.advice ? csv_number(c.advice->estimated_speedup) : std::string(); }},
    {"model_flops", "the analytic model's FLOPs on the kernel's pipe",
     [](C c) { return csv_number(c.row.prediction.model_flops); }},
    {"model_dram_bytes", "the cache-aware model's DRAM bytes for this spec",
     [](C c) { return csv_number(c.row.prediction.model_dram_bytes); }},
    {"compulsory_dram_bytes", "each input read once and each output written once, in bytes",
     [](C c) { return csv_number(c.row.prediction.compulsory_dram_bytes); }},
    {"flops_vs_model", "counted FLOPs ÷ `model_flops` (empty when not counted)",
     [](C c) { return csv_number(c.a.flops_vs_model); }},
    {"dram_bytes_vs_model", "counted DRAM bytes ÷ `model_dram_bytes` (empty when not counted)",
     [](C c) { return csv_number(c.a.dram_bytes_vs_model); }},
    {"time_median_s", "median of the timing samples, in seconds (empty without samples)",
     [](C c) { return c.timing(&Timing::median_seconds); }},
    {"time_min_s", "fastest timing sample, in seconds",
     [](C c) { return c.timing(&Timing::min_seconds); }},
    {"time_max_s", "slowest timing sample, in seconds",
     [](C c) { return c.timing(&Timing::max_seconds); }},
    {"energy_j", "energy per launch in joules (`run --energy`; empty when not measured)",
     [](C c) { return csv_number(c.row.energy ? c.row.energy->joules_per_launch : std::nan("")); }},
    {"power_w", "mean board power over the energy window, in watts",
     [](C c) { return csv_number(c.row.energy ? c.row.energy->watts : std::nan("")); }},
    {"flops_per_j", "`flops` ÷ `energy_j`: FLOPs per joule",
     [](C c) {
       return csv_number(c.row.energy && c.row.energy->joules_per_launch > 0
                             ? c.a.flops / c.row.energy->joules_per_launch
                             : std::nan(""));
     }},
    {"dram_bytes_per_j", "`dram_bytes` ÷ `energy_j`: DRAM bytes per joule",
     [](C c) {
       return csv_number(c.row.energy && c.row.energy->joules_per_launch > 0
                             ? c.a.dram()->bytes / c.row.energy->joules_per_launch
                             : std::nan(""));
     }},
    {"stall_reason",
     "the dominant warp stall reason (`run --stalls`, `profile --stalls`; ncu's name, "
     "`selected` left out)",
     [](C c) { return c.row.stalls ? dominant_stall(*c.row.stalls) : std::string(); }},
    {"stall_share", "its share of the launch's warp samples (a fraction)",
     [](C c) {
       return csv_number(c.row.stalls && c.row.stalls->samples > 0
                             ? stall_share(*c.row.stalls, dominant_stall(*c.row.stalls))
                             : std::nan(""));
     }},
    {"stall_samples", "warp samples of the launch (empty when not sampled)",
     [](C c) { return c.row.stalls ? std::to_string(c.row.stalls->samples) : std::string(); }},
    {"message", "why a row is not `ok`, and notes on how it was judged",
     [](C c) { return csv_escape(c.row.message); }},
    {"device", "name of the GPU the row was measured on (empty for `model` rows)",
     [](C c) { return csv_escape(c.context.device ? c.context.device->name : ""); }},
    {"process_id", "profiled launches: the process that launched the kernel",
     [](C c) {
       return c.launch([](const KernelLaunch& l) { return std::to_string(l.process_id); });
     }},
    {"launch_index", "profiled launches: the launch's index among the program's launches",
     [](C c) { return c.launch([](const KernelLaunch& l) { return std::to_string(l.index); }); }},
    {"grid", "profiled launches: grid size, `XxYxZ`",
     [](C c) { return c.launch([](const KernelLaunch& l) { return dims_text(l.grid); }); }},
    {"block", "profiled launches: block size, `XxYxZ`",
     [](C c) { return c.launch([](const KernelLaunch& l) { return dims_text(l.block); }); }},
    {"registers_per_thread", "profiled launches: registers per thread",
     [](C c) {
       return c.launch(
           [](const KernelLaunch& l) { return std::to_string(l.registers_per_thread); });
     }},
    {"shared_bytes", "profiled launches: static plus dynamic shared memory per block, in bytes",
     [](C c) {
       return c.launch([](const KernelLaunch& l) {
         return std::to_string(l.static_shared_bytes + l.dynamic_shared_bytes);
       });
     }},
    {"nvtx_range", "profiled launches: the NVTX ranges open on the launching thread",
     [](C c) { return c.launch([](const KernelLaunch& l) { return csv_escape(l.nvtx_range); }); }},
    {"kernel_signature", "profiled launches: the full demangled name",
     [](C c) {
       return c.launch([](const KernelLaunch& l) { return csv_escape(l.demangled_name); });
     }},
    // The exponential roof (analysis_exp.hpp); appended so that earlier columns keep their place.
    {"exponentials",
     "exponentials (MUFU.EX2): counted XU instructions × 32 under the full set, else the model's",
     [](C c) { return csv_number(c.a.exp.exponentials); }},
    {"exponentials_source", "measured or model",
     [](C c) {
       return c.a.exp.present ? std::string(to_string(c.a.exp.exponentials_source)) : "";
     }},
    {"model_exponentials", "the model's exponentials for this kernel, mask and pass",
     [](C c) { return csv_number(c.row.prediction.model_exponentials); }},
    {"exponentials_vs_model", "counted ÷ model exponentials (empty when not counted)",
     [](C c) { return csv_number(c.a.exp.exponentials_vs_model); }},
    {"exp_roof_tflops_per_s",
     "the exponential roof in FLOP units: the XU rate × this row's FLOPs per exponential, TFLOP/s",
     [](C c) { return csv_number(c.a.exp.roof_flops_per_second / 1e12); }},
    {"exp_time_floor_s", "exponentials ÷ the XU rate, in seconds",
     [](C c) { return csv_number(c.a.exp.time_floor_seconds); }},
    {"exp_utilisation", "exponentials per second ÷ the XU rate (a fraction)",
     [](C c) { return csv_number(c.a.exp.utilisation); }},
    // Decode workloads' fields last, so that earlier columns keep their places.
    {"q_len", "decode workloads: new query tokens per sequence (empty for prefill)",
     [](C c) { return c.decode(c.row.workload.q_len); }},
    {"kv_heads", "decode workloads: key/value heads (GQA: `heads` is a multiple)",
     [](C c) { return c.decode(c.row.workload.key_heads()); }},
    {"page_size", "decode workloads: tokens a page of the KV cache (0: contiguous)",
     [](C c) { return c.decode(c.row.workload.page_size); }},
    {"kv_splits", "decode workloads: split-KV parts per sequence (0: chosen for the GPU)",
     [](C c) { return c.decode(c.row.workload.kv_splits); }},
    {"kv_tokens",
     "decode workloads: cached tokens over all sequences (`batch`·`seq_len` unless the lengths "
     "are ragged)",
     [](C c) { return c.decode(static_cast<long long>(c.row.workload.total_kv_len())); }},
    // The energy model (analysis_energy.hpp), last so that earlier columns keep their places:
    // empty for a row without counters or without energy coefficients for its GPU.
    {"energy_model_j",
     "modelled energy per launch in joules: P_static × time + FLOPs × J/FLOP per pipe + integer "
     "instructions × J/instruction + bytes × J/byte per level (`--calibration` from `calibrate "
     "--energy`)",
     [](C c) { return csv_number(c.a.energy ? c.a.energy->model.joules : std::nan("")); }},
    {"energy_static_j", "its static term: P_static × time, in joules",
     [](C c) {
       return c.energy_joules(
           [](const EnergyTerm& t) { return t.kind == EnergyTermKind::kStatic; });
     }},
    {"energy_tensor_j", "its tensor pipes' term (mma.sync and wgmma), in joules",
     [](C c) {
       return c.energy_joules([](const EnergyTerm& t) {
         return t.kind == EnergyTermKind::kPipe && t.id.rfind("tensor", 0) == 0;
       });
     }},
    {"energy_fp32_j", "its FP32 pipe's term, in joules (empty without FP32 FLOPs counted)",
     [](C c) { return c.energy_joules([](const EnergyTerm& t) { return t.id == "fp32"; }); }},
    {"energy_fp16_j", "its FP16 CUDA-core pipe's term, in joules",
     [](C c) {
       return c.energy_joules([](const EnergyTerm& t) { return t.id == "fp16_cuda_core"; });
     }},
    {"energy_xu_j", "its exponential unit's term (exp2 results), in joules",
     [](C c) {
       return c.energy_joules([](const EnergyTerm& t) { return t.kind == EnergyTermKind::kExp; });
     }},
    {"energy_int_j",
     "its integer and control instructions' term (thread instructions × J/instruction), in "
     "joules (empty without the full counter set)",
     [](C c) {
       return c.energy_joules(
           [](const EnergyTerm& t) { return t.kind == EnergyTermKind::kInstructions; });
     }},
    {"energy_dram_j", "its DRAM term (the DRAM bytes × J/byte of DRAM), in joules",
     [](C c) { return c.energy_joules([](const EnergyTerm& t) { return t.id == "dram"; }); }},
    {"energy_l2_j", "its L2 term ((L2 − DRAM bytes) × J/byte of L2), in joules",
     [](C c) { return c.energy_joules([](const EnergyTerm& t) { return t.id == "l2"; }); }},
    {"energy_l1_j", "its L1 term ((L1 − L2 bytes) × J/byte of L1/shared), in joules",
     [](C c) { return c.energy_joules([](const EnergyTerm& t) { return t.id == "l1"; }); }},
    {"energy_dominant", "the term with the most joules: `static`, a pipe, `XU`, `DRAM`, `L2`, `L1`",
     [](C c) { return c.a.energy ? csv_escape(c.a.energy->dominant) : std::string(); }},
    {"energy_dominant_share", "its share of the modelled joules (a fraction)",
     [](C c) { return csv_number(c.a.energy ? c.a.energy->dominant_share : std::nan("")); }},
    {"energy_model_vs_measured",
     "`energy_model_j` ÷ `energy_j` (empty unless the energy was measured with `run --energy`)",
     [](C c) { return csv_number(c.a.energy ? c.a.energy->modelled_vs_measured : std::nan("")); }},
    {"energy_flops_per_j", "`flops` per joule: ÷ `energy_j` when measured, else ÷ `energy_model_j`",
     [](C c) { return csv_number(c.a.energy ? c.a.energy->flops_per_joule : std::nan("")); }},
    {"energy_roof_flops_per_j",
     "the energy roof at the row's DRAM intensity on its pipe, FLOPs per joule",
     [](C c) { return csv_number(c.a.energy ? c.a.energy->roof_flops_per_joule : std::nan("")); }},
    {"energy_of_roof", "`energy_flops_per_j` ÷ `energy_roof_flops_per_j` (a fraction)",
     [](C c) { return csv_number(c.a.energy ? c.a.energy->fraction_of_roof : std::nan("")); }},
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

std::string render_csv_column_reference() {
  std::ostringstream out;
  out << "| column | what it holds |\n| --- | --- |\n";
  for (const Column& column : kColumns)
    out << "| `" << column.name << "` | " << column.meaning << " |\n";
  return out.str();
}

std::string render_csv(const Report& report) {
  return render_csv(JudgedReport(report));
}

std::string render_csv(const JudgedReport& judged) {
  const Report& report = judged.report();
  std::ostringstream out;
  out << join(csv_columns(), ",") << "\n";
  for (const Row& row : report.rows) {
    const ReportContext& context = report.context_of(row);
    const RowAnalysis& a = judged.of(row);
    const std::optional<Advice>& advice = judged.advice_of(row);
    const Cell cell{row,
                    a,
                    context,
                    advice,
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
