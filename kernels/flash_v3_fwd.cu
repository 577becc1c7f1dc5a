// flash-v3 forward: FlashAttention on Hopper's asynchronous tensor cores (sm_90a only).
//
// What it demonstrates: the FlashAttention-3 recipe on the wgmma roof. Both GEMMs are warpgroup
// MMAs (wgmma.mma_async m64nNk16): S = Q·Kᵀ reads Q and K from shared memory, O += P·V takes P
// from registers (the S accumulator rounded to FP16 or BF16 in place, no trip through shared
// memory)
// and V from shared memory. Tiles arrive by TMA (cp.async.bulk.tensor) in the 128-byte swizzle
// that wgmma reads without bank conflicts, completing on mbarriers.
//
// Tiling and roles: a work item is 128 query rows of one (batch, head); persistent CTAs, one per
// SM (at most one per item), take the items from a counter in the workspace in order (causal:
// each head's longest first), so that a CTA's loads of its next item run under the epilogue of
// the last. Three warpgroups.
//   - warpgroup 0 is the producer: it gives most of its registers away (setmaxnreg) and one
//     thread takes the next item, hands it to the consumers through a two-slot ring in shared
//     memory (q_full / q_empty), and issues the TMA loads of its Q tile and of K and V tiles of
//     128 keys into a ring of two stages each, waiting on "empty" mbarriers before reusing a
//     stage; after the last item it hands over -1.
//   - warpgroups 1 and 2 are consumers of 64 query rows each (240 registers per thread). Per
//     key tile they overlap softmax with the tensor cores inside the warpgroup (the FA3 paper's
//     intra-warpgroup pipelining): S(j) = Q·K(j)ᵀ and O += P(j-1)·V(j-1) are issued back to
//     back, the softmax of S(j) runs while the P·V product is still in flight, and O is rescaled
//     once that product has landed. P alternates between two register sets (key loop unrolled
//     by two): copying P(j) into the registers P·V(j-1) still reads made ptxas serialise every
//     wgmma (warning C7513). Ping-pong (d = 64): the consumers take turns to issue their
//     GEMMs, handing over through named barriers, so one warpgroup's softmax runs under the
//     other's GEMMs; at d = 128 it measured slower and the two consumers run unsynchronised
//     (docs/results/2026-12-02-h200-flash-v3-forward-tuning.md has the A/B).
//   - epilogue: O is normalised, rounded to the element type, written into the consumer's rows
//     of an O tile of its own (so that the next item's Q can load meanwhile) in the same
//     swizzle, and stored by TMA, which clips rows past N; the LSE (natural log of the softmax
//     denominator of scaled S) goes out from registers.
// Any N: TMA zero-fills rows past N on load; the last key tile masks keys >= N. Causal: tiles
// past the diagonal are never loaded; at d = 128 only an item's last key tile (the diagonal, or
// the key tail) carries the element mask (V3FwdConfig::kPeelLastTile); query tiles are
// scheduled longest-first.
//
// Regime: like flash-v2 the arithmetic intensity against DRAM is about Br·4·d FLOP per 4·d bytes
// of K/V per tile, far right of the ridge: compute-bound, judged against the wgmma FP16 (or
// BF16) peak. The exp2 of the softmax (multi-function unit) is the tax that the overlap hides.
// Where it lands today (regime, binding roof, share of it, advice), row by row:
//   cuflash-roofline run --kernel flash-v3 --pass fwd --head-dim 128 --seq 16384 --counter-set full
//
// Element type: the kernel is a template on T (__half or __nv_bfloat16); only the wgmma type
// suffix, the tensor maps' element type and the packing of P and O depend on it.
#include <algorithm>
#include <cfloat>

#include "kernels/catalog.hpp"
#include "kernels/common.cuh"
#include "kernels/hopper/sm90.cuh"
#include "kernels/hopper/tensor_map.hpp"
#include "kernels/hopper/v3_fwd_config.cuh"
#include "kernels/launchers.hpp"
#include "kernels/mma.cuh"
#include "kernels/online_softmax.cuh"

namespace roofline::kernels {
namespace {

using sm90::Wgmma;

template <typename T, int kHeadDim, bool kCausal>
__global__ void __launch_bounds__(V3FwdConfig<kHeadDim>::kThreads, 1)
    flash_v3_forward_kernel(const __grid_constant__ CUtensorMap q_map,
                            const __grid_constant__ CUtensorMap k_map,
                            const __grid_constant__ CUtensorMap v_map,
                            const __grid_constant__ CUtensorMap o_map, const V3FwdParams p) {
  using Cfg = V3FwdConfig<kHeadDim>;
  constexpr int kStages = Cfg::kStages;
  constexpr int kSRegs = Cfg::kBlockKv / 2;  // S accumulator: 64 x Bc over 128 threads
  constexpr int kORegs = kHeadDim / 2;
  constexpr int kPvSteps = Cfg::kBlockKv / 16;
  constexpr bool kPingPong = Cfg::kPingPong;

  extern __shared__ unsigned char smem_raw[];
  // Swizzle atoms need 1024-byte alignment; the dynamic window only promises 16.
  unsigned char* smem = smem_raw + ((1024 - (sm90::smem_u32(smem_raw) & 1023)) & 1023);
  unsigned char* s_q = smem;
  unsigned char* s_k = s_q + Cfg::kQBytes;
  unsigned char* s_v = s_k + kStages * Cfg::kKvBytes;
  unsigned char* s_o = smem + Cfg::kOOffset;
  uint64_t* barriers = reinterpret_cast<uint64_t*>(smem + Cfg::kBarrierOffset);
  uint64_t* q_full = barriers;
  uint64_t* q_empty = barriers + 1;
  uint64_t* k_full = barriers + 2;
  uint64_t* v_full = k_full + kStages;
  uint64_t* k_empty = v_full + kStages;
  uint64_t* v_empty = k_empty + kStages;
  // The work item of each use of the Q tile (alternating slots), -1 when there is none left.
  volatile int* slots = reinterpret_cast<volatile int*>(smem + Cfg::kSlotOffset);

  const int n = p.seq_len;
  // The query tile, head and key-tile count of work item t.
  struct Item {
    int q0, head, num_kv_tiles;
  };
  auto item = [&](int t) {
    const int head = t / p.num_q_tiles;
    const int i = t - head * p.num_q_tiles;
    const int q_tile = kCausal ? p.num_q_tiles - 1 - i : i;
    const int q0 = q_tile * Cfg::kBlockQ;
    const int kv_end = kCausal ? min(n, q0 + Cfg::kBlockQ) : n;
    return Item{q0, head, ceil_div(kv_end, Cfg::kBlockKv)};
  };

  if (threadIdx.x == 0) {
    sm90::mbarrier_init(q_full, 1);
    // Released by every consumer thread once the item's last S = Q·Kᵀ has read Q (and the
    // thread has read the item's slot): with one release per warp after __syncwarp, as for K
    // and V, compute-sanitizer's racecheck reported the slot's next write as a hazard.
    sm90::mbarrier_init(q_empty, 128 * Cfg::kConsumers);
    for (int s = 0; s < kStages; ++s) {
      sm90::mbarrier_init(&k_full[s], 1);
      sm90::mbarrier_init(&v_full[s], 1);
      // Released by each consumer warp once its MMAs have read the stage.
      sm90::mbarrier_init(&k_empty[s], 4 * Cfg::kConsumers);
      sm90::mbarrier_init(&v_empty[s], 4 * Cfg::kConsumers);
    }
    sm90::fence_barrier_init();
  }
  __syncthreads();

  const int warpgroup = sm90::warpgroup_index();
  if (warpgroup == 0) {
    // ---- producer ----
    sm90::setmaxnreg_decrease<Cfg::kProducerRegisters>();
    if (threadIdx.x == 0) {
      sm90::tma_prefetch_descriptor(&q_map);
      sm90::tma_prefetch_descriptor(&k_map);
      sm90::tma_prefetch_descriptor(&v_map);
      sm90::tma_prefetch_descriptor(&o_map);
      // Shared-space addresses (one register each) of the tiles and barriers the loop uses.
      const uint32_t sq = sm90::smem_u32(s_q), sk = sm90::smem_u32(s_k);
      const uint32_t sv = sm90::smem_u32(s_v), bars = sm90::smem_u32(barriers);
      constexpr uint32_t kQFull = 0, kQEmpty = 8, kKFull = 16, kVFull = kKFull + 8 * kStages;
      constexpr uint32_t kKEmpty = kVFull + 8 * kStages, kVEmpty = kKEmpty + 8 * kStages;
      int kv_load = 0;  // K/V tiles loaded by this CTA so far, over all its work items
      for (int use = 0;; ++use) {
        const int t = p.next_tile != nullptr
                          ? static_cast<int>(atomicAdd(p.next_tile, 1u))
                          : static_cast<int>(blockIdx.x) + use * static_cast<int>(gridDim.x);
        // The slot and Q are free once the consumers' last S of the previous item read Q.
        if (use > 0) sm90::mbarrier_wait(bars + kQEmpty, (use - 1) & 1);
        if (t >= p.total_tiles) {
          slots[use % 2] = -1;
          // The consumers wake to the -1. The phase carries bytes like an item's (one box of
          // item 0's Q, never read): with that and q_empty released by every thread,
          // compute-sanitizer's racecheck ran clean (with the bytes alone it still reported the
          // slot's write against the consumers' read).
          sm90::mbarrier_arrive_expect_tx(bars + kQFull, Cfg::kRowsPerConsumer * 128);
          sm90::tma_load_3d(sq, &q_map, bars + kQFull, 0, 0, 0);
          break;
        }
        slots[use % 2] = t;
        const Item it = item(t);
        sm90::mbarrier_arrive_expect_tx(bars + kQFull, Cfg::kQBytes);
#pragma unroll
        for (int c = 0; c < Cfg::kConsumers; ++c) {
#pragma unroll
          for (int b = 0; b < Cfg::kColBlocks; ++b) {
            sm90::tma_load_3d(sq + b * Cfg::kQBlockBytes + c * Cfg::kRowsPerConsumer * 128, &q_map,
                              bars + kQFull, b * 64, it.q0 + c * Cfg::kRowsPerConsumer, it.head);
          }
        }
        for (int tile = 0; tile < it.num_kv_tiles; ++tile, ++kv_load) {
          const uint32_t stage = kv_load % kStages;
          const uint32_t parity = ((kv_load / kStages) & 1) ^ 1;
          const int kv0 = tile * Cfg::kBlockKv;
          if (kv_load >= kStages) sm90::mbarrier_wait(bars + kKEmpty + 8 * stage, parity);
          sm90::mbarrier_arrive_expect_tx(bars + kKFull + 8 * stage, Cfg::kKvBytes);
#pragma unroll
          for (int b = 0; b < Cfg::kColBlocks; ++b) {
            sm90::tma_load_3d(sk + stage * Cfg::kKvBytes + b * Cfg::kKvBlockBytes, &k_map,
                              bars + kKFull + 8 * stage, b * 64, kv0, it.head);
          }
          if (kv_load >= kStages) sm90::mbarrier_wait(bars + kVEmpty + 8 * stage, parity);
          sm90::mbarrier_arrive_expect_tx(bars + kVFull + 8 * stage, Cfg::kKvBytes);
#pragma unroll
          for (int b = 0; b < Cfg::kColBlocks; ++b) {
            sm90::tma_load_3d(sv + stage * Cfg::kKvBytes + b * Cfg::kKvBlockBytes, &v_map,
                              bars + kVFull + 8 * stage, b * 64, kv0, it.head);
          }
        }
      }
    }
    return;
  }

  // ---- consumers ----
  sm90::setmaxnreg_increase<Cfg::kConsumerRegisters>();
  const int consumer = warpgroup - 1;
  const int thread = threadIdx.x % 128;
  const int warp = thread / 32;
  const int lane = thread % 32;
  const int quad = lane % 4;
  // Rows of this thread within the tile: local_row (h = 0) and local_row + 8 (h = 1).
  const int local_row = consumer * Cfg::kRowsPerConsumer + warp * 16 + lane / 4;

  const uint32_t q_base = sm90::smem_u32(s_q) + consumer * Cfg::kRowsPerConsumer * 128;
  const uint32_t k_base = sm90::smem_u32(s_k);
  const uint32_t v_base = sm90::smem_u32(s_v);

  // The work item's state; the lambdas below read it.
  int q0 = 0, num_kv_tiles = 0;
  int kv_first = 0;  // K/V tiles this CTA consumed before this item (the ring's position)
  float o_acc[kORegs];
  float s_acc[kSRegs];
  float row_max[2];
  float row_sum[2];  // this thread's share; the quad is summed at the end

  // S = Q · K(stage)ᵀ, issued and committed (not waited for). Descriptors are computed (and
  // pinned) before the batch opens: ordinary instructions that define a wgmma operand inside an
  // open batch make ptxas serialise the batch.
  auto issue_qk = [&](int stage) {
    constexpr int kSteps = kHeadDim / 16;
    uint64_t a[kSteps], b[kSteps];
#pragma unroll
    for (int kk = 0; kk < kSteps; ++kk) {
      const uint32_t column_offset = (kk % 4) * 32;  // 16 halves per k-step
      a[kk] = sm90::kmajor_desc(q_base + (kk / 4) * Cfg::kQBlockBytes + column_offset);
      b[kk] = sm90::kmajor_desc(k_base + stage * Cfg::kKvBytes + (kk / 4) * Cfg::kKvBlockBytes +
                                column_offset);
    }
    sm90::fence_registers(a);
    sm90::fence_registers(b);
    sm90::wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < kSteps; ++kk) {
      Wgmma<Cfg::kBlockKv, T>::template ss<0, 0>(s_acc, a[kk], b[kk], kk > 0);
    }
    sm90::wgmma_commit();
  };
  // O += P · V(stage), issued and committed.
  auto issue_pv = [&](int stage, const uint32_t(&p_in)[kPvSteps][4]) {
    uint64_t b[kPvSteps];
#pragma unroll
    for (int kk = 0; kk < kPvSteps; ++kk) {
      b[kk] =
          sm90::mnmajor_desc(v_base + stage * Cfg::kKvBytes + kk * 16 * 128, Cfg::kKvBlockBytes);
    }
    sm90::fence_registers(b);
    sm90::wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < kPvSteps; ++kk) {
      Wgmma<kHeadDim, T>::template rs<1>(o_acc, p_in[kk], b[kk], true);
    }
    sm90::wgmma_commit();
  };
  // Masks S (tail keys, causal diagonal) when may_mask says the tile can need it (a constant
  // at every call, so that the tiles built with false carry no mask code), updates the running
  // max and sum, leaves P in p_next and the factor by which O must be rescaled in correction.
  auto softmax = [&](int kv0, bool may_mask, uint32_t(&p_next)[kPvSteps][4],
                     float(&correction)[2]) {
    const bool needs_mask =
        may_mask && (kv0 + Cfg::kBlockKv > n ||
                     (kCausal && kv0 + Cfg::kBlockKv - 1 >
                                     q0 + consumer * static_cast<int>(Cfg::kRowsPerConsumer)));
    if (needs_mask) {
#pragma unroll
      for (int j = 0; j < kSRegs / 4; ++j) {
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          const int key = kv0 + j * 8 + quad * 2 + (e % 2);
          const int row = q0 + local_row + (e / 2) * 8;
          if (key >= n || (kCausal && key > row)) s_acc[4 * j + e] = -INFINITY;
        }
      }
    }
    float shift[2];
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      float tile_max = -INFINITY;
#pragma unroll
      for (int j = 0; j < kSRegs / 4; ++j) {
        tile_max = fmaxf(tile_max, fmaxf(s_acc[4 * j + 2 * h], s_acc[4 * j + 2 * h + 1]));
      }
      tile_max = group_max<4>(tile_max);
      const RowRescale r = rescale_row(row_max[h], tile_max, p.scale_log2);
      shift[h] = r.shift;
      correction[h] = r.correction;
    }
    float tile_sum[2] = {0.f, 0.f};
#pragma unroll
    for (int j = 0; j < kSRegs / 4; ++j) {
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        s_acc[4 * j + e] = ptx::exp2_approx(fmaf(s_acc[4 * j + e], p.scale_log2, -shift[e / 2]));
        tile_sum[e / 2] += s_acc[4 * j + e];
      }
    }
#pragma unroll
    for (int h = 0; h < 2; ++h) row_sum[h] = row_sum[h] * correction[h] + tile_sum[h];
      // Two adjacent 8-column blocks of the S accumulator form one 16-key A fragment.
#pragma unroll
    for (int kk = 0; kk < kPvSteps; ++kk) {
      p_next[kk][0] = pack2<T>(s_acc[8 * kk + 0], s_acc[8 * kk + 1]);
      p_next[kk][1] = pack2<T>(s_acc[8 * kk + 2], s_acc[8 * kk + 3]);
      p_next[kk][2] = pack2<T>(s_acc[8 * kk + 4], s_acc[8 * kk + 5]);
      p_next[kk][3] = pack2<T>(s_acc[8 * kk + 6], s_acc[8 * kk + 7]);
    }
  };
  auto release = [&](uint64_t* bar) {
    __syncwarp();
    if (lane == 0) sm90::mbarrier_arrive(bar);
  };
  // The ring position of the item's key tile `tile`.
  auto stage_of = [&](int tile) { return (kv_first + tile) % kStages; };
  auto parity_of = [&](int tile) {
    return static_cast<uint32_t>(((kv_first + tile) / kStages) & 1);
  };

  // Ping-pong (kPingPong): the consumers take turns issuing their GEMMs; named barrier 3 + c
  // opens consumer c's turn, so one warpgroup's softmax runs under the other's GEMMs. The turns
  // run on across work items, so that consumer 0 can start its next item while consumer 1
  // finishes the last: consumer 1 opens consumer 0's first turn once, every turn hands over, and
  // consumer 0 takes the last hand-over before it leaves (opening the turns anew for each item
  // would leave consumer 0 idle at every item's start).
  auto turn_begin = [&] {
    if constexpr (kPingPong) sm90::named_barrier_sync(3 + consumer, 256);
  };
  auto turn_end = [&] {
    if constexpr (kPingPong) sm90::named_barrier_arrive(3 + (1 - consumer), 256);
  };

  // One key tile after the first: S(tile) and P(tile-1)·V(tile-1) in flight together, the
  // softmax of S(tile) into p_next while P·V runs. P alternates between two register sets
  // (no copy), so nothing rewrites P·V's operand registers while it is in flight.
  auto step = [&](int tile, bool may_mask, uint32_t(&p_cur)[kPvSteps][4],
                  uint32_t(&p_next)[kPvSteps][4]) {
    const int stage = stage_of(tile);
    const int prev = stage_of(tile - 1);
    sm90::mbarrier_wait(&k_full[stage], parity_of(tile));
    sm90::mbarrier_wait(&v_full[prev], parity_of(tile - 1));
    turn_begin();
    issue_qk(stage);
    issue_pv(prev, p_cur);
    turn_end();
    sm90::wgmma_wait<1>();  // S(tile) is ready; P(tile-1)·V(tile-1) may still run
    sm90::fence_registers(s_acc);
    release(&k_empty[stage]);
    if (tile == num_kv_tiles - 1) sm90::mbarrier_arrive(q_empty);  // the item's last read of Q
    float correction[2];
    softmax(tile * Cfg::kBlockKv, may_mask, p_next, correction);
    sm90::wgmma_wait<0>();
    sm90::fence_registers(o_acc);
#pragma unroll
    for (int kk = 0; kk < kPvSteps; ++kk) sm90::fence_registers(p_cur[kk]);
    release(&v_empty[prev]);
#pragma unroll
    for (int j = 0; j < kORegs / 4; ++j) {
      o_acc[4 * j + 0] *= correction[0];
      o_acc[4 * j + 1] *= correction[0];
      o_acc[4 * j + 2] *= correction[1];
      o_acc[4 * j + 3] *= correction[1];
    }
    sm90::fence_registers(o_acc);
  };
  auto finish = [&](const uint32_t(&p_last)[kPvSteps][4]) {
    const int last = num_kv_tiles - 1;
    sm90::mbarrier_wait(&v_full[stage_of(last)], parity_of(last));
    turn_begin();
    issue_pv(stage_of(last), p_last);
    turn_end();
    sm90::wgmma_wait<0>();
    sm90::fence_registers(o_acc);
    release(&v_empty[stage_of(last)]);
  };

  if constexpr (kPingPong) {
    if (consumer == 1) sm90::named_barrier_arrive(3, 256);
  }
  for (int use = 0;; ++use) {
    sm90::mbarrier_wait(q_full, use & 1);
    const int t = slots[use % 2];
    if (t < 0) {
      if constexpr (kPingPong) {
        if (consumer == 0) sm90::named_barrier_sync(3, 256);
      }
      break;
    }
    {
      const int i = t % p.num_q_tiles;
      q0 = (kCausal ? p.num_q_tiles - 1 - i : i) * Cfg::kBlockQ;
      num_kv_tiles = ceil_div(kCausal ? min(n, q0 + Cfg::kBlockQ) : n, Cfg::kBlockKv);
    }
#pragma unroll
    for (int i = 0; i < kORegs; ++i) o_acc[i] = 0.f;
    row_max[0] = row_max[1] = -INFINITY;
    row_sum[0] = row_sum[1] = 0.f;
    uint32_t p_a[kPvSteps][4];
    uint32_t p_b[kPvSteps][4];
    {
      // First tile: S(0), softmax; O is still zero, so no rescaling.
      sm90::mbarrier_wait(&k_full[stage_of(0)], parity_of(0));
      turn_begin();
      issue_qk(stage_of(0));
      turn_end();
      sm90::wgmma_wait<0>();
      sm90::fence_registers(s_acc);
      release(&k_empty[stage_of(0)]);
      if (num_kv_tiles == 1) sm90::mbarrier_arrive(q_empty);
      float correction[2];
      softmax(0, true, p_a, correction);
    }
    int tile = 1;
    if constexpr (Cfg::kPeelLastTile) {
      for (; tile + 2 < num_kv_tiles; tile += 2) {
        step(tile, false, p_a, p_b);
        step(tile + 1, false, p_b, p_a);
      }
      if (tile + 1 < num_kv_tiles) {
        step(tile, false, p_a, p_b);
        step(tile + 1, true, p_b, p_a);
        finish(p_a);
      } else if (tile < num_kv_tiles) {
        step(tile, true, p_a, p_b);
        finish(p_b);
      } else {
        finish(p_a);
      }
    } else {
      for (; tile + 1 < num_kv_tiles; tile += 2) {
        step(tile, true, p_a, p_b);
        step(tile + 1, true, p_b, p_a);
      }
      if (tile < num_kv_tiles) {
        step(tile, true, p_a, p_b);
        finish(p_b);
      } else {
        finish(p_a);
      }
    }
    kv_first += num_kv_tiles;

    // ---- epilogue ----
    float inv_sum[2];
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      row_sum[h] = group_sum<4>(row_sum[h]);
      inv_sum[h] = row_sum[h] > 0.f ? 1.f / row_sum[h] : 0.f;
    }
    // This consumer's rows of the O staging tile are free once the previous item's store has
    // read them.
    if (thread == 0) sm90::tma_store_wait_read();
    sm90::named_barrier_sync(1 + consumer, 128);
#pragma unroll
    for (int j = 0; j < kORegs / 4; ++j) {
      const int col = j * 8 + quad * 2;
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        *reinterpret_cast<uint32_t*>(
            s_o + sm90::swizzled_offset(local_row + 8 * h, col, Cfg::kQBlockBytes)) =
            pack2<T>(o_acc[4 * j + 2 * h] * inv_sum[h], o_acc[4 * j + 2 * h + 1] * inv_sum[h]);
      }
    }
    sm90::fence_proxy_async();
    sm90::named_barrier_sync(1 + consumer, 128);
    const int head = t / p.num_q_tiles;
    if (thread == 0) {
#pragma unroll
      for (int b = 0; b < Cfg::kColBlocks; ++b) {
        sm90::tma_store_3d(&o_map,
                           s_o + b * Cfg::kQBlockBytes + consumer * Cfg::kRowsPerConsumer * 128,
                           b * 64, q0 + consumer * Cfg::kRowsPerConsumer, head);
      }
      sm90::tma_store_commit();
    }
    if (quad == 0) {
      float* lse = p.lse + static_cast<std::size_t>(head) * n;
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int row = q0 + local_row + 8 * h;
        if (row < n) lse[row] = row_max[h] * p.scale + logf(row_sum[h]);
      }
    }
  }
  if (thread == 0) sm90::tma_store_wait_read();
}
template <typename T, int kHeadDim, bool kCausal>
cudaError_t launch_v3_forward(const AttentionShape& shape, const AttentionBuffers& buffers,
                              V3FwdParams params, cudaStream_t stream) {
  using Cfg = V3FwdConfig<kHeadDim>;
  const auto rows = static_cast<std::uint64_t>(shape.seq_len);
  const auto heads = static_cast<std::uint64_t>(shape.batch) * shape.heads;
  CUtensorMap q_map, k_map, v_map, o_map;
  using sm90::TmaElement;
  using sm90::TmaSwizzle;
  constexpr TmaElement kElement = kIsBf16<T> ? TmaElement::kBfloat16 : TmaElement::kHalf;
  ROOFLINE_RETURN_IF_ERROR(sm90::encode_tensor_map_3d(&q_map, kElement, buffers.q, kHeadDim, rows,
                                                      heads, 64, Cfg::kRowsPerConsumer,
                                                      TmaSwizzle::k128B));
  ROOFLINE_RETURN_IF_ERROR(sm90::encode_tensor_map_3d(&k_map, kElement, buffers.k, kHeadDim, rows,
                                                      heads, 64, Cfg::kBlockKv, TmaSwizzle::k128B));
  ROOFLINE_RETURN_IF_ERROR(sm90::encode_tensor_map_3d(&v_map, kElement, buffers.v, kHeadDim, rows,
                                                      heads, 64, Cfg::kBlockKv, TmaSwizzle::k128B));
  ROOFLINE_RETURN_IF_ERROR(sm90::encode_tensor_map_3d(&o_map, kElement, buffers.o, kHeadDim, rows,
                                                      heads, 64, Cfg::kRowsPerConsumer,
                                                      TmaSwizzle::k128B));
  auto kernel = flash_v3_forward_kernel<T, kHeadDim, kCausal>;
  ROOFLINE_RETURN_IF_ERROR(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                                static_cast<int>(Cfg::kSmemBytes)));
  // Persistent: one CTA per SM (one fits) works through the items, so that a CTA's loads of its
  // next item run under the epilogue of the last. A counter in the workspace hands the items out
  // in order to whichever CTA asks first (causal items differ in length), zeroed here before
  // the launch.
  params.num_q_tiles = ceil_div(shape.seq_len, Cfg::kBlockQ);
  params.total_tiles = params.num_q_tiles * static_cast<int>(heads);
  int sms = 0;
  ROOFLINE_RETURN_IF_ERROR(current_context_sms(&sms));
  // Persistent: one CTA per SM, items taken from a counter rather than a static stride, since
  // the SMs of one GPU do not run at one speed (the counter lets the fast ones take more items).
  // docs/results/2026-12-02-h200-flash-v3-forward-tuning.md has the measurements against one CTA
  // per item and the stride.
  const int ctas = std::min(params.total_tiles, sms);
  params.next_tile = nullptr;
  if (ctas < params.total_tiles) {
    params.next_tile = static_cast<unsigned*>(buffers.workspace);
    ROOFLINE_RETURN_IF_ERROR(cudaMemsetAsync(params.next_tile, 0, sizeof(unsigned), stream));
  }
  kernel<<<ctas, Cfg::kThreads, Cfg::kSmemBytes, stream>>>(q_map, k_map, v_map, o_map, params);
  return cudaGetLastError();
}

template <typename T, int kHeadDim>
cudaError_t launch_v3_forward_for_dim(const AttentionShape& shape, const AttentionBuffers& buffers,
                                      const V3FwdParams& params, cudaStream_t stream) {
  return shape.causal ? launch_v3_forward<T, kHeadDim, true>(shape, buffers, params, stream)
                      : launch_v3_forward<T, kHeadDim, false>(shape, buffers, params, stream);
}

template <int kHeadDim>
cudaError_t launch_v3_forward_for_type(const AttentionShape& shape, const AttentionBuffers& buffers,
                                       const V3FwdParams& params, cudaStream_t stream) {
  return shape.dtype == DType::kBf16
             ? launch_v3_forward_for_dim<__nv_bfloat16, kHeadDim>(shape, buffers, params, stream)
             : launch_v3_forward_for_dim<__half, kHeadDim>(shape, buffers, params, stream);
}

}  // namespace

// Work model: FLOPs = 4·B·H·N²·d (two GEMMs, FMA = 2), halved when causal;
// minimum DRAM bytes = 2·B·H·N·d·(3 reads + 1 write) + 4·B·H·N (LSE).
cudaError_t flash_v3_forward(const AttentionShape& shape, const AttentionBuffers& buffers,
                             cudaStream_t stream) {
  V3FwdParams params{};
  params.lse = buffers.lse;
  params.seq_len = shape.seq_len;
  params.scale = 1.f / sqrtf(static_cast<float>(shape.head_dim));
  params.scale_log2 = params.scale * kLog2e;
  switch (shape.head_dim) {
    case 64:
      return launch_v3_forward_for_type<64>(shape, buffers, params, stream);
    case 128:
      return launch_v3_forward_for_type<128>(shape, buffers, params, stream);
    default:
      return cudaErrorNotSupported;
  }
}

}  // namespace roofline::kernels

// The analytic model's tiles (catalog.hpp) are this file's own.
namespace roofline::kernels {
namespace {
static_assert(forward_tiles_are("flash-v3", 64, V3FwdConfig<64>::kBlockQ,
                                V3FwdConfig<64>::kBlockKv));
static_assert(forward_tiles_are("flash-v3", 128, V3FwdConfig<128>::kBlockQ,
                                V3FwdConfig<128>::kBlockKv));
}  // namespace
}  // namespace roofline::kernels
