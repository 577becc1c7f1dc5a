// flash-v3 forward's configuration (its tiles, stages, register split and shared-memory layout,
// per head dimension) and its kernel's parameters. Included by flash_v3_fwd.cu alone (its
// anonymous namespace); the catalogue's tiles are checked against it there.
#pragma once

#include <cstdint>

#include "kernels/common.cuh"
#include "kernels/hopper/sm90.cuh"

namespace roofline::kernels {
namespace {

template <int kHeadDim>
struct V3FwdConfig {
  static constexpr int kBlockQ = 128;  // two consumer warpgroups of 64 rows
  static constexpr int kBlockKv = 128;
  static constexpr int kStages = 2;
  static constexpr int kConsumers = 2;
  static constexpr int kThreads = 128 * (1 + kConsumers);
  static constexpr int kColBlocks = kHeadDim / 64;  // 64-column (128-byte) blocks per row
  static constexpr int kProducerRegisters = 24;
  // Ping-pong between the consumers (file header): on for d = 64 only. At d = 128 it measured
  // 5% slower non-causal (docs/results/2026-12-02-h200-flash-v3-forward-tuning.md) and, once the
  // mask left the inner tiles (kPeelLastTile), 2-3.5% slower causal too (H200, 2026-12-01, same
  // binary).
  static constexpr bool kPingPong = kHeadDim == 64;
  // Whether an item's key tiles before its last are built without the mask code (only the last
  // tile crosses the diagonal or the end of the keys). Without it ptxas predicated the mask onto
  // every tile (ncu: the mask's FSEL executed on every tile of causal d = 128). On at d = 128:
  // causal +5%, full level; at d = 64 the second copy of the tile step spilled 180 bytes and
  // measured 1-2% slower (H200, 2026-12-01, same binary).
  static constexpr bool kPeelLastTile = kHeadDim == 128;
  static constexpr int kConsumerRegisters = 240;
  // Tiles: one 64-column block of a tile is rows · 128 bytes.
  static constexpr uint32_t kQBlockBytes = kBlockQ * 128;
  static constexpr uint32_t kQBytes = kQBlockBytes * kColBlocks;
  static constexpr uint32_t kKvBlockBytes = kBlockKv * 128;
  static constexpr uint32_t kKvBytes = kKvBlockBytes * kColBlocks;  // one stage of K (or V)
  static constexpr uint32_t kRowsPerConsumer = 64;
  // Q, K stages, V stages, the O staging tile (the epilogue's TMA store reads it while the next
  // tile's Q loads), then the mbarriers and the two tile slots; +1024 to align the base to a
  // swizzle atom.
  static constexpr uint32_t kOOffset = kQBytes + 2 * kStages * kKvBytes;
  static constexpr uint32_t kBarrierOffset = kOOffset + kQBytes;
  static constexpr int kNumBarriers = 2 + 4 * kStages;  // q_full, q_empty, K/V full and empty
  static constexpr uint32_t kSlotOffset = kBarrierOffset + 8 * kNumBarriers;
  static constexpr std::size_t kSmemBytes = kSlotOffset + 2 * sizeof(int) + 1024;
  static_assert(kSmemBytes <= 227 * 1024, "fits the per-block shared memory of sm_90");
  // setmaxnreg moves registers within the CTA's allocation at launch: kThreads times the
  // per-thread count that __launch_bounds__(kThreads, 1) gives (65536 / kThreads, rounded down
  // to a multiple of 8: 168 for 384 threads). A larger total makes setmaxnreg.inc wait forever
  // (a producer at 32 with consumers at 240 hung every launch on the H200).
  static constexpr int kLaunchRegisters = 65536 / kThreads / 8 * 8;
  static_assert(128 * kProducerRegisters + 128 * kConsumers * kConsumerRegisters <=
                    kThreads * kLaunchRegisters,
                "the warpgroups' register budgets exceed the CTA's registers");
};

struct V3FwdParams {
  float* lse;
  // Work items, in the order they are handed out: t -> head t / num_q_tiles, query tile
  // t % num_q_tiles (counted from the last when causal: longest first within a head).
  int num_q_tiles;
  int total_tiles;
  // A counter, zero at launch, that hands the next work item to whichever CTA asks; nullptr
  // when there is one CTA per item: CTA c takes item c.
  unsigned* next_tile;
  int seq_len;
  float scale;       // 1/sqrt(d)
  float scale_log2;  // scale · log2(e)
};

}  // namespace
}  // namespace roofline::kernels
