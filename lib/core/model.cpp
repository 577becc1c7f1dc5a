#include "lib/core/model.hpp"

#include <algorithm>

#include "lib/core/errors.hpp"
#include "lib/core/text.hpp"

namespace roofline {
namespace {

// Score elements a flash kernel computes: whole tiles of Bc keys for each tile of Br queries,
// stopping after the diagonal tile under a causal mask; padding beyond N is not counted.
// Also returns the K/V rows each query tile streams (Σ_i cols_i) through `kv_rows`.
double flash_score_elements(const Workload& w, int block_q, int block_kv, double* kv_rows) {
  const long long n = w.seq_len;
  double elements = 0;
  double rows_streamed = 0;
  for (long long start = 0; start < n; start += block_q) {
    const long long rows = std::min<long long>(block_q, n - start);
    const long long last_row = start + rows;  // exclusive
    const long long kv_tiles =
        w.causal ? (last_row + block_kv - 1) / block_kv : (n + block_kv - 1) / block_kv;
    const long long cols = std::min<long long>(n, kv_tiles * block_kv);
    elements += static_cast<double>(rows) * static_cast<double>(cols);
    rows_streamed += static_cast<double>(cols);
  }
  const double heads = static_cast<double>(w.batch) * w.heads;
  *kv_rows = rows_streamed * heads;
  return elements * heads;
}

void add(std::vector<ModelTerm>& terms, double& total, std::string name, std::string formula,
         double value) {
  terms.push_back({std::move(name), std::move(formula), value});
  total += value;
}

Prediction predict_standard(const Workload& w) {
  Prediction p;
  const double bh = static_cast<double>(w.batch) * w.heads;
  const double n = w.seq_len, d = w.head_dim;
  const double nd = w.tensor_elements() * kBytesPerFp16;  // one [B,H,N,d] FP16 tensor, bytes
  const double nn = bh * n * n * kBytesPerFp16;           // one [B,H,N,N] FP16 matrix, bytes
  const double gemm = 2 * bh * n * n * d;                 // one N×N×d GEMM per head
  if (w.pass == Pass::kForward) {
    add(p.flop_terms, p.model_flops, "S = Q·Kᵀ (cuBLAS, full square)", "2·B·H·N²·d", gemm);
    add(p.flop_terms, p.model_flops, "softmax", "5·B·H·N² (seed §3.1)", 5 * bh * n * n);
    add(p.flop_terms, p.model_flops, "O = P·V (cuBLAS, full square)", "2·B·H·N²·d", gemm);
    add(p.byte_terms, p.model_dram_bytes, "Q, K, V read", "3·B·H·N·d·2 B", 3 * nd);
    add(p.byte_terms, p.model_dram_bytes, "S written, read by softmax", "2·B·H·N²·2 B", 2 * nn);
    add(p.byte_terms, p.model_dram_bytes, "P written, read by P·V", "2·B·H·N²·2 B", 2 * nn);
    add(p.byte_terms, p.model_dram_bytes, "O written", "B·H·N·d·2 B", nd);
    p.compulsory_dram_bytes = 4 * nd;
  } else {
    add(p.flop_terms, p.model_flops, "dV = Pᵀ·dO, dP = dO·Vᵀ (cuBLAS)", "2·2·B·H·N²·d", 2 * gemm);
    add(p.flop_terms, p.model_flops, "softmax backward", "4·B·H·N²", 4 * bh * n * n);
    add(p.flop_terms, p.model_flops, "dQ = dS·K, dK = dSᵀ·Q (cuBLAS)", "2·2·B·H·N²·d", 2 * gemm);
    add(p.byte_terms, p.model_dram_bytes, "dO read twice; Q, K, V read", "5·B·H·N·d·2 B", 5 * nd);
    add(p.byte_terms, p.model_dram_bytes, "P read twice (dV GEMM, softmax bwd)", "2·B·H·N²·2 B",
        2 * nn);
    add(p.byte_terms, p.model_dram_bytes, "dP written and read", "2·B·H·N²·2 B", 2 * nn);
    add(p.byte_terms, p.model_dram_bytes, "dS written, read by dQ and dK GEMMs", "3·B·H·N²·2 B",
        3 * nn);
    add(p.byte_terms, p.model_dram_bytes, "dQ, dK, dV written", "3·B·H·N·d·2 B", 3 * nd);
    p.compulsory_dram_bytes = 7 * nd;
  }
  return p;
}

Prediction predict_flash(const KernelModel& k, const Workload& w) {
  Prediction p;
  const double bh = static_cast<double>(w.batch) * w.heads;
  const double n = w.seq_len, d = w.head_dim;
  const double nd = w.tensor_elements() * kBytesPerFp16;
  const double row_stats = bh * n * kBytesPerFp32;  // one FP32 value per query row
  const bool fwd = w.pass == Pass::kForward;
  const TileShape& tiles = k.tiles(w.head_dim);
  const int block_q = fwd ? tiles.fwd_block_q : tiles.bwd_block_q;
  const int block_kv = fwd ? tiles.fwd_block_kv : tiles.bwd_block_kv;
  if (fwd) {
    double kv_rows = 0;
    const double scores = flash_score_elements(w, block_q, block_kv, &kv_rows);
    add(p.flop_terms, p.model_flops, "S = Q·Kᵀ tiles", "2·d·(scores computed)", 2 * d * scores);
    add(p.flop_terms, p.model_flops, "O += P·V tiles", "2·d·(scores computed)", 2 * d * scores);
    add(p.byte_terms, p.model_dram_bytes, "Q read once", "B·H·N·d·2 B", nd);
    add(p.byte_terms, p.model_dram_bytes, "K, V reloaded per query tile",
        "2·d·2 B·Σ_tiles cols (⌈N/Br⌉·N rows; ≈ half when causal)",
        2 * d * kBytesPerFp16 * kv_rows);
    add(p.byte_terms, p.model_dram_bytes, "O written", "B·H·N·d·2 B", nd);
    add(p.byte_terms, p.model_dram_bytes, "LSE written", "B·H·N·4 B", row_stats);
    p.compulsory_dram_bytes = 4 * nd + row_stats;
  } else {
    // K/V-outer loop (FlashAttention-2 backward): each key tile streams the query tiles that
    // see it (Q, dO, LSE and D read). dQ is either accumulated in FP32 per key tile (atomics)
    // or computed by a second, Q-outer pass that recomputes S and dP.
    Workload transposed = w;  // same tile walk with the roles of Q and K/V exchanged
    double q_rows = 0;
    const double scores = flash_score_elements(transposed, block_kv, block_q, &q_rows);
    add(p.byte_terms, p.model_dram_bytes, "preprocess: O, dO read; D written",
        "2·B·H·N·d·2 B + B·H·N·4 B", 2 * nd + row_stats);
    add(p.byte_terms, p.model_dram_bytes, "K, V read once; dK, dV written", "4·B·H·N·d·2 B",
        4 * nd);
    add(p.byte_terms, p.model_dram_bytes, "Q, dO, LSE, D reloaded per key tile",
        "(2·d·2 B + 2·4 B)·Σ_tiles rows", (2 * d * kBytesPerFp16 + 2 * kBytesPerFp32) * q_rows);
    if (!k.bwd_separate_dq_pass) {
      add(p.flop_terms, p.model_flops, "recompute S = Q·Kᵀ", "2·d·(scores computed)",
          2 * d * scores);
      add(p.flop_terms, p.model_flops, "dV += Pᵀ·dO, dP = dO·Vᵀ", "4·d·(scores computed)",
          4 * d * scores);
      add(p.flop_terms, p.model_flops, "dQ += dS·K, dK += dSᵀ·Q", "4·d·(scores computed)",
          4 * d * scores);
      add(p.byte_terms, p.model_dram_bytes, "dQ accumulated in FP32 per key tile (read + write)",
          "2·d·4 B·Σ_tiles rows", 2 * d * kBytesPerFp32 * q_rows);
      add(p.byte_terms, p.model_dram_bytes, "dQ cleared, converted to FP16",
          "B·H·N·d·(4 + 4 + 2) B", w.tensor_elements() * (2 * kBytesPerFp32 + kBytesPerFp16));
    } else {
      double kv_rows = 0;
      const double dq_scores = flash_score_elements(w, block_q, block_kv, &kv_rows);
      add(p.flop_terms, p.model_flops, "dK/dV pass: S, dP recomputed; dV, dK",
          "8·d·(scores computed)", 8 * d * scores);
      add(p.flop_terms, p.model_flops, "dQ pass: S, dP recomputed; dQ = dS·K",
          "6·d·(scores computed)", 6 * d * dq_scores);
      add(p.byte_terms, p.model_dram_bytes, "dQ pass: Q, dO, LSE, D read; dQ written",
          "3·B·H·N·d·2 B + 2·B·H·N·4 B", 3 * nd + 2 * row_stats);
      add(p.byte_terms, p.model_dram_bytes, "dQ pass: K, V reloaded per query tile",
          "2·d·2 B·Σ_tiles cols", 2 * d * kBytesPerFp16 * kv_rows);
    }
    p.compulsory_dram_bytes = 7 * nd;
  }
  return p;
}

}  // namespace

const std::vector<KernelModel>& kernel_models() {
  static const std::vector<KernelModel> kModels = {
      {"standard",
       KernelFamily::kStandard,
       "unfused: cuBLAS GEMMs and a row softmax, S and P materialised in DRAM",
       ComputePath::kTensorFp16,
       TensorInstruction::kNone,
       {},
       {},
       {}},
      {"flash-v1",
       KernelFamily::kFlash,
       "tiled online softmax on CUDA cores (FP32), the seed's baseline design",
       ComputePath::kFp32,
       TensorInstruction::kNone,
       {64, 64, 64, 64},
       {64, 64, 64, 64},
       {64, 64, 64, 64},
       /*bwd_separate_dq_pass=*/true},
      {"flash-v2",
       KernelFamily::kFlash,
       "tensor cores (mma.sync + ldmatrix), cp.async double buffering, registers for S/P/O",
       ComputePath::kTensorFp16,
       TensorInstruction::kMmaSync,
       {128, 64, 64, 128},
       {128, 64, 64, 128},
       {128, 32, 32, 128}},
  };
  return kModels;
}

const KernelModel& find_kernel_model(std::string_view name) {
  for (const KernelModel& model : kernel_models())
    if (model.name == name) return model;
  throw InputError("unknown kernel \"" + std::string(name) + "\"; known: " + known_kernel_names());
}

std::string known_kernel_names() {
  std::vector<std::string> names;
  for (const KernelModel& model : kernel_models()) names.push_back(model.name);
  return join(names, ", ");
}

double algorithmic_flops(const Workload& w) {
  const double forward = 4.0 * w.batch * w.heads * static_cast<double>(w.seq_len) * w.seq_len *
                         w.head_dim * (w.causal ? 0.5 : 1.0);
  return w.pass == Pass::kForward ? forward : 2.5 * forward;
}

Prediction predict(const KernelModel& kernel, const Workload& workload) {
  workload.validate();
  Prediction p = kernel.family == KernelFamily::kStandard ? predict_standard(workload)
                                                          : predict_flash(kernel, workload);
  p.algorithmic_flops = algorithmic_flops(workload);
  return p;
}

std::string unsupported_reason(const KernelModel& kernel, const Workload& workload,
                               std::string_view compute_capability) {
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
  return {};
}

const ComputeCeiling* binding_ceiling(const KernelModel& kernel, const GpuSpec& spec) {
  if (kernel.instruction != TensorInstruction::kNone) {
    if (const ComputeCeiling* exact = spec.ceiling(kernel.path, kernel.instruction)) return exact;
  }
  return spec.ceiling(kernel.path);
}

}  // namespace roofline
