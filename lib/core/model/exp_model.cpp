#include "lib/core/model/exp_model.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "lib/core/base/text.hpp"

namespace roofline {
namespace {

long long ceil_div(long long a, long long b) {
  return (a + b - 1) / b;
}

// flash-v3 backward's query stage (V3BwdConfig::kBlockQ in kernels/hopper/v3_bwd_config.cuh):
// two of the tiles' 64-query halves at d = 64, the tiles' Br (80) at d = 128.
int v3_bwd_stage(const TileShape& tiles, int head_dim) {
  return head_dim == 64 ? 2 * tiles.bwd_block_q : tiles.bwd_block_q;
}

// How a flash kernel walks its tiles, as its source does. A CTA owns `outer` rows (query rows
// forward, keys backward) and runs them as units of `unit` rows (a warp or a warpgroup), each
// unit over the CTA's inner tiles of `inner` columns.
struct TileWalk {
  bool forward = true;  // outer = queries, inner = key tiles up to the CTA's diagonal
  int outer = 0;
  int unit = 0;
  int inner = 0;
  bool unit_skips_past_n = false;  // a unit whose first row lies past N does no work
  bool unit_skips_causal = false;  // a unit wholly past the diagonal of a tile skips it
  double rescale_per_row = 0;      // forward: rescale exp2 per row and key tile
  double reciprocal_per_row = 0;   // forward: 1/ℓ per row, once
};

struct WalkCount {
  double unit_tiles_rows = 0;  // Σ over active (unit, inner tile) of unit rows
  double units_rows = 0;       // Σ over units of unit rows (each once)
};

// Per head.
WalkCount walk(const TileWalk& t, long long n, bool causal) {
  WalkCount c;
  const long long total_inner = ceil_div(n, t.inner);
  for (long long o0 = 0; o0 < n; o0 += t.outer) {
    // Inner tiles of this CTA: forward, key tiles up to the CTA's last row (causal); backward,
    // query tiles from the one holding the CTA's first key (causal) to the end.
    const long long first = t.forward || !causal ? 0 : o0 / t.inner;
    const long long last = t.forward && causal ? ceil_div(std::min(n, o0 + t.outer), t.inner)
                                               : total_inner;  // exclusive
    for (long long u0 = o0; u0 < o0 + t.outer; u0 += t.unit) {
      c.units_rows += t.unit;
      if (t.unit_skips_past_n && u0 >= n) continue;
      long long tiles = last - first;
      if (causal && t.unit_skips_causal) {
        if (t.forward)  // key tile kv0 is used while kv0 <= the unit's last row
          tiles = std::min(last, (u0 + t.unit - 1) / t.inner + 1) - first;
        else  // query tile q0 is used while the unit's first key <= its last query
          tiles = last - std::max(first, u0 / t.inner);
      }
      c.unit_tiles_rows += static_cast<double>(std::max(0LL, tiles)) * t.unit;
    }
  }
  return c;
}

void add(ExpPrediction& p, std::string name, std::string formula, double value) {
  p.terms.push_back({std::move(name), std::move(formula), value});
  p.exponentials += value;
}

void add_walk(ExpPrediction& p, const TileWalk& t, const Workload& w, const std::string& what) {
  const double heads = static_cast<double>(w.batch) * w.heads;
  const WalkCount c = walk(t, w.seq_len, w.causal);
  const std::string tile = std::to_string(t.unit) + "-row " + (t.forward ? "query" : "key") +
                           " blocks × " + std::to_string(t.inner) + "-" +
                           (t.forward ? "key" : "query") + " tiles";
  add(p, what, "exp2 per score computed (" + tile + ")", heads * c.unit_tiles_rows * t.inner);
  if (t.rescale_per_row > 0)
    add(p, "online-softmax rescale exp2(m_old − m_new)",
        format_fixed(t.rescale_per_row, 0) + " threads per row × rows × key tiles computed",
        heads * c.unit_tiles_rows * t.rescale_per_row);
  if (t.reciprocal_per_row > 0)
    add(p, "1/ℓ at the end (MUFU.RCP)", format_fixed(t.reciprocal_per_row, 0) + " per row",
        heads * c.units_rows * t.reciprocal_per_row);
}

// The standard kernel's row softmax (kernels/standard_attention.cu): rows of N % 8 == 0 up to
// 32768 are cached in registers, threads × vectors × 8 elements per row, every one through
// __expf (masked ones are −inf); others stream, with an exp per valid element in the sum pass
// and again in the write pass. A causal row also finds its query index, row % N, and the SASS
// of that integer division (rows below 2^32) issues three instructions on the XU pipe per
// thread: I2F.U32.RP, MUFU.RCP and F2I.U32.TRUNC (cuobjdump -sass of the softmax kernels, CUDA
// 13.0, sm_90); the counters count them with the exponentials.
void add_standard(ExpPrediction& p, const Workload& w) {
  if (w.pass == Pass::kBackward) {
    p.terms.push_back({"softmax backward reads P", "0", 0});
    return;
  }
  const double rows = static_cast<double>(w.batch) * w.heads * w.seq_len;
  const long long n = w.seq_len;
  if (n % 8 == 0 && n <= 32768) {
    // softmax launch table: (max n, threads per row, vectors of 8 per thread)
    struct Shape {
      long long n;
      int threads;
      int vecs;
    };
    constexpr Shape kShapes[] = {{256, 32, 1},   {512, 32, 2},   {1024, 32, 4},   {2048, 32, 8},
                                 {4096, 128, 4}, {8192, 256, 4}, {16384, 256, 8}, {32768, 512, 8}};
    const Shape* shape = &kShapes[0];
    for (const Shape& s : kShapes)
      if (n <= s.n) {
        shape = &s;
        break;
      }
    const double capacity = static_cast<double>(shape->threads) * shape->vecs * 8;
    add(p, "softmax: __expf per cached element",
        "B·H·N·" + format_fixed(capacity, 0) + " (the row's registers, masked included)",
        rows * capacity);
    add(p, "softmax: 1/Σ per thread (MUFU.RCP)",
        "B·H·N·" + std::to_string(shape->threads) + " threads per row", rows * shape->threads);
    if (w.causal)
      add(p, "causal: the row's query index, row % N (I2F, MUFU.RCP, F2I per thread)",
          "3·B·H·N·" + std::to_string(shape->threads), 3 * rows * shape->threads);
    return;
  }
  const double valid = w.causal ? static_cast<double>(n + 1) / 2 : static_cast<double>(n);
  add(p, "softmax (streaming): __expf in the sum pass and the write pass",
      w.causal ? "2·B·H·N·(N+1)/2" : "2·B·H·N²", 2 * rows * valid);
  add(p, "softmax: 1/Σ per thread (MUFU.RCP)", "B·H·N·256", rows * 256);
  if (w.causal)
    add(p, "causal: the row's query index, row % N (I2F, MUFU.RCP, F2I per thread)", "3·B·H·N·256",
        3 * rows * 256);
}

}  // namespace

ExpPrediction predict_exponentials(const KernelModel& kernel, const Workload& w) {
  ExpPrediction p;
  if (kernel.family == KernelFamily::kStandard) {
    add_standard(p, w);
    return p;
  }
  const TileShape tiles = kernel.tiles(w.head_dim);
  const bool fwd = w.pass == Pass::kForward;
  TileWalk t;
  t.forward = fwd;
  t.outer = fwd ? tiles.fwd_block_q : tiles.bwd_block_kv;
  t.inner = fwd ? tiles.fwd_block_kv : tiles.bwd_block_q;
  if (kernel.name == "flash-v1") {
    // 16 × 16 threads over 64 × 64 tiles, 4 × 4 per thread: 16 threads share a row; no
    // block-level skipping beyond whole tiles (flash_v1.cu).
    t.unit = t.outer;
    if (fwd) {
      t.rescale_per_row = 16;
      t.reciprocal_per_row = 16;
      add_walk(p, t, w, "P = exp(S − m) per score");
    } else {
      add_walk(p, t, w, "dK/dV kernel: P = exp(S − LSE) recomputed");
      TileWalk dq = t;  // the dQ kernel walks query tiles over key tiles, as the forward
      dq.forward = true;
      dq.outer = tiles.bwd_block_q;
      dq.inner = tiles.bwd_block_kv;
      dq.unit = dq.outer;
      add_walk(p, dq, w, "dQ kernel: P = exp(S − LSE) recomputed again");
    }
    return p;
  }
  if (kernel.name == "flash-v3") {
    // Forward: two consumer warpgroups of 64 rows, both over every key tile of the CTA (rows
    // past N are TMA zeros, still computed); backward: two warpgroups of 64 keys, each skipping
    // query tiles wholly before its keys under a causal mask (flash_v3_fwd.cu, flash_v3_bwd.cu).
    t.unit = fwd ? t.outer / 2 : kernel.bwd_key_block;
    t.unit_skips_causal = !fwd;
    // The backward walks query stages (V3BwdConfig::kBlockQ): 128 queries at d = 64, where
    // the tiles' Br (64) is each consumer warpgroup's half of a stage for dQ; 80 at d = 128.
    // Keys and queries past N are computed up to the stage and the CTA's 128 keys.
    if (!fwd) t.inner = v3_bwd_stage(tiles, w.head_dim);
  } else {
    // flash-v2: 4 warps of 32 query rows forward, 8 warps of 16 keys backward; a warp past N or
    // wholly past the diagonal of a tile skips it (flash_v2_fwd.cu, flash_v2_bwd.cu).
    t.unit = fwd ? kernel.fwd_row_block : kernel.bwd_key_block;
    t.unit_skips_past_n = true;
    t.unit_skips_causal = true;
  }
  t.unit = std::max(1, t.unit);
  if (fwd) {
    // Each row's statistics live in a quad of 4 lanes (mma and wgmma accumulator layouts).
    t.rescale_per_row = 4;
    t.reciprocal_per_row = 4;
  }
  add_walk(p, t, w, fwd ? "P = exp2(S − m) per score" : "P = exp2(S − LSE) recomputed");
  if (kernel.name == "flash-v3" && !fwd) {
    // Not exponentials: the integer divisions of its prepare and dQ-convert kernels, three XU
    // instructions each (I2F, MUFU.RCP, F2I; SASS of flash_v3_bwd.cu, CUDA 13.0, sm_90), counted
    // in the same range as the main kernel's, the same in FP16 and BF16 (ncu per kernel on the
    // H200, 2026-12-02: 38,400 and 7,680 warp instructions at B1 H16 N1536 d128). The prepare
    // kernel runs d/8 threads per padded row, one division each (the row's head); the dQ
    // conversion, at d = 128, 256 threads per 80-query stage, one division each; at d = 64, two
    // per 8-element vector (its row and head).
    const double heads = static_cast<double>(w.batch) * w.heads;
    const int block_q = std::max(1, v3_bwd_stage(tiles, w.head_dim));
    const double padded = std::ceil(static_cast<double>(w.seq_len) / block_q) * block_q;
    add(p, "prepare kernel: a division per thread (3 XU instructions)", "3·B·H·N_pad·d/8",
        3 * heads * padded * w.head_dim / 8);
    if (w.head_dim == 128)
      add(p, "dQ conversion: a division per thread (3 XU instructions)",
          "3·256·B·H·N_pad/" + std::to_string(block_q), 3 * 256 * heads * padded / block_q);
    else
      add(p, "dQ conversion: two divisions per 8-element vector (6 XU instructions)", "6·B·H·N·d/8",
          6 * heads * w.seq_len * w.head_dim / 8);
  }
  return p;
}

}  // namespace roofline
