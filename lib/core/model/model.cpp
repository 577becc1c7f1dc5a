#include "lib/core/model/model.hpp"

#include <algorithm>
#include <cstdlib>
#include <stdexcept>

#include "kernels/catalog.hpp"
#include "kernels/decode_plan.hpp"
#include "lib/core/base/errors.hpp"
#include "lib/core/base/suggest.hpp"
#include "lib/core/base/text.hpp"
#include "lib/core/model/cache_model.hpp"
#include "lib/core/model/exp_model.hpp"
#include "lib/core/model/model_decode.hpp"
#include "lib/core/model/model_l1.hpp"
#include "lib/core/model/model_prefill_dram.hpp"
#include "lib/core/model/model_terms.hpp"

namespace roofline {
namespace {

// Score elements a flash kernel computes: whole tiles of Bc keys for each tile of Br queries,
// stopping after the diagonal tile under a causal mask. Query rows of the last tile count in
// multiples of `row_granularity`; with `pad_cols`, key tiles count whole past N (what the
// tensor-core kernel executes), else they stop at N. Also returns the K/V rows each query tile
// streams (Σ_i cols_i, never past N) through `kv_rows`.
double flash_score_elements(const Workload& w, int block_q, int block_kv, int row_granularity,
                            bool pad_cols, double* kv_rows) {
  const long long n = w.seq_len;
  double elements = 0;
  double rows_streamed = 0;
  for (long long start = 0; start < n; start += block_q) {
    const long long rows = std::min<long long>(block_q, n - start);
    const long long last_row = start + rows;  // exclusive
    const long long kv_tiles =
        w.causal ? (last_row + block_kv - 1) / block_kv : (n + block_kv - 1) / block_kv;
    const long long cols = std::min<long long>(n, kv_tiles * block_kv);
    const long long computed_rows = std::min<long long>(
        block_q, (rows + row_granularity - 1) / row_granularity * row_granularity);
    const long long computed_cols = pad_cols ? kv_tiles * block_kv : cols;
    elements += static_cast<double>(computed_rows) * static_cast<double>(computed_cols);
    rows_streamed += static_cast<double>(cols);
  }
  const double heads = static_cast<double>(w.batch) * w.heads;
  *kv_rows = rows_streamed * heads;
  return elements * heads;
}

Prediction predict_standard(const Workload& w) {
  Prediction p;
  const double bh = static_cast<double>(w.batch) * w.heads;
  const double n = w.seq_len, d = w.head_dim;
  const double nd = w.tensor_elements() * kBytesPerFp16;  // one [B,H,N,d] FP16 tensor, bytes
  const double nn = bh * n * n * kBytesPerFp16;           // one [B,H,N,N] FP16 matrix, bytes
  const double gemm = 2 * bh * n * n * d;                 // one N×N×d GEMM per head
  if (w.pass == Pass::kForward) {
    add_term(p.flop_terms, p.model_flops, "S = Q·Kᵀ (cuBLAS, full square)", "2·B·H·N²·d", gemm);
    add_term(p.flop_terms, p.model_flops, "softmax", "5·B·H·N² (v0.3.0 analysis §3.1)",
             5 * bh * n * n);
    add_term(p.flop_terms, p.model_flops, "O = P·V (cuBLAS, full square)", "2·B·H·N²·d", gemm);
    add_term(p.byte_terms, p.no_reuse_dram_bytes, "Q, K, V read", "3·B·H·N·d·2 B", 3 * nd);
    add_term(p.byte_terms, p.no_reuse_dram_bytes, "S written, read by softmax", "2·B·H·N²·2 B",
             2 * nn);
    add_term(p.byte_terms, p.no_reuse_dram_bytes, "P written, read by P·V", "2·B·H·N²·2 B", 2 * nn);
    add_term(p.byte_terms, p.no_reuse_dram_bytes, "O written", "B·H·N·d·2 B", nd);
    if (!standard_rows_cached(w))
      add_term(p.byte_terms, p.no_reuse_dram_bytes,
               "S re-read by the streaming softmax (2 more passes)", "2·B·H·N²·2 B", 2 * nn);
    p.compulsory_dram_bytes = 4 * nd;
    p.compulsory_formula = "Q, K, V read once, O written once: 4·B·H·N·d·2 B";
  } else {
    add_term(p.flop_terms, p.model_flops, "dV = Pᵀ·dO, dP = dO·Vᵀ (cuBLAS)", "2·2·B·H·N²·d",
             2 * gemm);
    add_term(p.flop_terms, p.model_flops, "softmax backward", "4·B·H·N²", 4 * bh * n * n);
    add_term(p.flop_terms, p.model_flops, "dQ = dS·K, dK = dSᵀ·Q (cuBLAS)", "2·2·B·H·N²·d",
             2 * gemm);
    add_term(p.byte_terms, p.no_reuse_dram_bytes, "dO read twice; Q, K, V read", "5·B·H·N·d·2 B",
             5 * nd);
    add_term(p.byte_terms, p.no_reuse_dram_bytes, "P read twice (dV GEMM, softmax bwd)",
             "2·B·H·N²·2 B", 2 * nn);
    add_term(p.byte_terms, p.no_reuse_dram_bytes, "dP written and read", "2·B·H·N²·2 B", 2 * nn);
    add_term(p.byte_terms, p.no_reuse_dram_bytes, "dS written, read by dQ and dK GEMMs",
             "3·B·H·N²·2 B", 3 * nn);
    add_term(p.byte_terms, p.no_reuse_dram_bytes, "dQ, dK, dV written", "3·B·H·N·d·2 B", 3 * nd);
    if (!standard_rows_cached(w))
      add_term(p.byte_terms, p.no_reuse_dram_bytes,
               "P and dP re-read by the streaming softmax backward", "2·B·H·N²·2 B", 2 * nn);
    p.compulsory_dram_bytes = 7 * nd;
    p.compulsory_formula =
        "Q, K, V, dO read once, dQ, dK, dV written once: 7·B·H·N·d·2 B (P from the forward is "
        "this kernel's extra input, not compulsory)";
  }
  return p;
}

Prediction predict_flash(const KernelModel& k, const Workload& w) {
  Prediction p;
  const double bh = static_cast<double>(w.batch) * w.heads;
  const double d = w.head_dim;
  const double nd = w.tensor_elements() * kBytesPerFp16;
  const double row_stats = bh * w.seq_len * kBytesPerFp32;  // one FP32 value per query row
  const bool fwd = w.pass == Pass::kForward;
  const TileShape tiles = k.tiles(w.head_dim);
  const int block_q = fwd ? tiles.fwd_block_q : tiles.bwd_block_q;
  const int block_kv = fwd ? tiles.fwd_block_kv : tiles.bwd_block_kv;
  const int granularity = k.computes_padding ? k.fwd_row_block : 1;
  if (fwd) {
    double kv_rows = 0;
    const double scores =
        flash_score_elements(w, block_q, block_kv, granularity, k.computes_padding, &kv_rows);
    add_term(p.flop_terms, p.model_flops, "S = Q·Kᵀ tiles", "2·d·(scores computed)",
             2 * d * scores);
    add_term(p.flop_terms, p.model_flops, "O += P·V tiles", "2·d·(scores computed)",
             2 * d * scores);
    add_term(p.byte_terms, p.no_reuse_dram_bytes, "Q read once", "B·H·N·d·2 B", nd);
    add_term(p.byte_terms, p.no_reuse_dram_bytes, "K, V reloaded per query tile",
             "2·d·2 B·Σ_tiles cols (⌈N/Br⌉·N rows; ≈ half when causal)",
             2 * d * kBytesPerFp16 * kv_rows);
    add_term(p.byte_terms, p.no_reuse_dram_bytes, "O written", "B·H·N·d·2 B", nd);
    add_term(p.byte_terms, p.no_reuse_dram_bytes, "LSE written", "B·H·N·4 B", row_stats);
    p.compulsory_dram_bytes = 4 * nd + row_stats;
    p.compulsory_formula = "Q, K, V read once, O and LSE written once: 4·B·H·N·d·2 B + B·H·N·4 B";
  } else {
    // K/V-outer loop (FlashAttention-2 backward): each key tile streams the query tiles that
    // see it (Q, dO, LSE and D read). dQ is either accumulated in FP32 per key tile (atomics,
    // or flash-v3's bulk reductions) or computed by a second, Q-outer pass that recomputes S
    // and dP.
    double q_rows = 0;
    // Same tile walk with the roles of Q and K/V exchanged; keys count in blocks of
    // bwd_key_block.
    const double scores =
        flash_score_elements(w, block_kv, block_q, k.computes_padding ? k.bwd_key_block : 1,
                             k.computes_padding, &q_rows);
    add_term(p.byte_terms, p.no_reuse_dram_bytes, "preprocess: O, dO read; D written",
             "2·B·H·N·d·2 B + B·H·N·4 B", 2 * nd + row_stats);
    add_term(p.byte_terms, p.no_reuse_dram_bytes, "K, V read once; dK, dV written", "4·B·H·N·d·2 B",
             4 * nd);
    add_term(p.byte_terms, p.no_reuse_dram_bytes, "Q, dO, LSE, D reloaded per key tile",
             "(2·d·2 B + 2·4 B)·Σ_tiles rows",
             (2 * d * kBytesPerFp16 + 2 * kBytesPerFp32) * q_rows);
    if (!k.bwd_separate_dq_pass) {
      // dQ = dS·K uses every key of the tile (all warps), the other products 16-key warp blocks.
      double unused = 0;
      const double dq_scores = flash_score_elements(
          w, block_kv, block_q, k.computes_padding ? block_kv : 1, k.computes_padding, &unused);
      add_term(p.flop_terms, p.model_flops, "recompute S = Q·Kᵀ", "2·d·(scores computed)",
               2 * d * scores);
      add_term(p.flop_terms, p.model_flops, "dV += Pᵀ·dO, dP = dO·Vᵀ", "4·d·(scores computed)",
               4 * d * scores);
      add_term(p.flop_terms, p.model_flops, "dK += dSᵀ·Q", "2·d·(scores computed)", 2 * d * scores);
      add_term(p.flop_terms, p.model_flops, "dQ += dS·K", "2·d·(scores computed, whole key tiles)",
               2 * d * dq_scores);
      add_term(p.byte_terms, p.no_reuse_dram_bytes,
               "dQ accumulated in FP32 per key tile (read + write)", "2·d·4 B·Σ_tiles rows",
               2 * d * kBytesPerFp32 * q_rows);
      add_term(p.byte_terms, p.no_reuse_dram_bytes, "dQ cleared, converted to FP16",
               "B·H·N·d·(4 + 4 + 2) B", w.tensor_elements() * (2 * kBytesPerFp32 + kBytesPerFp16));
    } else {
      double kv_rows = 0;
      const double dq_scores = flash_score_elements(w, block_q, block_kv, 1, false, &kv_rows);
      add_term(p.flop_terms, p.model_flops, "dK/dV pass: S, dP recomputed; dV, dK",
               "8·d·(scores computed)", 8 * d * scores);
      add_term(p.flop_terms, p.model_flops, "dQ pass: S, dP recomputed; dQ = dS·K",
               "6·d·(scores computed)", 6 * d * dq_scores);
      add_term(p.byte_terms, p.no_reuse_dram_bytes, "dQ pass: Q, dO, LSE, D read; dQ written",
               "3·B·H·N·d·2 B + 2·B·H·N·4 B", 3 * nd + 2 * row_stats);
      add_term(p.byte_terms, p.no_reuse_dram_bytes, "dQ pass: K, V reloaded per query tile",
               "2·d·2 B·Σ_tiles cols", 2 * d * kBytesPerFp16 * kv_rows);
    }
    p.compulsory_dram_bytes = 8 * nd + row_stats;
    p.compulsory_formula =
        "Q, K, V, O, dO and LSE read once, dQ, dK, dV written once: 8·B·H·N·d·2 B + B·H·N·4 B";
  }
  return p;
}

TileShape tile_shape(const kernels::KernelTiles& tiles) {
  return {tiles.fwd_block_q,  tiles.fwd_block_kv,    tiles.bwd_block_q,
          tiles.bwd_block_kv, tiles.fwd_ctas_per_sm, tiles.bwd_ctas_per_sm};
}

}  // namespace

const std::vector<KernelModel>& kernel_models() {
  static const std::vector<KernelModel> kModels = [] {
    // Names, summaries and tiles from the one catalogue the kernels dispatch by.
    std::vector<KernelModel> models;
    for (const kernels::KernelInfo& info : kernels::kKernelCatalog) {
      KernelModel model{};
      model.name = std::string(info.name);
      model.summary = std::string(info.summary);
      model.tiles_d32 = tile_shape(info.tiles_d32);
      model.tiles_d64 = tile_shape(info.tiles_d64);
      model.tiles_d128 = tile_shape(info.tiles_d128);
      model.supports_bf16 = info.supports_bf16;
      model.decode_only = info.decode_only;
      models.push_back(std::move(model));
    }
    // What the cache-aware model and the counted FLOPs need, set by name.
    auto named = [&models](std::string_view name) -> KernelModel& {
      for (KernelModel& model : models)
        if (model.name == name) return model;
      throw std::logic_error("kernel catalogue: no " + std::string(name));
    };
    // What the model adds to the catalogue, kernel by kernel.
    KernelModel& standard = named("standard");
    standard.family = KernelFamily::kStandard;
    standard.path = ComputePath::kTensorFp16;
    // cuBLAS (CUDA 13.0) on sm_90 ran these GEMMs as wgmma when N % 8 == 0 and as mma.sync
    // otherwise (unaligned_instruction), at every d: the counters of
    // tests/data/reports/h200_counted_40_workloads.json (odd N) and h200_gate.tar.xz
    // (N = 1024..16384, d = 64). Without wgmma, the tensor ceiling.
    standard.instruction = TensorInstruction::kWgmma;
    standard.unaligned_instruction = TensorInstruction::kMmaSync;
    KernelModel& v1 = named("flash-v1");
    v1.family = KernelFamily::kFlash;
    v1.path = ComputePath::kFp32;  // the v0.3.0 analysis's baseline design
    v1.instruction = TensorInstruction::kNone;
    v1.bwd_separate_dq_pass = true;
    KernelModel& v2 = named("flash-v2");
    v2.family = KernelFamily::kFlash;
    v2.path = ComputePath::kTensorFp16;
    v2.instruction = TensorInstruction::kMmaSync;
    // flash-v3: dQ added in FP32 per key tile by bulk tensor reductions
    // (kernels/flash_v3_bwd.cu).
    KernelModel& v3 = named("flash-v3");
    v3.family = KernelFamily::kFlash;
    v3.path = ComputePath::kTensorFp16;
    v3.instruction = TensorInstruction::kWgmma;
    v3.required_compute_capability = "9.0";
    v3.head_dims = {64, 128};
    v3.head_dim_limit = "its 128-byte swizzled TMA and wgmma tiles need rows of 64 or 128 halves";
    v2.computes_padding = true;
    v2.fwd_row_block = 32;  // 4 warps × 32 query rows
    v2.bwd_key_block = 16;  // 8 warps × 16 keys
    // flash-v3: __launch_bounds__(384, 1) and 160 KB of shared memory (d = 128) forward.
    // flash-v3: TMA reads rows past N as zeros and wgmma computes whole tiles: forward both
    // consumer warpgroups (128 query rows) over whole 128-key tiles; backward each consumer
    // warpgroup's 64 keys over whole query tiles (80 queries at d = 128), dQ over the CTA's
    // 128 keys. Against the wgmma FLOPs counted in tests/data/reports (before the 80-query
    // stages): forward exact, backward 0.94-1.08× (0.6× at N = 1 without a mask, where both
    // warpgroups run on padding); against the 80-query d = 128 backward's, 0.983-1.013 at
    // N 1000-8192, causal or not (H200, docs/results/2026-12-01-h200-flash-v3-causal-80.md).
    v3.computes_padding = true;
    v3.fwd_row_block = 128;
    v3.bwd_key_block = 64;
    // flash-decode: mma.sync over cp.async stages of the cache, sm_80 and newer.
    KernelModel& decode = named("flash-decode");
    decode.family = KernelFamily::kDecode;
    decode.path = ComputePath::kTensorFp16;
    decode.instruction = TensorInstruction::kMmaSync;
    decode.head_dims = {64, 128};
    decode.head_dim_limit = "its tiles are written for rows of 64 or 128 elements";
    decode.has_backward = false;
    decode.computes_padding = true;
    decode.fwd_row_block = kernels::kDecodeRowTile;
    return models;
  }();
  return kModels;
}

const KernelModel& find_kernel_model(std::string_view name) {
  for (const KernelModel& model : kernel_models())
    if (model.name == name) return model;
  std::vector<std::string> names;
  for (const KernelModel& model : kernel_models()) names.push_back(model.name);
  const std::string hint = did_you_mean(name, names);
  throw InputError("unknown kernel \"" + std::string(name) + "\"" +
                   (hint.empty() ? "; known: " : ": " + hint + " (known: ") + known_kernel_names() +
                   (hint.empty() ? "" : ")"));
}

std::string known_kernel_names() {
  std::vector<std::string> names;
  for (const KernelModel& model : kernel_models()) names.push_back(model.name);
  return join(names, ", ");
}

std::string bf16_kernel_names() {
  std::vector<std::string> names;
  for (const KernelModel& model : kernel_models())
    if (model.supports_bf16) names.push_back(model.name);
  return join(names, ", ");
}

double algorithmic_flops(const Workload& w) {
  if (w.decode()) return decode_algorithmic_flops(w);
  const double forward = 4.0 * w.batch * w.heads * static_cast<double>(w.seq_len) * w.seq_len *
                         w.head_dim * (w.causal ? 0.5 : 1.0);
  return w.pass == Pass::kForward ? forward : 2.5 * forward;
}

namespace {

// The spec-free prediction; `sm_count` (0: none) sets a decode kernel's split-KV parts.
Prediction predict_for(const KernelModel& kernel, const Workload& workload, int sm_count) {
  workload.validate();
  if (kernel.decode_only != workload.decode())
    throw InputError(kernel.name + (kernel.decode_only
                                        ? " runs decode workloads only (--q-len)"
                                        : " runs prefill workloads only (no --q-len)"));
  Prediction p;
  if (kernel.family == KernelFamily::kDecode) {
    p = predict_decode(workload, sm_count);
  } else {
    p = kernel.family == KernelFamily::kStandard ? predict_standard(workload)
                                                 : predict_flash(kernel, workload);
    ExpPrediction exps = predict_exponentials(kernel, workload);
    p.model_exponentials = exps.exponentials;
    p.exp_terms = std::move(exps.terms);
  }
  p.algorithmic_flops = algorithmic_flops(workload);
  p.model_dram_bytes = p.no_reuse_dram_bytes;
  p.dram_model = "no reuse (no GPU spec: every stream from DRAM)";
  return p;
}

}  // namespace

Prediction predict(const KernelModel& kernel, const Workload& workload) {
  return predict_for(kernel, workload, 0);
}

std::string unsupported_reason(const KernelModel& kernel, const Workload& workload,
                               std::string_view compute_capability) {
  if (kernel.decode_only && !workload.decode())
    return kernel.name + " runs decode workloads only (give --q-len)";
  if (!kernel.decode_only && workload.decode())
    return kernel.name + " runs prefill workloads only (flash-decode runs --q-len)";
  if (kernel.decode_only && !compute_capability.empty() &&
      std::atoi(std::string(compute_capability).c_str()) < 8)
    return kernel.name + " needs compute capability 8.0 or newer (cp.async, this GPU: " +
           std::string(compute_capability) + ")";
  if (!kernel.required_compute_capability.empty() && !compute_capability.empty() &&
      compute_capability != kernel.required_compute_capability) {
    return kernel.name + " is built for compute capability " + kernel.required_compute_capability +
           " only (this GPU: " + std::string(compute_capability) + ")";
  }
  if (std::find(kernel.head_dims.begin(), kernel.head_dims.end(), workload.head_dim) ==
      kernel.head_dims.end()) {
    return kernel.name + " has no head_dim " + std::to_string(workload.head_dim) + ": " +
           kernel.head_dim_limit;
  }
  if (workload.pass == Pass::kBackward && !kernel.has_backward) {
    return kernel.name + " has no backward pass yet";
  }
  if (workload.dtype == DType::kBf16 && !kernel.supports_bf16) {
    return kernel.name + " runs FP16 only (--dtype bf16: " + bf16_kernel_names() + ")";
  }
  // BF16 arithmetic (and its tensor path) begins with compute capability 8.0: a V100 row would
  // otherwise be judged on the exponential roof alone, with no ceiling for its FLOPs.
  if (workload.dtype == DType::kBf16 && !compute_capability.empty() &&
      std::atoi(std::string(compute_capability).c_str()) < 8) {
    return "BF16 needs compute capability 8.0 or newer (this GPU: " +
           std::string(compute_capability) + ")";
  }
  return {};
}

Prediction predict(const KernelModel& kernel, const Workload& workload, const GpuSpec& spec) {
  // A decode kernel's split-KV parts follow the spec's SM count.
  Prediction p = predict_for(kernel, workload, spec.sm_count);
  const CacheContext cache{static_cast<double>(spec.l2_cache_bytes), spec.sm_count};
  p.model_dram_bytes = 0;
  double writes = 0;
  if (kernel.family == KernelFamily::kDecode)
    cache_aware_decode(workload, spec.sm_count, cache.l2, p, &writes);
  else if (kernel.family == KernelFamily::kStandard)
    cache_aware_standard(workload, cache, p, &writes);
  else
    cache_aware_flash(kernel, workload, cache, p, &writes);
  // A kernel ends with part of what it wrote still dirty in L2 (all of it when its traffic is
  // small): written back later, by whatever evicts it, not while this kernel runs (and the
  // counters of its range do not see it).
  const double retained = l2_retained_writes(writes, p.model_dram_bytes, cache.l2);
  add_term(p.cache_aware_byte_terms, p.model_dram_bytes,
           "outputs still in L2 when the kernel ends (written back after it)",
           "−min(bytes written " + mb_text(writes) +
               ", 0.4·L2)·clamp((1.5 − traffic/L2) ÷ 0.8, 0, 1) (traffic " +
               mb_text(p.model_dram_bytes) + ")",
           -retained);
  if (kernel.family == KernelFamily::kStandard) {
    // TMA comes with wgmma (sm_90 on): a spec that lists a wgmma ceiling has both.
    const bool tma = std::any_of(spec.compute.begin(), spec.compute.end(), [](const auto& c) {
      return c.instruction == TensorInstruction::kWgmma;
    });
    add_standard_l1_bytes(workload, tma, spec.sm_count, p);
  }
  p.dram_model = "cache-aware: " + mb_text(cache.l2) + " L2 and " + std::to_string(cache.sms) +
                 " SMs of " + spec.key;
  return p;
}

const ComputeCeiling* binding_ceiling(const KernelModel& kernel, const GpuSpec& spec,
                                      const Workload& workload) {
  const TensorInstruction instruction = kernel.instruction_for(workload);
  if (instruction != TensorInstruction::kNone) {
    if (const ComputeCeiling* exact = spec.ceiling(kernel.path_for(workload), instruction))
      return exact;
  }
  return spec.ceiling(kernel.path_for(workload));
}

}  // namespace roofline
