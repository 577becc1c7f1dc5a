// Exponentials of each bundled kernel: what its softmax issues to the multi-function unit (the
// XU pipe, MUFU.EX2), counted per thread as the hardware executes them, so that the counter
// `sm__inst_executed_pipe_xu.sum` (warp instructions) reads the model's count ÷ 32.
//
// Forward (flash kernels): one exp2 per score of every tile the kernel computes (whole tiles of
// Bc keys, rows in the kernel's warp or warpgroup blocks, the diagonal tiles of a causal mask
// whole), plus the online softmax's rescale factor exp2(m_old − m_new), taken by every thread
// that holds a piece of the row (4 for the tensor-core kernels' quads, 16 for flash-v1) once per
// key tile, plus one reciprocal (MUFU.RCP) per such thread for 1/ℓ at the end. Backward: the
// recomputation of P = exp2(S − LSE) on every tile pair computed (flash-v1 twice: its dK/dV and
// dQ kernels each recompute P). Standard: the row-softmax kernel's exp per cached element (the
// whole power-of-two register row, masked entries included) or two per valid element in the
// streaming kernel (sum pass and write pass); its backward reads P and takes none.
//
// What the model leaves out: integer divisions of index arithmetic (MUFU.RCP on the way), the
// log of the LSE (libdevice's logf is a polynomial); both are O(rows), not O(scores).
#pragma once

#include <vector>

#include "lib/core/domain/workload.hpp"
#include "lib/core/model/model.hpp"

namespace roofline {

struct ExpPrediction {
  double exponentials = 0;  // MUFU results per thread, summed (warp instructions × 32)
  std::vector<ModelTerm> terms;
};

ExpPrediction predict_exponentials(const KernelModel& kernel, const Workload& workload);

}  // namespace roofline
