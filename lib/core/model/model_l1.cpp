#include "lib/core/model/model_l1.hpp"

#include <algorithm>
#include <numeric>
#include <string>
#include <utility>

#include "lib/core/base/text.hpp"

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
// multistage kernels (128×256 or 256×128 tiles for the N×N result; four tile shapes for the N×d
// ones, four_byte_nd_kernel) at eight shapes (d 64 and 128, B·H 1 to 12, N 1500 to 3002); per
// half loaded, 8 B for the N×d operands and 9 B for the N×N one, in both layouts, at every
// shape; the N×N result stored as 128-byte warp runs at 4-byte alignment.
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

// The kernel cuBLAS 13.0 ran on the H200 for an N×d result (O forward; dQ, dV, dK backward),
// from ncu's per-kernel names and grids in the l1probe runs (NOTES.md "cuBLAS's kernels at
// N % 8 != 0" lists them): its tile over the result, N rows by d columns, and split-K.
struct NdKernel {
  long long tile_n = 128;
  long long tile_d = 128;
  bool wmma = false;  // the align1 wmma 32×32 kernel (other loads per half)
  long long splits = 1;
  std::string name;
};

// Tiles over an N×d result; CTAs of a tile_n × tile_d kernel.
double nd_ctas(const Workload& w, long long tile_n, long long tile_d) {
  return static_cast<double>(w.batch) * w.heads * tiles(w.seq_len, tile_n) *
         tiles(w.head_dim, tile_d);
}

// Odd N (align1 kernels). `contiguous_k`: the N×N operand is contiguous along k (O = P·V,
// dQ = dS·K), else along the result's N (dV = Pᵀ·dO, dK = dSᵀ·Q). The thresholds fall between
// the probed grids (in CTAs of 128-tiles at d = 128: 36 and 45 chose wmma or 64, 48 and 78
// chose 64 or 128); B1 H2 N2049 d128 ran an sm90 wgmma kernel instead, which no rule here
// reproduces.
NdKernel odd_nd_kernel(const Workload& w, double sms, bool contiguous_k) {
  const long long d = w.head_dim;
  NdKernel k;
  if (d <= 32) {
    k.wmma = true;
  } else if (d <= 64) {
    // 128 while that fills a wave, 64 while 64 does, else wmma (B1 H3 N777/5001, B1 H1 N65537,
    // B4 H16 N2047).
    if (nd_ctas(w, 128, 128) >= sms) {
    } else if (nd_ctas(w, 64, 64) >= sms) {
      k.tile_n = k.tile_d = 64;
    } else {
      k.wmma = true;
    }
  } else if (static_cast<long long>(w.batch) * w.heads == 1) {
    // One head, d = 128: 128×128 tiles with the sum split over k (B1 H1 N2049: 15 splits,
    // about two waves), FP32 partials added by a second kernel.
    k.splits = std::max(1LL, static_cast<long long>(2 * sms / nd_ctas(w, 128, 128)));
  } else if (nd_ctas(w, 128, 128) >= 0.5 * sms) {
  } else if (nd_ctas(w, 64, 64) >= 1.2 * sms || !contiguous_k) {
    k.tile_n = k.tile_d = 64;
  } else {
    k.wmma = true;
  }
  if (k.wmma) k.tile_n = k.tile_d = 32;
  k.name = k.wmma ? "wmma 32×32" : std::to_string(k.tile_n) + "×" + std::to_string(k.tile_d);
  if (k.splits > 1) k.name += ", split-K " + std::to_string(k.splits);
  return k;
}

// N even, N % 8 != 0 (4-byte kernels): the smallest of 64×64, 128×64, 128×128 and 256×128
// whose grid fits one wave, else 256×128 (B1 H3 d64 N2500: 64×64; B2 H4 d64 N1500: 128×64;
// B2 H2 d128 N3002: 128×128; B4 H2 d128 N2052 and B6 H2 d64 N2002: 256-row tiles; B1 H2 d64
// N3002: 64×64). One head at d = 128: 256×128 split over k to one wave (B1 H1 N3002: 11
// splits), FP16 partials.
NdKernel four_byte_nd_kernel(const Workload& w, double sms) {
  NdKernel k;
  k.tile_n = 256;
  k.tile_d = 128;
  if (static_cast<long long>(w.batch) * w.heads == 1 && w.head_dim > 64) {
    k.splits = std::max(1LL, static_cast<long long>(sms / nd_ctas(w, 256, 128)));
  } else {
    for (const auto& [tn, td] : {std::pair<long long, long long>{64, 64}, {128, 64}, {128, 128}})
      if (nd_ctas(w, tn, td) <= sms) {
        k.tile_n = tn;
        k.tile_d = td;
        break;
      }
  }
  k.name = std::to_string(k.tile_n) + "×" + std::to_string(k.tile_d);
  if (k.splits > 1) k.name += ", split-K " + std::to_string(k.splits);
  return k;
}

// One N×d result's GEMM: the N×N operand once per tile of d, the N×d one once per tile of N
// (each CTA loads its strip of both), and split-K's partials written and read back.
void add_nd_gemm(const Workload& w, const NdKernel& k, const std::string& what, double count,
                 double square_bytes, const std::string& square_note, double wide_bytes,
                 double partial_bytes, Prediction& p) {
  const double bh = static_cast<double>(w.batch) * w.heads;
  const double n = w.seq_len, d = w.head_dim;
  const std::string tn = std::to_string(k.tile_n), td = std::to_string(k.tile_d);
  add(p,
      "cuBLAS " + what + " (" + k.name + " tiles): the N×N operand once per tile of d (" +
          format_fixed(square_bytes, 0) + " B per half, " + square_note +
          "), the N×d one once per tile of N (" + format_fixed(wide_bytes, 0) + " B per half)",
      format_fixed(count, 0) + "·B·H·(N²·⌈d/" + td + "⌉·" + format_fixed(square_bytes, 0) +
          " B + N·d·⌈N/" + tn + "⌉·" + format_fixed(wide_bytes, 0) + " B)",
      count * (bh * n * n * tiles(w.head_dim, k.tile_d) * square_bytes +
               bh * n * d * tiles(w.seq_len, k.tile_n) * wide_bytes));
  if (k.splits > 1)
    add(p,
        "cuBLAS " + what + ": " + std::to_string(k.splits) +
            " split-K partials written and read back by the reduction (" +
            format_fixed(partial_bytes, 0) + " B each)",
        format_fixed(count, 0) + "·2·" + std::to_string(k.splits) + "·B·H·N·d·" +
            format_fixed(partial_bytes, 0) + " B",
        count * 2 * static_cast<double>(k.splits) * bh * n * d * partial_bytes);
}

// cuBLAS's GEMMs at odd N (model_l1.hpp says why these numbers).
void add_element_wise_gemms(const Workload& w, int sm_count, Prediction& p) {
  const double bh = static_cast<double>(w.batch) * w.heads;
  const long long n_int = w.seq_len, d_int = w.head_dim;
  const double n = static_cast<double>(n_int), d = static_cast<double>(d_int);
  const bool fwd = w.pass == Pass::kForward;
  const double sms = std::max(sm_count, 1);

  // The N×N result (S forward, dP backward) from two N×d operands with rows of d halves: T×T
  // tiles, 128 while that gives two waves of CTAs (always at d = 128: B1 H3 N1025, 243 tiles),
  // else 64.
  const long long square =
      d_int > 64 || bh * tiles(n_int, 128) * tiles(n_int, 128) >= 2 * sms ? 128 : 64;
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

  // The N×d results: an N×N operand (rows of N halves) and an N×d one (rows of d halves).
  auto n_by_d = [&](const std::string& what, double count, bool contiguous_k) {
    const NdKernel k = odd_nd_kernel(w, sms, contiguous_k);
    const double square_bytes =
        k.wmma ? (contiguous_k ? kWmmaOddRowsKBytes : kWmmaOddRowsNBytes)
               : (contiguous_k ? kTensorOpOddRowsKBytes : kTensorOpOddRowsNBytes);
    add_nd_gemm(w, k, what, count, square_bytes,
                contiguous_k ? "contiguous along k" : "contiguous along the result's N",
                kAlignedOperandBytes, kBytesPerFp32, p);
  };
  if (fwd) {
    n_by_d("O = P·V", 1, true);
  } else {
    n_by_d("dQ = dS·K", 1, true);
    n_by_d("dV = Pᵀ·dO, dK = dSᵀ·Q", 2, false);
  }
}

// cuBLAS's GEMMs at N even and N % 8 != 0 (model_l1.hpp).
void add_four_byte_gemms(const Workload& w, int sm_count, Prediction& p) {
  const double bh = static_cast<double>(w.batch) * w.heads;
  const long long n_int = w.seq_len;
  const double n = static_cast<double>(n_int), d = w.head_dim;
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
  const NdKernel k = four_byte_nd_kernel(w, std::max(sm_count, 1));
  add_nd_gemm(w, k, fwd ? "O = P·V" : "dQ, dV, dK", fwd ? 1 : 3, kFourByteSquareBytes,
              "either layout", kFourByteOperandBytes, kBytesPerFp16, p);
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
    add_four_byte_gemms(w, sm_count, p);
  } else {
    add_element_wise_gemms(w, sm_count, p);
  }
}

}  // namespace roofline
