// flash-v3 backward's producer warpgroup (warpgroup 0 of the main kernel): one thread loads each
// work item's K and V once and, for every query tile of the item, Q, dO and the LSE and D slices
// into the query-stage ring (TMA, full/empty mbarriers); with persistent CTAs it takes the items
// from the counter and hands them to the consumers (flash_v3_bwd.cu, v3_bwd_consumer.cuh,
// v3_bwd_dq.cuh). Included by flash_v3_bwd.cu alone (after v3_bwd_config.cuh); device code for
// sm_90a only (ROOFLINE_V3BWD_DEVICE).
#pragma once

#include <cuda.h>

#include <cstdint>

#include "kernels/hopper/sm90.cuh"
#include "kernels/hopper/v3_bwd_config.cuh"

namespace roofline::kernels {
namespace {

#ifdef ROOFLINE_V3BWD_DEVICE

// Threads 0-127 of the main kernel (thread index tid), with the shared memory laid out by
// V3BwdConfig from base (a shared-space address); slots is V3BwdConfig::kOffSlots, where each
// use of K and V gets its item (-1: none left). Returns once the last copy has been issued; the
// consumers wait for the copies on the mbarriers.
template <typename T, int kHeadDim, bool kCausal>
__device__ __forceinline__ void v3_bwd_producer(int tid, uint32_t base, volatile int* slots,
                                                const CUtensorMap& map_q, const CUtensorMap& map_k,
                                                const CUtensorMap& map_v, const CUtensorMap& map_do,
                                                const CUtensorMap& map_lse,
                                                const CUtensorMap& map_drow,
                                                const V3BwdParams<T>& p) {
  using Cfg = V3BwdConfig<kHeadDim>;
  constexpr int kBlockQ = Cfg::kBlockQ;
  constexpr int kStages = Cfg::kStages;
  const uint32_t s_k = base + Cfg::kOffK;
  const uint32_t s_v = base + Cfg::kOffV;
  const uint32_t s_q = base + Cfg::kOffQ;
  const uint32_t s_do = base + Cfg::kOffDo;
  // One thread issues every copy; the other warps only give back their registers.
  sm90::setmaxnreg_decrease<24>();
  if (tid == 0) {
    // Shared-space addresses from the one base register (the producer has 24 registers).
    const uint32_t bars = base + Cfg::kOffBarriers;
    constexpr uint32_t kKvFull = 0, kKvEmpty = 8, kFull = 16, kEmpty = kFull + 8 * kStages;
    int loaded = 0;  // query stages loaded by this CTA so far, over all its work items
    const auto load_stage = [&](int head, int q0) {
      const int stage = loaded % kStages;
      const int use = loaded / kStages;
      ++loaded;
      // Wait until both consumer warpgroups released this stage's previous use.
      if (use > 0) sm90::mbarrier_wait(bars + kEmpty + 8 * stage, (use - 1) & 1);
      const uint32_t full = bars + kFull + 8 * stage;
      sm90::mbarrier_arrive_expect_tx(full, Cfg::kStageTxBytes);
#pragma unroll
      for (int c = 0; c < Cfg::kChunks; ++c) {
        const uint32_t offset = stage * Cfg::kQTileBytes + c * Cfg::kQChunkBytes;
        sm90::tma_load_3d(s_q + offset, &map_q, full, c * kChunkCols, q0, head);
        sm90::tma_load_3d(s_do + offset, &map_do, full, c * kChunkCols, q0, head);
      }
      sm90::tma_load_3d(base + Cfg::kOffLse + stage * Cfg::kVecStride, &map_lse, full, q0, head, 0);
      sm90::tma_load_3d(base + Cfg::kOffDrow + stage * Cfg::kVecStride, &map_drow, full, q0, head,
                        0);
    };
    const auto load_kv = [&](const V3BwdItem& it) {
      sm90::mbarrier_arrive_expect_tx(bars + kKvFull, Cfg::kKvTxBytes);
#pragma unroll
      for (int c = 0; c < Cfg::kChunks; ++c) {
        sm90::tma_load_3d(s_k + c * Cfg::kKvChunkBytes, &map_k, bars + kKvFull, c * kChunkCols,
                          it.kv0, it.head);
        sm90::tma_load_3d(s_v + c * Cfg::kKvChunkBytes, &map_v, bars + kKvFull, c * kChunkCols,
                          it.kv0, it.head);
      }
    };
    if constexpr (!Cfg::kPersistent) {
      const V3BwdItem it = v3_bwd_item<kHeadDim, kCausal>(p, static_cast<int>(blockIdx.x));
      load_kv(it);
      for (int q0 = it.first_q_tile * kBlockQ; q0 < p.n_pad; q0 += kBlockQ) {
        load_stage(it.head, q0);
      }
    }
    for (int use = 0; Cfg::kPersistent; ++use) {
      const int t = p.next_item != nullptr
                        ? static_cast<int>(atomicAdd(p.next_item, 1u))
                        : static_cast<int>(blockIdx.x) + use * static_cast<int>(gridDim.x);
      if (t >= p.total_items) {
        if (use > 0) sm90::mbarrier_wait(bars + kKvEmpty, (use - 1) & 1);
        slots[use % 2] = -1;
        // The consumers wake to the -1. The phase carries bytes like an item's (one K chunk of
        // item 0, never read), as the forward's end marker does: the handoff that
        // compute-sanitizer's racecheck ran clean with.
        sm90::mbarrier_arrive_expect_tx(bars + kKvFull, Cfg::kKvChunkBytes);
        sm90::tma_load_3d(s_k, &map_k, bars + kKvFull, 0, 0, 0);
        break;
      }
      const V3BwdItem it = v3_bwd_item<kHeadDim, kCausal>(p, t);
      // The item's first query stages load while the consumers still work on the last item;
      // its K and V once they have released the last item's.
      int q0 = it.first_q_tile * kBlockQ;
      const int q_early = min(p.n_pad, q0 + kStages * kBlockQ);
      for (; q0 < q_early; q0 += kBlockQ) load_stage(it.head, q0);
      if (use > 0) sm90::mbarrier_wait(bars + kKvEmpty, (use - 1) & 1);
      slots[use % 2] = t;
      load_kv(it);
      for (; q0 < p.n_pad; q0 += kBlockQ) load_stage(it.head, q0);
    }
  }
}

#endif  // ROOFLINE_V3BWD_DEVICE

}  // namespace
}  // namespace roofline::kernels
