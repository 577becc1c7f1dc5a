// L1 bytes of standard attention (kernels/standard_attention.cu) as the counters count them:
// `l1tex__t_bytes`, the global and local accesses that pass L1TEX's tag stage, in 32-byte
// sectors. Shared-memory accesses, TMA copies and wgmma operand reads are not in it.
//
// Where the bytes come from:
//   - The row kernels (softmax and its gradient). The cached kernels (N % 8 == 0, rows up to
//     32768 forward, 16384 backward) read the valid prefix of each row in 16-byte vectors and
//     write the whole row: every sector they touch is used whole. The streaming kernel reads
//     the valid prefix in each of its passes (3 forward: max, sum, output; 2 backward, of P and
//     dP each) and writes the whole row, one half per thread: a warp touches 64 contiguous
//     bytes at the row's alignment, 2 sectors when that is a multiple of 32 bytes, else 3.
//   - cuBLAS's GEMMs. On a GPU with wgmma and rows of S, P, dP, dS that are multiples of 16
//     bytes, cuBLAS runs wgmma kernels whose operands and results move by TMA: nothing through
//     L1 (the H200 recordings of tests/data/reports/h200_gate.tar.xz: L1 = the row kernels'
//     bytes exactly). Otherwise mma.sync kernels read and write through L1:
//       - aligned rows: 16-byte cp.async loads of whole tiles, each N×N element once (d fits one
//         tile), the d-wide operands once per 128-wide tile of the other dimension (cuBLAS's
//         tile widths are its own: 128 assumed), results stored once;
//       - rows of N halves with N % 8 != 0: no vector access is aligned, so cuBLAS falls back
//         to kernels that move one half per access. The model charges a whole 32-byte sector
//         per 2-byte element of each N×N operand and result (16× its bytes; the worst
//         coalescing, each element accessed once) and neglects the d-wide operands beside
//         them. cuBLAS's kernels are closed and this is not fitted to the counts: on the H200
//         (tests/data/reports, test_cache_model.cpp) the charge is 1.02-1.39× the counted L1
//         bytes at N >= 1023 and 0.52-0.65× at N = 777, whose kernels move more.
#pragma once

#include "lib/core/model.hpp"
#include "lib/core/workload.hpp"

namespace roofline {

// Whether the row kernels hold a row in registers (one read of the valid prefix) or stream it.
bool standard_rows_cached(const Workload& workload);

// Adds standard attention's L1 terms to `prediction` (model_l1_bytes, l1_byte_terms).
// `tma_gemms`: cuBLAS can run wgmma/TMA kernels on this GPU (Hopper and later).
void add_standard_l1_bytes(const Workload& workload, bool tma_gemms, Prediction& prediction);

}  // namespace roofline
