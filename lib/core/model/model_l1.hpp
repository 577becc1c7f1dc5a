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
//         to CUTLASS sm75 "align1" kernels that move one half per access (tensorop 128×128 or
//         64×64 tiles, or a wmma 32×32 kernel). ncu's per-kernel l1tex__t_bytes on the H200
//         (scripts/device_check.sh l1probe, NOTES.md) gives what each element a CTA loads costs:
//         16 B (half a sector) for the N×d operands, whose rows are aligned, in every kernel and
//         shape probed; 17-20 B for the N×N operand, by kernel and by which side of it is
//         contiguous. A GEMM's loads are then its operands times the tiles of the other side
//         (each CTA loads its strip of both), with cuBLAS's tile edge chosen by the waves of
//         CTAs it gives (model_l1.cpp says the thresholds; they reproduce every tile choice in
//         the probes, and are cuBLAS 13.0's behaviour, not a law). The N×N result is stored
//         as 64-byte warp runs at 2-byte alignment, like the streaming rows. At N = 1 (dot
//         products) no probe saw the kernels: the model gives no L1 level there.
//       - N even and N % 8 != 0 (rows 4-byte aligned): CUTLASS sm80 multistage kernels with
//         4-byte accesses, 8 B per half of the N×d operands and 9 B of the N×N one, the result
//         stored as 128-byte warp runs; the N×d results' tiles the smallest whose grid fits a
//         wave (model_l1.cpp).
//       - One head at d = 128 (either case): cuBLAS splits the N×d results' sum over k and adds
//         the partials in a second kernel; the model charges the partials' round trip.
//       - Not reproduced: B1 H2 N2049 d128 ran its N×d GEMMs as sm90 wgmma kernels with
//         element-wise loads (the only shape of the probes that did).
#pragma once

#include "lib/core/domain/workload.hpp"
#include "lib/core/model/model.hpp"

namespace roofline {

// Whether the row kernels hold a row in registers (one read of the valid prefix) or stream it.
bool standard_rows_cached(const Workload& workload);

// Adds standard attention's L1 terms to `prediction` (model_l1_bytes, l1_byte_terms).
// `tma_gemms`: cuBLAS can run wgmma/TMA kernels on this GPU (Hopper and later).
// `sm_count`: the GPU's SMs (cuBLAS's tile choice at N % 8 != 0 depends on the waves).
void add_standard_l1_bytes(const Workload& workload, bool tma_gemms, int sm_count,
                           Prediction& prediction);

}  // namespace roofline
