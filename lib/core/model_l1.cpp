#include "lib/core/model_l1.hpp"

#include <numeric>
#include <string>

#include "lib/core/text.hpp"

namespace roofline {
namespace {

constexpr double kSectorBytes = 32;

void add(Prediction& p, std::string name, std::string formula, double value) {
  p.l1_byte_terms.push_back({std::move(name), std::move(formula), value});
  p.model_l1_bytes += value;
}

// Bytes the streaming row kernel's accesses count per byte they use: a warp's 32 halves are 64
// contiguous bytes starting at (row · N · 2) mod 32. Over consecutive rows that offset repeats
// with period 32 / gcd(2N, 32) and is 0 once per period: 2 sectors then, 3 otherwise.
double streaming_sector_factor(long long n) {
  const long long period = 32 / std::gcd(2 * n, 32LL);
  return (3.0 - 1.0 / static_cast<double>(period)) * kSectorBytes / 64.0;
}

// Σ over the rows of a head of the 16-byte vectors the cached kernel reads (col < valid).
double cached_vectors_read(long long n, bool causal) {
  if (!causal) return static_cast<double>(n) * static_cast<double>((n + 7) / 8);
  // Σ_{v=1..N} ⌈v/8⌉: K whole groups of 8 rows, then the remainder r rows at K + 1 vectors.
  const double k = static_cast<double>(n / 8);
  const double r = static_cast<double>(n % 8);
  return 8 * k * (k + 1) / 2 + r * (k + 1);
}

}  // namespace

bool standard_rows_cached(const Workload& w) {
  return w.seq_len % 8 == 0 && w.seq_len <= (w.pass == Pass::kForward ? 32768 : 16384);
}

void add_standard_l1_bytes(const Workload& w, bool tma_gemms, Prediction& p) {
  const double bh = static_cast<double>(w.batch) * w.heads;
  const long long n_int = w.seq_len;
  const double n = static_cast<double>(n_int), d = w.head_dim;
  const double nn = bh * n * n * kBytesPerFp16;  // one [B,H,N,N] FP16 matrix
  const double valid = w.causal ? (n + 1) / (2 * n) : 1.0;
  const bool fwd = w.pass == Pass::kForward;
  const bool aligned = n_int % 8 == 0;

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
  } else {
    add(p,
        "cuBLAS GEMMs (mma.sync; rows of N % 8 != 0 halves, element-wise access): a 32-byte "
        "sector per half of each N×N operand and result",
        format_fixed(matrices, 0) + "·B·H·N²·32 B", matrices * nn * kSectorBytes / kBytesPerFp16);
  }
}

}  // namespace roofline
