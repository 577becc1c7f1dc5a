// The online softmax's rescaling step (FlashAttention-2), shared by the tensor-core kernels
// (flash-v2, flash-v3 and flash-decode): how a row's running max moves when a tile of its scores
// arrives, and what that does to the sum and output the row has accumulated so far.
#pragma once

#include "kernels/mma.cuh"

namespace roofline::kernels {

// What a tile's scores do to one row: each score s of the tile becomes exp2(s · scale_log2 −
// shift), and the row's running sum and output are multiplied by `correction`.
struct RowRescale {
  float shift;       // the new running max in log2 units (0 while every key is masked)
  float correction;  // exp2(old max − new max), in log2 units
};

// `row_max` (the row's running max of raw scores) takes the tile's `tile_max` when larger. A
// row with every key masked so far keeps -inf; shifting by 0 then avoids inf − inf.
__device__ __forceinline__ RowRescale rescale_row(float& row_max, float tile_max,
                                                  float scale_log2) {
  const float new_max = fmaxf(row_max, tile_max);
  RowRescale r;
  r.shift = new_max == -INFINITY ? 0.f : new_max * scale_log2;
  r.correction = ptx::exp2_approx(row_max * scale_log2 - r.shift);
  row_max = new_max;
  return r;
}

}  // namespace roofline::kernels
