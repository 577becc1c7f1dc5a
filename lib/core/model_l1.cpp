#include "lib/core/model_l1.hpp"

#include <algorithm>
#include <numeric>
#include <string>

#include "lib/core/text.hpp"

namespace roofline {
namespace {

constexpr double kSectorBytes = 32;

// L1 bytes per FP16 element a CTA of cuBLAS's element-wise (align1) CUTLASS sm75 kernels loads,
// from ncu's per-kernel l1tex__t_bytes on the H200 (scripts/device_check.sh l1probe; NOTES.md):
// 16 B (half a sector) for an operand whose rows are 16-byte aligned (the N×d ones), the same
// in the tensorop and the wmma kernels, at four shapes and three tile sizes; more for the N×N
// operand, whose rows of N halves start at any 2-byte offset.
constexpr double kAlignedOperandBytes = 16;
constexpr double kTensorOpOddRowsKBytes = 20;  // N×N operand contiguous along k (P·V, dS·K)
constexpr double kTensorOpOddRowsNBytes = 18;  // contiguous along N (Pᵀ·dO, dSᵀ·Q)
constexpr double kWmmaOddRowsKBytes = 17;
constexpr double kWmmaOddRowsNBytes = 20;
// Rows of N halves with N even but N % 8 != 0 (4-byte aligned): cuBLAS ran CUTLASS sm80
// multistage kernels (128×256 tiles for the N×N result, 64×64 for the N×d ones) at B1 H3 d64,
// N = 2500, 2502 and 2506 alike; per half loaded, 8 B for the N×d operands and 9 B for the N×N
// one, in both layouts; the N×N result stored as 128-byte warp runs at 4-byte alignment.
constexpr double kFourByteOperandBytes = 8;
constexpr double kFourByteSquareBytes = 9;

void add(Prediction& p, std::string name, std::string formula, double value) {
  p.l1_byte_terms.push_back({std::move(name), std::move(formula), value});
  p.model_l1_bytes += value;
}

// Bytes counted per byte used when a warp accesses `run` contiguous bytes (a multiple of 32) of
// a row of N halves, starting at (row · N · 2) mod 32: over consecutive rows that offset repeats
// with period 32 / gcd(2N, 32) and is 0 once per period: run/32 sectors then, one more
// otherwise.
double run_sector_factor(long long n, double run) {
  const long long period = 32 / std::gcd(2 * n, 32LL);
  return (run / kSectorBytes + 1 - 1.0 / static_cast<double>(period)) * kSectorBytes / run;
}

// The streaming row kernel: a warp's 32 halves, 64 contiguous bytes.
double streaming_sector_factor(long long n) {
  return run_sector_factor(n, 64);
}

// Σ over the rows of a head of the 16-byte vectors the cached kernel reads (col < valid).
double cached_vectors_read(long long n, bool causal) {
  if (!causal) return static_cast<double>(n) * static_cast<double>((n + 7) / 8);
  // Σ_{v=1..N} ⌈v/8⌉: K whole groups of 8 rows, then the remainder r rows at K + 1 vectors.
  const double k = static_cast<double>(n / 8);
  const double r = static_cast<double>(n % 8);
  return 8 * k * (k + 1) / 2 + r * (k + 1);
}

// Tiles of edge `tile` that cover `extent` (the last one partial).
double tiles(long long extent, long long tile) {
  return static_cast<double>((extent + tile - 1) / tile);
}

// cuBLAS's GEMMs at N % 8 != 0 (model_l1.hpp says why these numbers). Tile edges are those
// cuBLAS 13.0 chose on the H200 in the probes: T×T tiles for the N×N result (128 while that
// gives two waves of CTAs, else 64); for the N×d results 128 while that gives a wave, 64 while
// 64 does, else the 32×32 wmma kernel, which it also ran for every d <= 32.
void add_element_wise_gemms(const Workload& w, int sm_count, Prediction& p) {
  const double bh = static_cast<double>(w.batch) * w.heads;
  const long long n_int = w.seq_len, d_int = w.head_dim;
  const double n = static_cast<double>(n_int), d = static_cast<double>(d_int);
  const bool fwd = w.pass == Pass::kForward;
  const double sms = std::max(sm_count, 1);

  // The N×N result (S forward, dP backward) from two N×d operands with rows of d halves.
  const long long square = bh * tiles(n_int, 128) * tiles(n_int, 128) >= 2 * sms ? 128 : 64;
  add(p,
      std::string("cuBLAS ") + (fwd ? "S = Q·Kᵀ" : "dP = dO·Vᵀ") + " (" + std::to_string(square) +
          "×" + std::to_string(square) +
          " tiles, one half per access): both operands once per tile of the other side, " +
          format_fixed(kAlignedOperandBytes, 0) + " B per half",
      "2·B·H·N·d·⌈N/" + std::to_string(square) + "⌉·" + format_fixed(kAlignedOperandBytes, 0) +
          " B",
      2 * bh * n * d * tiles(n_int, square) * kAlignedOperandBytes);
  const double f = streaming_sector_factor(n_int);
  add(p,
      std::string("cuBLAS ") + (fwd ? "S" : "dP") +
          " stored, 64-byte warp runs at 2-byte "
          "alignment",
      "B·H·N²·2 B·" + format_fixed(f, 3), bh * n * n * kBytesPerFp16 * f);

  // The N×d results (O forward; dQ, dV, dK backward): an N×N operand (rows of N halves) and an
  // N×d one (rows of d halves).
  const bool wmma = d_int <= 32 || bh * tiles(n_int, 64) * tiles(d_int, 64) < sms;
  const long long edge = wmma ? 32 : bh * tiles(n_int, 128) * tiles(d_int, 128) >= sms ? 128 : 64;
  const double contiguous_k = wmma ? kWmmaOddRowsKBytes : kTensorOpOddRowsKBytes;
  const double contiguous_n = wmma ? kWmmaOddRowsNBytes : kTensorOpOddRowsNBytes;
  const std::string kernel =
      wmma ? "wmma 32×32" : std::to_string(edge) + "×" + std::to_string(edge);
  auto n_by_d = [&](const std::string& what, double count, double odd_bytes,
                    const std::string& odd_name) {
    const double square_loads = bh * n * n * tiles(d_int, edge) * odd_bytes;
    const double wide_loads = bh * n * d * tiles(n_int, edge) * kAlignedOperandBytes;
    add(p,
        "cuBLAS " + what + " (" + kernel + " tiles): the N×N operand once per tile of d (" +
            format_fixed(odd_bytes, 1) + " B per half, " + odd_name +
            "), the N×d one once per tile of N (" + format_fixed(kAlignedOperandBytes, 0) +
            " B per half)",
        format_fixed(count, 0) + "·B·H·(N²·⌈d/" + std::to_string(edge) + "⌉·" +
            format_fixed(odd_bytes, 1) + " B + N·d·⌈N/" + std::to_string(edge) + "⌉·" +
            format_fixed(kAlignedOperandBytes, 0) + " B)",
        count * (square_loads + wide_loads));
  };
  if (fwd) {
    n_by_d("O = P·V", 1, contiguous_k, "contiguous along k");
  } else {
    n_by_d("dQ = dS·K", 1, contiguous_k, "contiguous along k");
    n_by_d("dV = Pᵀ·dO, dK = dSᵀ·Q", 2, contiguous_n, "contiguous along the result's N");
  }
}

// cuBLAS's GEMMs at N even and N % 8 != 0, with the tiles of the one probe (model_l1.hpp).
void add_four_byte_gemms(const Workload& w, Prediction& p) {
  const double bh = static_cast<double>(w.batch) * w.heads;
  const long long n_int = w.seq_len, d_int = w.head_dim;
  const double n = static_cast<double>(n_int), d = static_cast<double>(d_int);
  const bool fwd = w.pass == Pass::kForward;
  add(p,
      std::string("cuBLAS ") + (fwd ? "S = Q·Kᵀ" : "dP = dO·Vᵀ") +
          " (128×256 tiles, 4-byte accesses): each operand once per tile of the other side, " +
          format_fixed(kFourByteOperandBytes, 0) + " B per half",
      "B·H·N·d·(⌈N/128⌉ + ⌈N/256⌉)·" + format_fixed(kFourByteOperandBytes, 0) + " B",
      bh * n * d * (tiles(n_int, 128) + tiles(n_int, 256)) * kFourByteOperandBytes);
  const double f = run_sector_factor(n_int, 128);
  add(p,
      std::string("cuBLAS ") + (fwd ? "S" : "dP") +
          " stored, 128-byte warp runs at 4-byte alignment",
      "B·H·N²·2 B·" + format_fixed(f, 3), bh * n * n * kBytesPerFp16 * f);
  const double per_gemm = bh * n * n * tiles(d_int, 64) * kFourByteSquareBytes +
                          bh * n * d * tiles(n_int, 64) * kFourByteOperandBytes;
  const double count = fwd ? 1 : 3;
  add(p,
      std::string("cuBLAS ") + (fwd ? "O = P·V" : "dQ, dV, dK") +
          " (64×64 tiles): the N×N operand once per tile of d (" +
          format_fixed(kFourByteSquareBytes, 0) + " B per half), the N×d one once per tile of N (" +
          format_fixed(kFourByteOperandBytes, 0) + " B per half)",
      format_fixed(count, 0) + "·B·H·(N²·⌈d/64⌉·" + format_fixed(kFourByteSquareBytes, 0) +
          " B + N·d·⌈N/64⌉·" + format_fixed(kFourByteOperandBytes, 0) + " B)",
      count * per_gemm);
}

}  // namespace

bool standard_rows_cached(const Workload& w) {
  return w.seq_len % 8 == 0 && w.seq_len <= (w.pass == Pass::kForward ? 32768 : 16384);
}

void add_standard_l1_bytes(const Workload& w, bool tma_gemms, int sm_count, Prediction& p) {
  const double bh = static_cast<double>(w.batch) * w.heads;
  const long long n_int = w.seq_len;
  const double n = static_cast<double>(n_int), d = w.head_dim;
  const double nn = bh * n * n * kBytesPerFp16;  // one [B,H,N,N] FP16 matrix
  const double valid = w.causal ? (n + 1) / (2 * n) : 1.0;
  const bool fwd = w.pass == Pass::kForward;
  const bool aligned = n_int % 8 == 0;
  if (n_int == 1) {
    // S is 1×1 per head: the GEMMs are dot products, whose cuBLAS kernels no probe has seen. No
    // L1 level from the model (model_l1_bytes 0), so L1 takes no part in the verdict; the
    // counters still give it.
    p.l1_byte_terms.push_back(
        {"not modelled: at N = 1 cuBLAS's GEMMs are dot products (kernels never probed)", "-", 0});
    return;
  }

  // Row kernels.
  const char* rows_name = fwd ? "softmax" : "softmax backward";
  if (standard_rows_cached(w)) {
    const double vector_bytes = bh * 16 * cached_vectors_read(n_int, w.causal);
    add(p,
        std::string(rows_name) + ": valid prefix read in 16-byte vectors" + (fwd ? "" : " (P, dP)"),
        std::string(fwd ? "" : "2·") + "B·H·16 B·Σ_rows ⌈valid/8⌉", (fwd ? 1 : 2) * vector_bytes);
    add(p, std::string(rows_name) + ": rows written whole", "B·H·N²·2 B", nn);
  } else {
    const double f = streaming_sector_factor(n_int);
    const std::string sectors = format_fixed(f, 3);
    const double passes = fwd ? 3 : 4;  // forward: S 3×; backward: P and dP 2× each
    add(p,
        std::string(rows_name) + " (streaming): valid prefix read " +
            (fwd ? "in 3 passes" : "twice, of P and dP") + ", one half per thread",
        format_fixed(passes, 0) + "·B·H·N²·2 B·valid·" + sectors + " (sectors per byte used)",
        passes * nn * valid * f);
    add(p, std::string(rows_name) + " (streaming): rows written, one half per thread",
        "B·H·N²·2 B·" + sectors, nn * f);
  }

  // GEMMs: the N×N matrices they read or write (forward: S written, P read; backward: P read,
  // dP written, dS read twice) and the d-wide operands (forward: K, Q for S and V for O;
  // backward: dO twice, V, K, Q).
  const double matrices = fwd ? 2 : 4;
  const double d_wide = fwd ? 3 : 5;
  if (tma_gemms && aligned) {
    add(p, "cuBLAS GEMMs (wgmma, operands and results by TMA): none through L1", "0", 0);
  } else if (aligned) {
    add(p, "cuBLAS GEMMs (mma.sync, 16-byte loads): N×N operands and results once each",
        format_fixed(matrices, 0) + "·B·H·N²·2 B", matrices * nn);
    add(p, "cuBLAS GEMMs: d-wide operands once per 128-wide tile",
        format_fixed(d_wide, 0) + "·B·H·N·d·2 B·N/128", d_wide * nn * d / 128);
  } else if (n_int % 2 == 0) {
    add_four_byte_gemms(w, p);
  } else {
    add_element_wise_gemms(w, sm_count, p);
  }
}

}  // namespace roofline
