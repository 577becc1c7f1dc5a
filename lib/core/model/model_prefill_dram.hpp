// The cache-aware DRAM bytes of the bundled prefill kernels (standard attention and the flash
// kernels), on a GPU of a given L2 and SM count: the no-reuse bytes less what the L2 keeps
// between the waves of CTAs that share an operand, and between kernels of one pass. Each term
// is added to the prediction's cache_aware_byte_terms and model_dram_bytes with its formula.
// model.cpp's predict() calls them; decode's are model_decode.hpp's.
#pragma once

#include "lib/core/domain/workload.hpp"
#include "lib/core/model/model.hpp"

namespace roofline {

struct CacheContext {
  double l2 = 0;  // bytes
  int sms = 0;
};

// `writes` gets the bytes the pass writes (for the caller's write-back term).
void cache_aware_flash(const KernelModel& k, const Workload& w, const CacheContext& c,
                       Prediction& p, double* writes);
void cache_aware_standard(const Workload& w, const CacheContext& c, Prediction& p, double* writes);

}  // namespace roofline
