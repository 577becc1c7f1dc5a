#include "lib/core/domain/metric_catalog.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <initializer_list>
#include <stdexcept>

#include "lib/core/base/errors.hpp"
#include "lib/core/base/text.hpp"

namespace roofline {
namespace {

using Terms = std::vector<MetricTerm>;
constexpr CounterSet kFull = CounterSet::kFull;
using ChipTable = std::map<std::string, Terms, std::less<>>;

// Metrics every chip from sm_80 on names the same way.
ChipTable common_table() {
  const std::string sass = "sm__sass_thread_inst_executed_op_";
  return {
      {quantity::kGpuTime, {{"gpu__time_duration.sum", 1e-9}}},  // ns
      {quantity::kSmClock, {{"sm__cycles_elapsed.avg.per_second", 1}}},
      {quantity::kDramClock, {{"dram__cycles_elapsed.avg.per_second", 1}}},
      {quantity::kL2Clock, {{"lts__cycles_elapsed.avg.per_second", 1}}},
      {quantity::kDramRead, {{"dram__bytes_read.sum", 1}}},
      {quantity::kDramWrite, {{"dram__bytes_write.sum", 1}}},
      {quantity::kL2, {{"lts__t_sectors_srcunit_tex.sum", 32}}},  // 32-byte sectors
      {quantity::kL2Fabric, {{"lts__t_bytes.sum", 1}}},
      // Reductions (RED, TMA's reduce copies) and atomics at L2: no pass of their own in the
      // full set (test_metric_host).
      {quantity::kL2Reduction,
       {{"lts__t_sectors_srcunit_tex_op_red.sum", 32, kFull},
        {"lts__t_sectors_srcunit_tex_op_atom.sum", 32, kFull}}},
      {quantity::kL1, {{"l1tex__t_bytes.sum", 1}}},
      {quantity::kShared, {{"sm__sass_data_bytes_mem_shared.sum", 1, kFull}}},
      // Multi-function unit (MUFU: exp2, rcp, ...): with it the default set needs two passes on
      // GH100 (test_metric_host), so it is in the full set, where it costs no pass.
      {quantity::kXuInstructions, {{"sm__inst_executed_pipe_xu.sum", 1, kFull}}},
      // Thread instructions that are neither FLOPs, nor loads and stores, nor conversions (some
      // run on the XU, counted there): integer arithmetic, bit operations, branches and
      // barriers, shuffles and votes, the uniform datapath's and the rest (op_misc). They ride
      // in the SASS-instrumented pass (no pass of their own: test_metric_host).
      {quantity::kIntInstructions,
       {{sass + "integer_pred_on.sum", 1, kFull},
        {sass + "bit_pred_on.sum", 1, kFull},
        {sass + "control_pred_on.sum", 1, kFull},
        {sass + "inter_thread_communication_pred_on.sum", 1, kFull},
        {sass + "uniform_pred_on.sum", 1, kFull},
        {sass + "misc_pred_on.sum", 1, kFull}}},
      // SASS-instrumented: exact, but the kernels run many times slower in that pass.
      {quantity::kFp32Flops,
       {{sass + "fadd_pred_on.sum", 1, kFull},
        {sass + "fmul_pred_on.sum", 1, kFull},
        {sass + "ffma_pred_on.sum", 2, kFull}}},
      // Packed half2 assumed (2 lanes); compiler-generated HFMA2.MMA moves inflate it.
      {quantity::kFp16Flops,
       {{sass + "hadd_pred_on.sum", 2, kFull},
        {sass + "hmul_pred_on.sum", 2, kFull},
        {sass + "hfma_pred_on.sum", 4, kFull}}},
  };
}

// Shared-memory wavefronts (128-byte data-pipe cycles). The total is the hardware counter of
// every operation (ncu's l1tex__data_pipe_lsu_wavefronts_mem_shared): the SASS-instrumented
// op_* metrics leave out mbarrier and other operations (op_misc), 1.5-10% of flash-v3's
// wavefronts on the H200. Each hardware shared-wavefront metric costs a pass of its own in the
// default set; the total rides in the full set's passes (3 on GA100 and GH100 with the XU
// pipe, test_metric_host). wgmma's operand reads (op_gmma, Hopper) are SASS-instrumented.
const Terms kSharedWavefrontsTotal = {{"l1tex__data_pipe_lsu_wavefronts_mem_shared.sum", 1, kFull}};

// Collection walks counter_quantities(): a quantity with metrics in a chip's table but no
// description there would silently never be collected, so it is a programming error, found
// as the catalogue is built.
void require_described(const ChipTable& table) {
  const auto& described = counter_quantities();
  for (const auto& entry : table) {
    const std::string& id = entry.first;  // a named reference: clang 14 cannot capture a binding
    if (std::none_of(described.begin(), described.end(),
                     [&](const CounterQuantity& q) { return q.id == id; }))
      throw std::logic_error("metric catalogue: quantity " + id +
                             " has metrics but no entry in counter_quantities()");
  }
}

const std::map<std::string, ChipTable, std::less<>>& catalogue() {
  static const auto kCatalogue = [] {
    std::map<std::string, ChipTable, std::less<>> out;
    // GA100 (A100): every tensor instruction is mma.sync; values are FLOPs already.
    ChipTable ga100 = common_table();
    ga100[quantity::kTensorMmaSync] = {
        {"sm__ops_path_tensor_src_fp16_dst_fp32_sparsity_off.sum", 1},
        {"sm__ops_path_tensor_src_fp16_dst_fp16_sparsity_off.sum", 1},
        {"sm__ops_path_tensor_src_bf16_dst_fp32_sparsity_off.sum", 1, kFull},
        {"sm__ops_path_tensor_src_tf32_dst_fp32_sparsity_off.sum", 1, kFull},
    };
    ga100[quantity::kSharedWavefronts] = kSharedWavefrontsTotal;
    ga100[quantity::kTensorBf16] = {
        {"sm__ops_path_tensor_src_bf16_dst_fp32_sparsity_off.sum", 1, kFull}};
    out["GA100"] = ga100;
    // GH100 (H100, H200): mma.sync (HMMA) and wgmma (HGMMA) counted apart.
    ChipTable gh100 = common_table();
    // BF16 is in the default set (training runs in BF16), FP16 with FP16 accumulation (rare in
    // libraries' GEMMs) in the full set: with both in the default set it needs two passes.
    gh100[quantity::kTensorMmaSync] = {
        {"sm__ops_path_tensor_op_hmma_src_fp16_dst_fp32_sparsity_off.sum", 1},
        {"sm__ops_path_tensor_op_hmma_src_fp16_dst_fp16_sparsity_off.sum", 1, kFull},
        {"sm__ops_path_tensor_op_hmma_src_bf16_dst_fp32_sparsity_off.sum", 1},
        {"sm__ops_path_tensor_op_hmma_src_tf32_dst_fp32_sparsity_off.sum", 1, kFull},
    };
    gh100[quantity::kTensorWgmma] = {
        {"sm__ops_path_tensor_op_hgmma_src_fp16_sparsity_off.sum", 1},
        {"sm__ops_path_tensor_op_hgmma_src_bf16_dst_fp32_sparsity_off.sum", 1},
        {"sm__ops_path_tensor_op_hgmma_src_tf32_dst_fp32_sparsity_off.sum", 1, kFull},
    };
    gh100[quantity::kSharedWavefronts] = kSharedWavefrontsTotal;
    gh100[quantity::kTensorBf16] = {
        {"sm__ops_path_tensor_op_hmma_src_bf16_dst_fp32_sparsity_off.sum", 1},
        {"sm__ops_path_tensor_op_hgmma_src_bf16_dst_fp32_sparsity_off.sum", 1},
    };
    gh100[quantity::kSharedWavefrontsGmma] = {
        {"sm__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_gmma.sum", 1, kFull}};
    out["GH100"] = gh100;
    for (const auto& entry : out) require_described(entry.second);
    return out;
  }();
  return kCatalogue;
}

}  // namespace

const std::vector<CounterQuantity>& counter_quantities() {
  static const std::vector<CounterQuantity> kQuantities = {
      {quantity::kGpuTime, "seconds",
       "kernel duration on the GPU, summed over the range's launches"},
      {quantity::kSmClock, "hz", "average SM clock while the range ran"},
      {quantity::kDramClock, "hz", "average DRAM clock while the range ran"},
      {quantity::kL2Clock, "hz", "average L2 clock while the range ran"},
      {quantity::kDramRead, "bytes", "bytes read from device memory"},
      {quantity::kDramWrite, "bytes",
       "bytes written to device memory (writes still dirty in L2 at the end are not counted)"},
      {quantity::kL2, "bytes", "L2 traffic requested by the SMs (32-byte sectors × 32)"},
      {quantity::kL2Fabric, "bytes", "all L2 traffic including the fabric between L2 halves"},
      {quantity::kL2Reduction, "bytes",
       "L2 traffic of reductions and atomics requested by the SMs (RED, ATOM, TMA reduce "
       "copies; 32-byte sectors × 32), part of l2_bytes"},
      {quantity::kL1, "bytes",
       "L1/TEX traffic of global and local accesses (TMA, wgmma bypass it)"},
      {quantity::kShared, "bytes", "shared-memory bytes moved by SASS instructions (exact)"},
      {quantity::kXuInstructions, "instructions",
       "warp instructions on the multi-function unit (XU: MUFU.EX2, RCP, ...); × 32 results"},
      {quantity::kIntInstructions, "instructions",
       "thread instructions of integer arithmetic, bit operations, control (branches, barriers), "
       "shuffles and votes, the uniform datapath and op_misc (predicated on; SASS-instrumented)"},
      {quantity::kSharedWavefronts, "wavefronts",
       "shared-memory data-pipe wavefronts (128 B each) of every operation: loads, stores, "
       "wgmma's operand reads, mbarriers (hardware counter; TMA writes are not LSU wavefronts)"},
      {quantity::kSharedWavefrontsGmma, "wavefronts",
       "shared-memory wavefronts of wgmma operand reads (op_gmma), part of shared_wavefronts"},
      {quantity::kFp32Flops, "flops", "FP32 FLOPs on CUDA cores: FADD + FMUL + 2·FFMA per thread"},
      {quantity::kFp16Flops, "flops",
       "FP16 FLOPs on CUDA cores, assuming packed half2: 2·HADD + 2·HMUL + 4·HFMA (approximate)"},
      {quantity::kTensorMmaSync, "flops",
       "dense tensor FLOPs issued by mma.sync / HMMA (2·M·N·K per instruction), all input types"},
      {quantity::kTensorWgmma, "flops",
       "dense tensor FLOPs issued by wgmma / HGMMA (Hopper), all input types"},
      {quantity::kTensorBf16, "flops",
       "the tensor FLOPs with BF16 inputs, part of the two above: they name a launch's tensor "
       "ceiling BF16 (GA100: full set)"},
  };
  return kQuantities;
}

std::vector<std::string> catalogued_chips() {
  std::vector<std::string> chips;
  for (const auto& [chip, table] : catalogue()) chips.push_back(chip);
  return chips;
}

bool has_catalogue(std::string_view chip) {
  return catalogue().find(chip) != catalogue().end();
}

std::string_view to_string(CounterSet set) {
  return set == CounterSet::kRoofline ? "roofline" : "full";
}

std::vector<MetricTerm> metric_terms(std::string_view chip, std::string_view quantity_id,
                                     CounterSet set) {
  std::vector<MetricTerm> out;
  auto table = catalogue().find(chip);
  if (table == catalogue().end()) return out;
  auto terms = table->second.find(quantity_id);
  if (terms == table->second.end()) return out;
  for (const MetricTerm& term : terms->second)
    if (set == CounterSet::kFull || term.set == CounterSet::kRoofline) out.push_back(term);
  return out;
}

std::vector<std::string> catalogue_metrics(std::string_view chip, CounterSet set) {
  if (!has_catalogue(chip))
    throw InputError("no counter catalogue for chip " + std::string(chip) +
                     "; catalogued: " + join(catalogued_chips(), ", "));
  std::vector<std::string> metrics;
  for (const CounterQuantity& q : counter_quantities())
    for (const MetricTerm& term : metric_terms(chip, q.id, set))
      if (std::find(metrics.begin(), metrics.end(), term.metric) == metrics.end())
        metrics.push_back(term.metric);
  return metrics;
}

std::vector<std::string> catalogue_quantities(std::string_view chip, CounterSet set) {
  std::vector<std::string> out;
  for (const CounterQuantity& q : counter_quantities())
    if (!metric_terms(chip, q.id, set).empty()) out.push_back(q.id);
  return out;
}

namespace {

// "sm__ops_path_tensor_op_hmma_src_fp16_dst_fp16_sparsity_off.sum" -> "FP16 inputs, FP16
// accumulator" (the accumulator named when the metric names it).
std::string tensor_path_text(const std::string& metric) {
  const auto field = [&](const char* key) {
    const std::size_t at = metric.find(key);
    if (at == std::string::npos) return std::string();
    const std::size_t from = at + std::string_view(key).size();
    std::string value = metric.substr(from, metric.find('_', from) - from);
    for (char& c : value) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    return value;
  };
  const std::string src = field("_src_"), dst = field("_dst_");
  std::string text = src.empty() ? metric : src + " inputs";
  if (!dst.empty()) text += ", " + dst + " accumulator";
  return text;
}

}  // namespace

std::vector<std::string> tensor_paths_not_counted(std::string_view chip, CounterSet set) {
  std::vector<std::string> out;
  if (set == CounterSet::kFull || !has_catalogue(chip)) return out;
  for (const auto& [id, instruction] : {std::pair{quantity::kTensorMmaSync, "mma.sync"},
                                        std::pair{quantity::kTensorWgmma, "wgmma"}}) {
    const std::vector<MetricTerm> counted = metric_terms(chip, id, set);
    for (const MetricTerm& term : metric_terms(chip, id, CounterSet::kFull)) {
      const bool in_set = std::any_of(counted.begin(), counted.end(),
                                      [&](const MetricTerm& t) { return t.metric == term.metric; });
      if (!in_set) out.push_back(std::string(instruction) + " " + tensor_path_text(term.metric));
    }
  }
  return out;
}

std::string tensor_paths_note(std::string_view chip, CounterSet set) {
  const std::vector<std::string> missing = tensor_paths_not_counted(chip, set);
  if (missing.empty()) return "";
  std::string text = "; tensor FLOPs not counted in this set: ";
  for (std::size_t i = 0; i < missing.size(); ++i) text += (i ? "; " : "") + missing[i];
  return text + " (--counter-set full counts them)";
}

std::map<std::string, double> combine_metrics(std::string_view chip, CounterSet set,
                                              const std::vector<std::string>& metrics,
                                              const std::vector<double>& values) {
  std::map<std::string, double> out;
  for (const CounterQuantity& q : counter_quantities()) {
    const std::vector<MetricTerm> terms = metric_terms(chip, q.id, set);
    if (terms.empty()) continue;
    double total = 0;
    bool complete = true;
    for (const MetricTerm& term : terms) {
      auto it = std::find(metrics.begin(), metrics.end(), term.metric);
      if (it == metrics.end() ||
          std::isnan(values.at(static_cast<std::size_t>(it - metrics.begin())))) {
        complete = false;
        break;
      }
      total += term.factor * values[static_cast<std::size_t>(it - metrics.begin())];
    }
    if (complete) out[q.id] = total;
  }
  return out;
}

}  // namespace roofline
