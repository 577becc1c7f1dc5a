// The analytic model of each bundled kernel family, term by term, after the CuFlash-Attn v0.3.0
// roofline analysis (its sections 3 and 4), counted in bytes (2 per FP16 element) and FLOPs
// (an FMA is 2).
//
// Three FLOP counts are kept apart:
//   - algorithmic: the FlashAttention papers' convention, 4·B·H·N²·d forward, halved when
//     causal, backward 2.5× forward. What users compare TFLOP/s with.
//   - model: what this kernel family actually computes (standard attention's cuBLAS GEMMs
//     compute the whole N×N square even under a causal mask; flash kernels compute whole
//     diagonal tiles; the v0.3.0 analysis's 5·N² softmax term).
//   - measured (not here): what the counters saw, in lib/gpu.
// DRAM bytes, three ways:
//   - no reuse: the v0.3.0 analysis's formulas, every tensor streamed from DRAM each time the
//     algorithm reads it (K/V once per query tile for flash); an upper bound.
//   - cache-aware: the same streams given the L2 capacity and SM count of the GPU the kernel is
//     judged for (cache_model.hpp): which re-reads L2 serves. What `model` and
//     `run --no-counters` judge with, when a spec is given.
//   - compulsory: each input of the kernel read once, each output written once; a lower bound.
// L1 bytes (what the counters' `l1tex__t_bytes` sees: global and local accesses through L1TEX,
// in 32-byte sectors; not shared memory, TMA or wgmma operand reads): for standard attention,
// whose row kernels and mma.sync GEMMs stream N×N matrices through L1 (model_l1.cpp). The flash
// kernels' L1 traffic is their global loads and stores (the no-reuse DRAM terms), far from any
// L1 roof; the model leaves it out for them.
#pragma once

#include <string>
#include <vector>

#include "lib/core/domain/gpu_spec.hpp"
#include "lib/core/domain/workload.hpp"

namespace roofline {

// kDecode: flash-decode, decode workloads only (model_decode.hpp).
enum class KernelFamily { kStandard, kFlash, kDecode };

// Rows of Q per CTA step (Br) and of K/V per inner step (Bc), per pass, and the pass's CTAs
// resident per SM (on sm_90: how many tiles share L2 at a time in the cache-aware model, and the
// tail roof's slots).
struct TileShape {
  int fwd_block_q = 0;
  int fwd_block_kv = 0;
  int bwd_block_q = 0;
  int bwd_block_kv = 0;
  int fwd_ctas_per_sm = 1;
  int bwd_ctas_per_sm = 1;
};

// A bundled kernel as the model sees it. Name, summary and tiles come from the kernels' own
// catalogue (kernels/catalog.hpp, plain C++); the rest is the model's.
struct KernelModel {
  std::string name;  // "standard", "flash-v1", "flash-v2", "flash-v3"
  KernelFamily family;
  std::string summary;
  ComputePath path;               // the pipe doing most of the work (for FP16: path_for)
  TensorInstruction instruction;  // kNone: the best tensor instruction the chip has (cuBLAS)
  TileShape tiles_d32;
  TileShape tiles_d64;
  TileShape tiles_d128;
  // Backward computes dQ in a second pass over the key tiles (recomputing S and dP) instead of
  // accumulating it with atomics: 14·d FLOPs per score instead of 10·d.
  bool bwd_separate_dq_pass = false;
  // Where the kernel runs; rows outside this are `unsupported` (unsupported_reason below).
  std::string required_compute_capability = "";  // "" for any GPU; "9.0": built for sm_90a alone
  std::vector<int> head_dims = {32, 64, 128};
  std::string head_dim_limit = "";  // why other head dims are missing (one clause)
  bool has_backward = true;
  bool decode_only = false;   // runs decode workloads (q_len >= 1) only; the others prefill only
  bool supports_bf16 = true;  // from the catalogue: BF16 workloads as well as FP16
  // The tensor-core kernels compute whole key tiles past N (rows past N read as zeros) and
  // whole blocks of rows: forward, query rows in blocks of `fwd_row_block`; backward, keys in
  // blocks of `bwd_key_block` (dQ = dS·K over the whole key tile). The FLOPs the counters see
  // at small N.
  bool computes_padding = false;
  int fwd_row_block = 1;
  int bwd_key_block = 1;
  // cuBLAS: wgmma (operands by TMA) only when every row stride of the GEMMs is a multiple of
  // 16 bytes (N % 8 == 0: S, P, dP and dS have N halves per row); otherwise mma.sync with
  // element-wise loads and stores (`unaligned_instruction`; kNone: `instruction` always).
  TensorInstruction unaligned_instruction = TensorInstruction::kNone;

  // The path for this workload's dtype: a tensor-FP16 kernel fed BF16 runs on tensor BF16.
  ComputePath path_for(const Workload& workload) const {
    return path == ComputePath::kTensorFp16 && workload.dtype == DType::kBf16
               ? ComputePath::kTensorBf16
               : path;
  }

  TensorInstruction instruction_for(const Workload& workload) const {
    return workload.seq_len % 8 != 0 && unaligned_instruction != TensorInstruction::kNone
               ? unaligned_instruction
               : instruction;
  }

  const TileShape& tiles(int head_dim) const {
    return head_dim <= 32 ? tiles_d32 : head_dim <= 64 ? tiles_d64 : tiles_d128;
  }
};

const std::vector<KernelModel>& kernel_models();
// Throws InputError naming the known kernels.
const KernelModel& find_kernel_model(std::string_view name);
std::string known_kernel_names();  // "standard, flash-v1, flash-v2, flash-v3"
std::string bf16_kernel_names();   // the kernels with supports_bf16: "standard, flash-v2, ..."

struct ModelTerm {
  std::string name;     // "K, V reloaded per query tile"
  std::string formula;  // "2·B·H·d·2 B·Σ_i cols_i"
  double value;         // FLOPs or bytes
};

struct Prediction {
  double algorithmic_flops = 0;
  double model_flops = 0;
  // The model's DRAM estimate: cache-aware when predicted for a spec, else the no-reuse bound.
  double model_dram_bytes = 0;
  std::string dram_model;  // which of the two, and the cache it assumed
  double no_reuse_dram_bytes = 0;
  double compulsory_dram_bytes = 0;
  std::string compulsory_formula;
  std::vector<ModelTerm> flop_terms;
  std::vector<ModelTerm> byte_terms;              // no-reuse terms
  std::vector<ModelTerm> cache_aware_byte_terms;  // empty without a spec
  // L1 bytes (0 and no terms where the model does not predict them: see the header comment).
  double model_l1_bytes = 0;
  std::vector<ModelTerm> l1_byte_terms;
  // Exponentials (MUFU results per thread) the kernel's softmax issues (exp_model.hpp).
  double model_exponentials = 0;
  std::vector<ModelTerm> exp_terms;
};

// Without a spec: DRAM bytes are the no-reuse bound.
Prediction predict(const KernelModel& kernel, const Workload& workload);
// With the spec of the GPU the kernel is judged for: cache-aware DRAM bytes (its L2 capacity
// and SM count; a decode kernel's split-KV parts for that SM count).
Prediction predict(const KernelModel& kernel, const Workload& workload, const GpuSpec& spec);

// Empty when `kernel` runs `workload` on a GPU of compute capability `compute_capability`
// ("9.0"; empty when unknown, which checks the shape alone), else one sentence saying why not.
std::string unsupported_reason(const KernelModel& kernel, const Workload& workload,
                               std::string_view compute_capability);

// FlashAttention convention alone (no kernel needed).
double algorithmic_flops(const Workload& workload);

// The ceiling a kernel is judged against on a spec for a workload: its path, with its tensor
// instruction where the spec distinguishes them. nullptr when the spec has no ceiling for the
// path.
const ComputeCeiling* binding_ceiling(const KernelModel& kernel, const GpuSpec& spec,
                                      const Workload& workload);

}  // namespace roofline
