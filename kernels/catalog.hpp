// The bundled kernels, written once: the name users type and reports list, a one-line summary,
// whether the kernel runs on the tensor pipe, and its tiles per head dimension (register limits
// narrow some tiles at d = 128). Plain C++ with no CUDA header, so that both sides read the same
// table: kernels/registry.cpp dispatches by these names (kernel_catalog(), attention.hpp), and
// the analytic model (lib/core/model/model.cpp) builds its KernelModel of each kernel from its
// entry.
#pragma once

#include <array>
#include <string_view>

namespace roofline::kernels {

// Tile sizes the analytic model needs: rows of Q per CTA step and rows of K/V per inner step,
// per pass (0 for the standard kernel: no tiling). They must be the kernel files' own tiles.
// And the CTAs of the pass's main kernel resident on one SM of an H100/H200 (65,536 registers,
// 228 KB of shared memory), from ptxas's register count (-Xptxas -v) and the kernel's shared
// memory: the tail roof's slots, and the tiles sharing L2 in the cache-aware model.
struct KernelTiles {
  int fwd_block_q = 0;      // Br of the forward pass
  int fwd_block_kv = 0;     // Bc of the forward pass
  int bwd_block_q = 0;      // Br of the backward pass
  int bwd_block_kv = 0;     // Bc of the backward pass
  int fwd_ctas_per_sm = 1;  // the forward kernel
  int bwd_ctas_per_sm = 1;  // the backward kernel that owns the key tiles (dK, dV)
};

struct KernelInfo {
  std::string_view name;     // "standard", "flash-v1", "flash-v2", "flash-v3", "flash-decode"
  std::string_view summary;  // one line for `--help` and reports
  bool uses_tensor_cores;    // mma.sync or wgmma on the tensor pipe (or cuBLAS)
  bool supports_bf16;        // runs BF16 tensors as well as FP16 (attention.hpp's DType)
  KernelTiles tiles_d32;
  KernelTiles tiles_d64;
  KernelTiles tiles_d128;
  // Runs decode shapes only (q_len new tokens against a KV cache: decode_plan.hpp); the other
  // kernels run prefill shapes only.
  bool decode_only;

  constexpr const KernelTiles& tiles(int head_dim) const {
    return head_dim <= 32 ? tiles_d32 : head_dim <= 64 ? tiles_d64 : tiles_d128;
  }
};

// All bundled kernels, in the order reports list them.
inline constexpr std::array<KernelInfo, 5> kKernelCatalog = {{
    {"standard",
     "unfused: cuBLAS Q*K^T, a row-softmax kernel, cuBLAS P*V; S and P live in device memory",
     true,
     true,
     {},
     {},
     {},
     false},
    // flash-v1 (__launch_bounds__(256, 1)): its forward uses 91-105 registers at d = 32 and 64
    // (two CTAs' worth of the register file) and 44 or 68 KB of shared memory: two CTAs per SM;
    // at d = 128, 117 KB: one. Its dK/dV kernel: 119 registers and 71 KB at d = 32 (two),
    // 137-167 registers at d = 64 and 128 (one).
    {"flash-v1",
     "fused tiles staged through shared memory, online softmax, FP32 CUDA-core arithmetic",
     false,
     false,
     {64, 64, 64, 64, 2, 2},
     {64, 64, 64, 64, 2, 1},
     {64, 64, 64, 64, 1, 1},
     false},
    // flash-v2 narrows two tiles at d = 128 to stay within 255 registers (flash_v2_fwd.cu,
    // flash_v2_bwd.cu); two forward CTAs per SM at d = 64 and 128, three at d = 32
    // (kMinBlocksPerSm), one backward (8 warps at up to 255 registers).
    {"flash-v2",
     "FlashAttention-2 on tensor cores: mma.sync m16n8k16, ldmatrix, cp.async double buffering",
     true,
     true,
     {128, 64, 64, 128, 3, 1},
     {128, 64, 64, 128, 2, 1},
     {128, 32, 32, 128, 2, 1},
     false},
    // flash-v3 runs on sm_90 only (built as sm_90a), d = 64 and 128: forward 128 query rows per
    // CTA (two consumer warpgroups of 64 rows), 128 keys per K/V stage (flash_v3_fwd.cu);
    // backward 128 keys per CTA, 64-query tiles (each consumer warpgroup's half of a 128-query
    // stage at d = 64), 80-query ones at d = 128 (flash_v3_bwd.cu, v3_bwd_block_q). The d = 32
    // tiles only keep the model's arithmetic defined for `model` rows, which say `unsupported`.
    {"flash-v3",
     "Hopper: wgmma from shared memory, TMA on mbarrier pipelines, warp-specialised",
     true,
     true,
     {128, 128, 64, 128},
     {128, 128, 64, 128},
     {128, 128, 80, 128},
     false},
    // flash-decode: decode shapes only (q_len 1-16 new tokens, GQA, a contiguous or paged KV
    // cache, split-KV): forward tiles are kDecodeRowsPerCta query rows by kDecodeKeysPerTile keys
    // (decode_plan.hpp); no backward. d = 64 and 128.
    {"flash-decode",
     "decode: new tokens against a KV cache (GQA, paged, split-KV), mma.sync, TMA or cp.async "
     "stages",
     true,
     true,
     {64, 64, 0, 0},
     {64, 64, 0, 0},
     {64, 64, 0, 0},
     true},
}};

// The entry named `name`; nullptr when no kernel has that name.
constexpr const KernelInfo* find_in_catalog(std::string_view name) {
  for (const KernelInfo& info : kKernelCatalog)
    if (info.name == name) return &info;
  return nullptr;
}

// Each kernel file checks its own tiles against the table with these (static_assert), so that
// the model's tiles cannot drift from the code's: true when kernel `name`'s forward (backward)
// tiles at `head_dim` are `block_q` rows of Q by `block_kv` rows of K/V.
constexpr bool forward_tiles_are(std::string_view name, int head_dim, int block_q, int block_kv) {
  const KernelInfo* info = find_in_catalog(name);
  return info != nullptr && info->tiles(head_dim).fwd_block_q == block_q &&
         info->tiles(head_dim).fwd_block_kv == block_kv;
}
constexpr bool backward_tiles_are(std::string_view name, int head_dim, int block_q, int block_kv) {
  const KernelInfo* info = find_in_catalog(name);
  return info != nullptr && info->tiles(head_dim).bwd_block_q == block_q &&
         info->tiles(head_dim).bwd_block_kv == block_kv;
}

}  // namespace roofline::kernels
