#include "lib/core/metric_catalog.hpp"

#include <algorithm>
#include <cmath>

#include "lib/core/errors.hpp"
#include "lib/core/text.hpp"

namespace roofline {
namespace {

using Terms = std::vector<MetricTerm>;
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
      {quantity::kL1, {{"l1tex__t_bytes.sum", 1}}},
      {quantity::kShared, {{"sm__sass_data_bytes_mem_shared.sum", 1}}},
      {quantity::kFp32Flops,
       {{sass + "fadd_pred_on.sum", 1}, {sass + "fmul_pred_on.sum", 1},
        {sass + "ffma_pred_on.sum", 2}}},
      // Packed half2 assumed (2 lanes); compiler-generated HFMA2.MMA moves inflate it.
      {quantity::kFp16Flops,
       {{sass + "hadd_pred_on.sum", 2}, {sass + "hmul_pred_on.sum", 2},
        {sass + "hfma_pred_on.sum", 4}}},
  };
}

const std::map<std::string, ChipTable, std::less<>>& catalogue() {
  static const auto kCatalogue = [] {
    std::map<std::string, ChipTable, std::less<>> out;
    // GA100 (A100): every tensor instruction is mma.sync; values are FLOPs already.
    ChipTable ga100 = common_table();
    ga100[quantity::kTensorMmaSync] = {
        {"sm__ops_path_tensor_src_fp16_dst_fp32_sparsity_off.sum", 1},
        {"sm__ops_path_tensor_src_fp16_dst_fp16_sparsity_off.sum", 1},
        {"sm__ops_path_tensor_src_bf16_dst_fp32_sparsity_off.sum", 1},
        {"sm__ops_path_tensor_src_tf32_dst_fp32_sparsity_off.sum", 1},
    };
    out["GA100"] = ga100;
    // GH100 (H100, H200): mma.sync (HMMA) and wgmma (HGMMA) counted apart.
    ChipTable gh100 = common_table();
    gh100[quantity::kTensorMmaSync] = {
        {"sm__ops_path_tensor_op_hmma_src_fp16_dst_fp32_sparsity_off.sum", 1},
        {"sm__ops_path_tensor_op_hmma_src_fp16_dst_fp16_sparsity_off.sum", 1},
        {"sm__ops_path_tensor_op_hmma_src_bf16_dst_fp32_sparsity_off.sum", 1},
        {"sm__ops_path_tensor_op_hmma_src_tf32_dst_fp32_sparsity_off.sum", 1},
    };
    gh100[quantity::kTensorWgmma] = {
        {"sm__ops_path_tensor_op_hgmma_src_fp16_sparsity_off.sum", 1},
        {"sm__ops_path_tensor_op_hgmma_src_bf16_dst_fp32_sparsity_off.sum", 1},
        {"sm__ops_path_tensor_op_hgmma_src_tf32_dst_fp32_sparsity_off.sum", 1},
    };
    out["GH100"] = gh100;
    return out;
  }();
  return kCatalogue;
}

}  // namespace

const std::vector<CounterQuantity>& counter_quantities() {
  static const std::vector<CounterQuantity> kQuantities = {
      {quantity::kGpuTime, "seconds", "kernel duration on the GPU, summed over the range's launches"},
      {quantity::kSmClock, "hz", "average SM clock while the range ran"},
      {quantity::kDramClock, "hz", "average DRAM clock while the range ran"},
      {quantity::kL2Clock, "hz", "average L2 clock while the range ran"},
      {quantity::kDramRead, "bytes", "bytes read from device memory"},
      {quantity::kDramWrite, "bytes",
       "bytes written to device memory (writes still dirty in L2 at the end are not counted)"},
      {quantity::kL2, "bytes", "L2 traffic requested by the SMs (32-byte sectors × 32)"},
      {quantity::kL2Fabric, "bytes", "all L2 traffic including the fabric between L2 halves"},
      {quantity::kL1, "bytes", "L1/TEX traffic of global and local accesses (TMA, wgmma bypass it)"},
      {quantity::kShared, "bytes", "shared-memory bytes moved by SASS instructions (exact)"},
      {quantity::kFp32Flops, "flops", "FP32 FLOPs on CUDA cores: FADD + FMUL + 2·FFMA per thread"},
      {quantity::kFp16Flops, "flops",
       "FP16 FLOPs on CUDA cores, assuming packed half2: 2·HADD + 2·HMUL + 4·HFMA (approximate)"},
      {quantity::kTensorMmaSync, "flops",
       "dense tensor FLOPs issued by mma.sync / HMMA (2·M·N·K per instruction), all input types"},
      {quantity::kTensorWgmma, "flops",
       "dense tensor FLOPs issued by wgmma / HGMMA (Hopper), all input types"},
  };
  return kQuantities;
}

const CounterQuantity* find_counter_quantity(std::string_view id) {
  for (const CounterQuantity& q : counter_quantities())
    if (q.id == id) return &q;
  return nullptr;
}

std::vector<std::string> catalogued_chips() {
  std::vector<std::string> chips;
  for (const auto& [chip, table] : catalogue()) chips.push_back(chip);
  return chips;
}

bool has_catalogue(std::string_view chip) { return catalogue().find(chip) != catalogue().end(); }

const std::vector<MetricTerm>& metric_terms(std::string_view chip, std::string_view quantity_id) {
  static const Terms kEmpty;
  auto table = catalogue().find(chip);
  if (table == catalogue().end()) return kEmpty;
  auto terms = table->second.find(quantity_id);
  return terms == table->second.end() ? kEmpty : terms->second;
}

std::vector<std::string> catalogue_metrics(std::string_view chip) {
  if (!has_catalogue(chip))
    throw InputError("no counter catalogue for chip " + std::string(chip) +
                     "; catalogued: " + join(catalogued_chips(), ", "));
  std::vector<std::string> metrics;
  for (const CounterQuantity& q : counter_quantities())
    for (const MetricTerm& term : metric_terms(chip, q.id))
      if (std::find(metrics.begin(), metrics.end(), term.metric) == metrics.end())
        metrics.push_back(term.metric);
  return metrics;
}

std::map<std::string, double> combine_metrics(std::string_view chip,
                                              const std::vector<std::string>& metrics,
                                              const std::vector<double>& values) {
  std::map<std::string, double> out;
  for (const CounterQuantity& q : counter_quantities()) {
    const Terms& terms = metric_terms(chip, q.id);
    if (terms.empty()) continue;
    double total = 0;
    bool complete = true;
    for (const MetricTerm& term : terms) {
      auto it = std::find(metrics.begin(), metrics.end(), term.metric);
      if (it == metrics.end()) {
        complete = false;
        break;
      }
      double value = values.at(static_cast<std::size_t>(it - metrics.begin()));
      if (std::isnan(value)) {
        complete = false;
        break;
      }
      total += term.factor * value;
    }
    if (complete) out[q.id] = total;
  }
  return out;
}

}  // namespace roofline
