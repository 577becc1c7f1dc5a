// flash-decode: decode attention, q_len new query tokens per sequence against a KV cache.
//
// What it demonstrates: the memory-bound end of attention. Each new token of each query head
// attends to its sequence's whole cache (kv_len keys of its key/value head), so every byte of
// K and V is read once per decode step and used by only the group's heads × new tokens rows;
// the kernel is judged by how close it streams the cache to the DRAM roof, not by FLOP/s. The
// math is flash-v2's: S = Q·Kᵀ and O += P·V as mma.sync.m16n8k16 (FP16 or BF16 in, FP32
// accumulate) fed by ldmatrix (.trans for V), an online softmax in exp2 with log2(e)·scale
// folded into one FMA, P reused from the S accumulators as the A operand.
//
// Work split (decode_plan.hpp, which the analytic model reads too): one CTA of 4 warps per
// (sequence, key/value head, block of up to 64 query rows, part of the keys). The rows of a
// key/value head are its group's heads × new tokens (row g·q_len + i: head kv_head·group + g,
// token i), contiguous in q, o and lse, and padded to 16-row MMA tiles (1, 2 or 4 of them, a
// template parameter). The warps split each tile of 64 keys between them as far as the row
// tiles leave room (4 row tiles: a warp each, all keys; 1 row tile: 16 keys a warp), keep
// their own (max, sum, O) and merge them through shared memory at the end. The keys stream
// through shared memory in 64-key tiles of K and V, in a ring of 3 stages: while one tile is
// multiplied, up to two are in flight, 64 KB of cache per CTA at d = 128 (32 KB at d = 64) and
// 128 KB per SM at 2 (4) CTAs per SM (decode_ctas_per_sm), which is what a read stream needs at
// the H200's bandwidth and latency. At d = 64, 4 CTAs of 3 stages beat 3 of 4 where a batch's
// CTAs fill the GPU (B64 H32/8 KV 8192: 512 CTAs are one wave of 528 slots, not 1.3 of 396: 376
// µs against 414 on an H100) and match them elsewhere (within 1.3% on B1-8 rows).
// - sm_90 and later: bulk tensor copies (TMA, hopper/tma.cuh). Thread 0 issues each tile as
//   boxes of 64 columns by 64 rows (by the page where a page is shorter) of a tensor map over the
//   cache, in the 128-byte swizzle that keeps ldmatrix free of bank conflicts without padding,
//   and the tile completes on its stage's mbarrier: no thread spends registers or issue slots on
//   the stream, which then runs at the bulk-copy rate `calibrate` measures (dram_read_bulk)
//   rather than the 16-byte loads' (dram_read). A box brings rows past the sequence's end (the
//   rest of its last page; a contiguous cache longer than this sequence): masked to -inf in S
//   and zeroed in V before use; boxes wholly past a part's keys are not issued.
// - Earlier GPUs: 16-byte cp.async.cg (L2 only) by every thread, into rows padded by 16 bytes
//   (flash_v2.cuh) for conflict-free ldmatrix; rows past kv_len are zero-filled by the copy.
// Q is staged once through the last stage before the ring first reaches it and then stays in
// registers. Keys past kv_len, and past a new token's own position when causal, are masked to
// -inf in S. A paged cache is the same loop with each box's (or row's) page from the block
// table, read one tile ahead of its copy.
// Split-KV: when the batch's CTAs would leave half of the GPU's slots idle (decode_plan.hpp),
// each sequence's keys are cut into parts on tile boundaries; each part's CTA writes its normalised
// FP32 O and its LSE to the workspace (an empty part writes 0 and -inf), and a combine kernel
// weights the parts by exp(lse_part - lse) into o and lse. The combine is launched as a
// programmatic dependent (sm_90): its CTAs are resident before the split kernel ends and wait for
// it on the device, so no launch gap separates the two. With one part the main kernel writes o and
// lse itself.
//
// Regime: against DRAM, FLOPs = 4·d·rows per key and bytes = 4·d per key and key/value head
// (K and V, 2 bytes each), so the intensity is about rows = heads/kv_heads · q_len FLOP per
// byte of cache (1 for MHA decoding one token, 8 for GQA-8, 128 for GQA-8 verifying 16
// tokens), left of the H200's ridge (~150-200 FLOP/byte for mma.sync) for every usual shape:
// memory-bound, judged against the DRAM bandwidth roof; extra rows are nearly free until the
// group approaches the ridge. Besides the stream itself each launch pays a ramp (the first
// tiles' latency, the last tiles draining) and, split, the combine, which matter for caches of
// a few hundred MB and less. Measured (docs/results/2026-12-06-h100-decode-tma.md, an H100 at
// 3,262 GB/s of read bandwidth by `calibrate`'s bulk copies): 95.6-98.9% of it for contiguous
// caches of 1 GB and more (26 rows), 87-95% for 250 MB to 1 GB; a bulk stream with no compute
// takes about 3.5 µs beyond its bytes (84% of that rate for 67 MB, 91% for 134 MB), and this
// kernel 3-8 µs more (the split's combine, each CTA's last tile and merge). Where it lands
// (regime, binding roof, share of it, advice), row by row:
//   cuflash-roofline run --kernel flash-decode --batch 8 --kv-heads 8 --q-len 1 --seq 8192
#include <cfloat>

#include "kernels/catalog.hpp"
#include "kernels/decode_plan.hpp"
#include "kernels/flash_v2.cuh"
#include "kernels/hopper/tensor_map.hpp"
#include "kernels/hopper/tma.cuh"
#include "kernels/launchers.hpp"
#include "kernels/online_softmax.cuh"

namespace roofline::kernels {
namespace {

// sm_90's shared memory per SM (228 KB; 227 KB for one CTA) and what each resident CTA costs
// the driver on top of its own.
constexpr std::size_t kSmemPerSm = 228 * 1024;
constexpr std::size_t kSmemReservedPerCta = 1024;

// Whether this compilation of the kernels can issue bulk tensor copies (sm_90 and later; the
// host pass compiles no kernel body).
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
constexpr bool kTmaCompiled = false;
#else
constexpr bool kTmaCompiled = true;
#endif

// kTma: the K/V stream by bulk tensor copies (sm_90 and later) into 128-byte-swizzled tiles;
// otherwise by 16-byte cp.async into rows padded by 16 bytes.
template <int kHeadDim, bool kTma>
struct DecodeConfig {
  static constexpr int kWarps = 4;
  static constexpr int kThreads = kWarps * 32;
  static constexpr int kMaxRowTiles = kDecodeRowsPerCta / kDecodeRowTile;
  static constexpr int kBlockKv = kDecodeKeysPerTile;
  static constexpr int kStride = flash_v2::kRowStride<kHeadDim>;  // padded row: 16-bit elements
  static constexpr int kTileKv = kBlockKv * (kTma ? kHeadDim : kStride);  // 16-bit elements
  // A swizzled tile is kHeadDim / 64 blocks of 64 columns (128-byte rows), each kBlockBytes.
  static constexpr std::uint32_t kBlockBytes = kBlockKv * 128;
  // Stages of K and V: as many as decode_ctas_per_sm CTAs of this size leave room for.
  static constexpr int kStages = 3;
  static constexpr std::size_t kStageBytes = 2 * kTileKv * sizeof(__half);
  static constexpr std::size_t kStagesBytes = kStages * kStageBytes;
  // TMA: a barrier per stage after the stages, and room to align the swizzled tiles to 1024
  // bytes (the dynamic shared-memory window only promises 16).
  static constexpr std::size_t kBarrierBytes = kTma ? kStages * sizeof(std::uint64_t) : 0;
  static constexpr std::size_t kAlignBytes = kTma ? 1024 - 16 : 0;
  static constexpr std::size_t kSmemBytes = kStagesBytes + kBarrierBytes + kAlignBytes;
  static constexpr int kCtasPerSm = decode_ctas_per_sm(kHeadDim);
  // The cp.async work of one tile of K (or V): 16-byte chunks, kRowsPerPass rows per pass of
  // the whole CTA.
  static constexpr int kChunksPerRow = kHeadDim / 8;
  static constexpr int kRowsPerPass = kThreads / kChunksPerRow;
  static constexpr int kPasses = kBlockKv / kRowsPerPass;
  // The end-of-loop merge: each warp's 16 x d FP32 O tile (stride padded by 8 floats so that
  // the accumulator layout's rows fall into different banks), then each warp's row max and sum.
  static constexpr int kMergeStride = kHeadDim + 8;
  static constexpr std::size_t kMergeBytes =
      (kWarps * 16 * kMergeStride + 2 * kWarps * 16) * sizeof(float);

  static_assert(kPasses * kRowsPerPass == kBlockKv, "whole cp.async passes per tile");
  static_assert(!kTma || kTileKv * sizeof(__half) == kHeadDim / 64 * kBlockBytes,
                "a swizzled tile is kHeadDim / 64 blocks of 64 columns");
  static_assert(kMaxRowTiles == kWarps, "a warp per row tile at most");
  static_assert(kDecodeRowsPerCta * kStride * sizeof(__half) <= kStageBytes,
                "Q is staged through one K/V stage");
  static_assert(kMergeBytes <= kStagesBytes, "the merge reuses the stages");
  static_assert(kSmemBytes <= kSmemPerSm - kSmemReservedPerCta, "one CTA fits an SM");
  static_assert(kCtasPerSm * (kSmemBytes + kSmemReservedPerCta) <= kSmemPerSm,
                "decode_ctas_per_sm CTAs fit an SM's shared memory (sm_90)");
};

template <typename T>
struct DecodeParams {
  // The TMA stream's views of K and V: [depth][rows][d] with depth = sequence · kv_heads + key/
  // value head and rows = seq_len (contiguous), or depth = page · kv_heads + key/value head and
  // rows = page_size (paged); boxes of 64 columns x box_rows rows.
  CUtensorMap k_map;
  CUtensorMap v_map;
  int box_rows;  // 64, or the page size when it is smaller
  const T* q;    // [B, heads, q_len, d]
  const T* k;    // [B, kv_heads, seq_len, d] or pages [pages, kv_heads, page_size, d]
  const T* v;
  T* o;                    // [B, heads, q_len, d] (one part)
  float* lse;              // [B, heads, q_len] (one part)
  float* part_o;           // [splits, B, heads, q_len, d] (several parts)
  float* part_lse;         // [splits, B, heads, q_len] (several parts)
  const int* kv_lens;      // [B] or nullptr
  const int* block_table;  // [B, max_blocks] (paged)
  int heads;
  int kv_heads;
  int group;  // heads / kv_heads
  int q_len;
  int rows;  // group · q_len: query rows of one key/value head
  int seq_len;
  int splits;
  std::size_t out_rows;  // B · heads · q_len: rows of o, lse and of each part's partials
  int page_shift;        // log2(page_size) (paged)
  int max_blocks;        // ceil(seq_len / page_size) (paged)
  bool causal;
  float scale;       // 1/sqrt(d)
  float scale_log2;  // scale · log2(e)
};

// One CTA's work (the kernel below). Grid: x = row block, y = part of the keys, z = sequence ·
// kv_heads + key/value head; CTAs of one head's row blocks are neighbours, so the blocks after
// the first read the cache from L2.
template <typename T, int kHeadDim, int kRowTiles, bool kPaged, bool kTma>
__device__ __forceinline__ void decode_cta(const DecodeParams<T>& p) {
  using Cfg = DecodeConfig<kHeadDim, kTma>;
  constexpr int kStride = Cfg::kStride;
  constexpr int kStages = Cfg::kStages;
  constexpr int kKeyGroups = Cfg::kWarps / kRowTiles;    // warps sharing a row tile
  constexpr int kWarpKeys = Cfg::kBlockKv / kKeyGroups;  // keys of a tile per warp
  constexpr int kSTiles = kWarpKeys / 8;                 // 8-column n-tiles of S
  constexpr int kOTiles = kHeadDim / 8;                  // 8-column n-tiles of O
  constexpr int kCtaRows = kRowTiles * 16;
  static_assert(Cfg::kWarps % kRowTiles == 0 && kWarpKeys % 16 == 0, "whole k-steps per warp");

  extern __shared__ __align__(16) unsigned char smem_raw[];
  unsigned char* smem = smem_raw;
  if constexpr (kTma) smem += (1024 - (ptx::smem_address(smem_raw) & 1023)) & 1023;
  T* s_kv = reinterpret_cast<T*>(smem);  // stage s: K at 2s·kTileKv, V after it
  T* s_q = s_kv + (kStages - 1) * 2 * Cfg::kTileKv;
  std::uint64_t* full = reinterpret_cast<std::uint64_t*>(smem + Cfg::kStagesBytes);  // TMA

  const int tid = threadIdx.x;
  const int warp = tid / 32;
  const int lane = tid % 32;
  const int quad = lane % 4;
  const int row_tile = warp / kKeyGroups;
  const int key_group = warp % kKeyGroups;

  const int split = blockIdx.y;
  const int b = blockIdx.z / p.kv_heads;
  const int kv_head = blockIdx.z % p.kv_heads;
  const int cta_row0 = blockIdx.x * kDecodeRowsPerCta;  // within the key/value head's rows
  const int cta_rows = min(kCtaRows, p.rows - cta_row0);
  // Row 0 of the key/value head's group in q, o and lse ([B, heads, q_len] rows).
  const std::size_t group_row0 =
      (static_cast<std::size_t>(b) * p.heads + static_cast<std::size_t>(kv_head) * p.group) *
      p.q_len;

#if __CUDA_ARCH__ >= 900
  // Split: the combine kernel (launched programmatically dependent) may be scheduled now; it
  // waits in griddepcontrol.wait until this grid has finished and its partials are visible, so
  // that its launch and CTA start overlap this grid instead of following it.
  if (p.splits > 1) asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
  // Q first: its copy does not wait for the sequence's length.
  flash_v2::load_tile_async<kCtaRows, kHeadDim, Cfg::kThreads>(
      s_q, p.q + (group_row0 + cta_row0) * kHeadDim, 0, cta_rows, tid);

  // Lengths outside 0..seq_len would read past the cache (or the block table): clamped.
  const int kv_len = min(max(p.kv_lens != nullptr ? p.kv_lens[b] : p.seq_len, 0), p.seq_len);
  const int keys_per_split = decode_keys_per_split(kv_len, p.splits);
  const int key_begin = min(split * keys_per_split, kv_len);
  const int key_end = min(key_begin + keys_per_split, kv_len);
  const int num_tiles = ceil_div(key_end - key_begin, Cfg::kBlockKv);

  const int* table = kPaged ? p.block_table + static_cast<std::size_t>(b) * p.max_blocks : nullptr;
  const std::size_t head_row0 =
      (static_cast<std::size_t>(b) * p.kv_heads + kv_head) * static_cast<std::size_t>(p.seq_len);

  // cp.async: this thread's chunk of each copy pass, row tid / kChunksPerRow + pass ·
  // kRowsPerPass. TMA: thread 0 issues every box, up to kBlockKv / 16 of them a tile (paged).
  const int copy_row = tid / Cfg::kChunksPerRow;
  const int copy_col = (tid % Cfg::kChunksPerRow) * 8;
  constexpr int kPageSlots = kTma ? (kPaged ? Cfg::kBlockKv / 16 : 1) : Cfg::kPasses;
  const bool issuer = !kTma || tid == 0;

  // Pages of tile `tile` (paged only; 0 past the part): of this thread's rows (cp.async), of
  // each box (TMA).
  auto fetch_pages = [&](int tile, int(&pages)[kPageSlots]) {
    if constexpr (kPaged) {
#pragma unroll
      for (int i = 0; i < kPageSlots; ++i) {
        const int key = key_begin + tile * Cfg::kBlockKv +
                        (kTma ? i * p.box_rows : copy_row + i * Cfg::kRowsPerPass);
        pages[i] = key < key_end ? __ldg(table + (key >> p.page_shift)) : 0;
      }
    }
  };
  // Tile `tile` of K and V into its stage. cp.async: every thread its chunks, rows past the
  // part zero-filled. TMA: thread 0 the boxes, completing on the stage's barrier; boxes wholly
  // past the part are left out, and the rows past the sequence's keys that a box does bring
  // (the rest of its last page, or of a contiguous cache longer than this sequence) are
  // masked in S and zeroed in V before use (zero_v_tail).
  auto issue_tile = [&](int tile, const int(&pages)[kPageSlots]) {
    T* tile_k = s_kv + (tile % kStages) * 2 * Cfg::kTileKv;
    T* tile_v = tile_k + Cfg::kTileKv;
    const int key0 = key_begin + tile * Cfg::kBlockKv;
    if constexpr (kTma) {
#if __CUDA_ARCH__ >= 900
      const std::uint32_t bar = sm90::smem_u32(full + tile % kStages);
      const int boxes = min(Cfg::kBlockKv / p.box_rows, ceil_div(key_end - key0, p.box_rows));
      sm90::mbarrier_arrive_expect_tx(
          bar, static_cast<std::uint32_t>(boxes * p.box_rows * kHeadDim * 2 * sizeof(T)));
#pragma unroll
      for (int box = 0; box < kPageSlots; ++box) {
        if (box >= boxes) break;
        const int row = kPaged ? (key0 + box * p.box_rows) & ((1 << p.page_shift) - 1) : key0;
        const int depth = (kPaged ? pages[box] : b) * p.kv_heads + kv_head;
        const std::uint32_t at = static_cast<std::uint32_t>(box * p.box_rows) * 128;
#pragma unroll
        for (int block = 0; block < kHeadDim / 64; ++block) {
          const std::uint32_t offset = at + block * Cfg::kBlockBytes;
          sm90::tma_load_3d(ptx::smem_address(tile_k) + offset, &p.k_map, bar, block * 64, row,
                            depth);
          sm90::tma_load_3d(ptx::smem_address(tile_v) + offset, &p.v_map, bar, block * 64, row,
                            depth);
        }
      }
#endif
    } else {
#pragma unroll
      for (int i = 0; i < Cfg::kPasses; ++i) {
        const int r = copy_row + i * Cfg::kRowsPerPass;
        const int key = key0 + r;
        const bool valid = key < key_end;
        std::size_t row;
        if constexpr (kPaged) {
          const int in_page = key & ((1 << p.page_shift) - 1);
          row = ((static_cast<std::size_t>(pages[i]) * p.kv_heads + kv_head) << p.page_shift) +
                in_page;
        } else {
          row = head_row0 + key;
        }
        // With src-size 0 nothing is read, but the address must still be a valid global one.
        const std::size_t offset = valid ? row * kHeadDim + copy_col : 0;
        const int at = r * kStride + copy_col;
        ptx::cp_async_16(ptx::smem_address(tile_k + at), p.k + offset, valid);
        ptx::cp_async_16(ptx::smem_address(tile_v + at), p.v + offset, valid);
      }
    }
  };
  // TMA: V's rows `first`.. of tile `tile` zeroed (keys past the sequence: P is 0 there, but
  // 0 · NaN is not). A swizzled row keeps its 128 bytes, only their order changes.
  auto zero_v_tail = [&](int tile, int first) {
    unsigned char* tile_v =
        reinterpret_cast<unsigned char*>(s_kv + (tile % kStages) * 2 * Cfg::kTileKv + Cfg::kTileKv);
    const int chunks = (Cfg::kBlockKv - first) * (128 / 16);
#pragma unroll
    for (int block = 0; block < kHeadDim / 64; ++block) {
      uint4* dst = reinterpret_cast<uint4*>(tile_v + block * Cfg::kBlockBytes + first * 128);
      for (int i = tid; i < chunks; i += Cfg::kThreads) dst[i] = make_uint4(0u, 0u, 0u, 0u);
    }
  };
  // The ldmatrix addresses of the loop below: lane l gives row l % 8 of matrix l / 8, whose
  // keys and columns the two products choose. S = Q·Kᵀ, k-step kk, key pair `pair`: key
  // warp_key0 + 16·pair + 8·(l / 16) + l % 8, column 16·kk + 8·((l / 8) % 2). O += P·V (.trans),
  // k-step kk, column pair `pair`: key warp_key0 + 16·kk + 8·((l / 8) % 2) + l % 8, column
  // 16·pair + 8·(l / 16). Padded rows: key · kStride + column. Swizzled (sm90::swizzled_offset):
  // each row's low three bits are l % 8, so the 16-byte chunk 2j + h (j = the 16-column step
  // within a 64-column block) lands at chunk (2j + h) ^ (l % 8): four offsets per thread and
  // operand, kept in registers, and the rest immediates.
  const int warp_key0 = key_group * kWarpKeys;  // within the tile
  const int k_lane_key = warp_key0 + (lane / 16) * 8 + lane % 8;
  const int v_lane_key = warp_key0 + ((lane / 8) % 2) * 8 + lane % 8;
  std::uint32_t k_chunk[4];
  std::uint32_t v_chunk[4];
#pragma unroll
  for (int j = 0; j < 4; ++j) {
    k_chunk[j] = static_cast<std::uint32_t>(((2 * j + (lane / 8) % 2) ^ (lane % 8)) * 16);
    v_chunk[j] = static_cast<std::uint32_t>(((2 * j + lane / 16) ^ (lane % 8)) * 16);
  }
  auto k_address = [&](std::uint32_t tile_k, int kk, int pair) -> std::uint32_t {
    if constexpr (kTma) {
      return tile_k + (kk / 4) * Cfg::kBlockBytes + (k_lane_key + pair * 16) * 128 +
             k_chunk[kk % 4];
    } else {
      return tile_k + ((k_lane_key + pair * 16) * kStride + kk * 16 + ((lane / 8) % 2) * 8) * 2;
    }
  };
  auto v_address = [&](std::uint32_t tile_v, int kk, int pair) -> std::uint32_t {
    if constexpr (kTma) {
      return tile_v + (pair / 4) * Cfg::kBlockBytes + (v_lane_key + kk * 16) * 128 +
             v_chunk[pair % 4];
    } else {
      return tile_v + ((v_lane_key + kk * 16) * kStride + pair * 16 + (lane / 16) * 8) * 2;
    }
  };

  // Prologue: tiles 0 .. kStages-2 (cp.async: one commit group each, Q riding in the first).
  // The pages of all of them are fetched before the first copy so that their latencies overlap.
  int next_pages[kPageSlots];  // of tile `tile + kStages - 1`, fetched a tile ahead
  if (issuer) {
    if constexpr (kTma) {
#if __CUDA_ARCH__ >= 900
      sm90::tma_prefetch_descriptor(&p.k_map);
      sm90::tma_prefetch_descriptor(&p.v_map);
      for (int s = 0; s < kStages; ++s) sm90::mbarrier_init(full + s, 1);
      sm90::fence_barrier_init();  // the others wait on them after the barrier below
#endif
    }
    int pages[kStages - 1][kPageSlots];
#pragma unroll
    for (int s = 0; s < kStages - 1; ++s) fetch_pages(s, pages[s]);
#pragma unroll
    for (int s = 0; s < kStages - 1; ++s) {
      if (s < num_tiles) issue_tile(s, pages[s]);
      if constexpr (!kTma) ptx::cp_async_commit();
    }
    fetch_pages(kStages - 1, next_pages);
  }
  if constexpr (kTma) {
    ptx::cp_async_commit();  // Q's copy alone
    ptx::cp_async_wait<0>();
  } else {
    ptx::cp_async_wait<kStages - 2>();
  }
  __syncthreads();
  // Q fragments (A operand, 16 rows x kHeadDim) of the warp's row tile, held for the loop.
  uint32_t q_frag[kHeadDim / 16][4];
#pragma unroll
  for (int kk = 0; kk < kHeadDim / 16; ++kk) {
    ptx::ldmatrix_x4(q_frag[kk], ptx::smem_address(s_q + (row_tile * 16 + lane % 16) * kStride +
                                                   kk * 16 + (lane / 16) * 8));
  }
  // Q lives in the last stage, which the first iteration's copy overwrites (TMA: through the
  // async proxy, after this thread's ordinary accesses).
#if __CUDA_ARCH__ >= 900
  if constexpr (kTma) sm90::fence_proxy_async();
#endif
  __syncthreads();

  // Accumulator element e of the warp: row row_tile·16 + lane/4 + 8·(e/2) of the CTA; the last
  // key each of the thread's two rows may see (its token's position when causal).
  const bool warp_has_rows = row_tile * 16 < cta_rows;
  int last_key[2];
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const int token = (cta_row0 + row_tile * 16 + lane / 4 + 8 * h) % p.q_len;
    last_key[h] = p.causal ? kv_len - p.q_len + token : kv_len - 1;
  }
  // Keys below this are seen by every row: a tile that ends there needs no element mask.
  const int unmasked_end = min(key_end, (p.causal ? kv_len - p.q_len : kv_len - 1) + 1);

  float o_acc[kOTiles][4];
#pragma unroll
  for (int t = 0; t < kOTiles; ++t) o_acc[t][0] = o_acc[t][1] = o_acc[t][2] = o_acc[t][3] = 0.f;
  float row_max[2] = {-INFINITY, -INFINITY};  // raw (unscaled) scores
  float row_sum[2] = {0.f, 0.f};              // this thread's share; the quad is summed at the end

#pragma unroll 1
  for (int tile = 0; tile < num_tiles; ++tile) {
    const int kv0 = key_begin + tile * Cfg::kBlockKv;
    // Tile `tile` has landed for every thread, and (after the barrier) every warp is done with
    // tile - 1, whose stage the copy below refills.
    if constexpr (kTma) {
#if __CUDA_ARCH__ >= 900
      sm90::mbarrier_wait(sm90::smem_u32(full + tile % kStages),
                          static_cast<std::uint32_t>((tile / kStages) & 1));
#endif
      const bool tail = kv0 + Cfg::kBlockKv > kv_len;  // the same for the whole CTA
      if (tail) zero_v_tail(tile, kv_len - kv0);
      if (tile > 0 || tail) __syncthreads();
    } else if (tile > 0) {
      ptx::cp_async_wait<kStages - 2>();
      __syncthreads();
    }
    if (issuer) {
      if (tile + kStages - 1 < num_tiles) issue_tile(tile + kStages - 1, next_pages);
      if constexpr (!kTma) ptx::cp_async_commit();
      fetch_pages(tile + kStages, next_pages);
    }

    if (!warp_has_rows) continue;
    const std::uint32_t tile_k = ptx::smem_address(s_kv + (tile % kStages) * 2 * Cfg::kTileKv);
    const std::uint32_t tile_v = tile_k + Cfg::kTileKv * sizeof(T);

    // S = Q K^T for the warp's 16 rows x kWarpKeys keys.
    float s[kSTiles][4];
#pragma unroll
    for (int t = 0; t < kSTiles; ++t) s[t][0] = s[t][1] = s[t][2] = s[t][3] = 0.f;
#pragma unroll
    for (int kk = 0; kk < kHeadDim / 16; ++kk) {
#pragma unroll
      for (int pair = 0; pair < kSTiles / 2; ++pair) {
        uint32_t bk[4];
        ptx::ldmatrix_x4(bk, k_address(tile_k, kk, pair));
        ptx::mma_m16n8k16<T>(s[2 * pair], q_frag[kk], bk[0], bk[1]);
        ptx::mma_m16n8k16<T>(s[2 * pair + 1], q_frag[kk], bk[2], bk[3]);
      }
    }

    // Only a part's last tile (keys past kv_len) and the tile of the last q_len keys (causal)
    // pay for the element mask.
    if (kv0 + Cfg::kBlockKv > unmasked_end) {
#pragma unroll
      for (int t = 0; t < kSTiles; ++t) {
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          const int key = kv0 + warp_key0 + t * 8 + quad * 2 + (e % 2);
          if (key >= key_end || key > last_key[e / 2]) s[t][e] = -INFINITY;
        }
      }
    }

    // Online softmax: new running max per row, reduced over the quad that shares the row.
    float shift[2];
    float correction[2];
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      float tile_max = -INFINITY;
#pragma unroll
      for (int t = 0; t < kSTiles; ++t) {
        tile_max = fmaxf(tile_max, fmaxf(s[t][2 * h], s[t][2 * h + 1]));
      }
      tile_max = group_max<4>(tile_max);
      const RowRescale r = rescale_row(row_max[h], tile_max, p.scale_log2);
      shift[h] = r.shift;
      correction[h] = r.correction;
    }
    float tile_sum[2] = {0.f, 0.f};
#pragma unroll
    for (int t = 0; t < kSTiles; ++t) {
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        s[t][e] = ptx::exp2_approx(fmaf(s[t][e], p.scale_log2, -shift[e / 2]));
        tile_sum[e / 2] += s[t][e];
      }
    }
#pragma unroll
    for (int h = 0; h < 2; ++h) row_sum[h] = row_sum[h] * correction[h] + tile_sum[h];
#pragma unroll
    for (int t = 0; t < kOTiles; ++t) {
      o_acc[t][0] *= correction[0];
      o_acc[t][1] *= correction[0];
      o_acc[t][2] *= correction[1];
      o_acc[t][3] *= correction[1];
    }

    // O += P V: two adjacent S n-tiles are one A fragment of a 16-key k-step.
#pragma unroll
    for (int kk = 0; kk < kWarpKeys / 16; ++kk) {
      uint32_t a[4];
      a[0] = pack2<T>(s[2 * kk][0], s[2 * kk][1]);
      a[1] = pack2<T>(s[2 * kk][2], s[2 * kk][3]);
      a[2] = pack2<T>(s[2 * kk + 1][0], s[2 * kk + 1][1]);
      a[3] = pack2<T>(s[2 * kk + 1][2], s[2 * kk + 1][3]);
#pragma unroll
      for (int pair = 0; pair < kOTiles / 2; ++pair) {
        uint32_t bv[4];
        ptx::ldmatrix_x4_trans(bv, v_address(tile_v, kk, pair));
        ptx::mma_m16n8k16<T>(o_acc[2 * pair], a, bv[0], bv[1]);
        ptx::mma_m16n8k16<T>(o_acc[2 * pair + 1], a, bv[2], bv[3]);
      }
    }
  }

  // Merge the key groups of each row tile through shared memory (the stages are free once the
  // last, empty, copy groups are drained and every warp has left the loop).
  ptx::cp_async_wait<0>();
  __syncthreads();
  float* s_o = reinterpret_cast<float*>(smem);  // [warp][16][kMergeStride]
  float* s_max = s_o + Cfg::kWarps * 16 * Cfg::kMergeStride;
  float* s_sum = s_max + Cfg::kWarps * 16;
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    row_sum[h] = group_sum<4>(row_sum[h]);
    if (quad == 0) {
      s_max[warp * 16 + lane / 4 + 8 * h] = row_max[h];
      s_sum[warp * 16 + lane / 4 + 8 * h] = row_sum[h];
    }
  }
  __syncthreads();
  float own_weight[2];  // this warp's share of the row: exp(m_own - m) / l
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const int r = lane / 4 + 8 * h;
    float m = -INFINITY;
#pragma unroll
    for (int g = 0; g < kKeyGroups; ++g) m = fmaxf(m, s_max[(row_tile * kKeyGroups + g) * 16 + r]);
    float l = 0.f;
#pragma unroll
    for (int g = 0; g < kKeyGroups; ++g) {
      const float mg = s_max[(row_tile * kKeyGroups + g) * 16 + r];
      if (mg != -INFINITY) {
        l +=
            s_sum[(row_tile * kKeyGroups + g) * 16 + r] * ptx::exp2_approx((mg - m) * p.scale_log2);
      }
    }
    own_weight[h] = row_max[h] == -INFINITY || l <= 0.f
                        ? 0.f
                        : ptx::exp2_approx((row_max[h] - m) * p.scale_log2) / l;
    // LSE of the row over this part's keys: -inf when it saw none.
    const int row = cta_row0 + row_tile * 16 + r;
    if (key_group == 0 && quad == 0 && row < p.rows) {
      const float lse = l > 0.f ? m * p.scale + logf(l) : -INFINITY;
      if (p.splits > 1) {
        p.part_lse[static_cast<std::size_t>(split) * p.out_rows + group_row0 + row] = lse;
      } else {
        p.lse[group_row0 + row] = lse;
      }
    }
  }
  float* merged = s_o + warp * 16 * Cfg::kMergeStride;
#pragma unroll
  for (int t = 0; t < kOTiles; ++t) {
    const int col = t * 8 + quad * 2;
    *reinterpret_cast<float2*>(merged + (lane / 4) * Cfg::kMergeStride + col) =
        make_float2(o_acc[t][0] * own_weight[0], o_acc[t][1] * own_weight[0]);
    *reinterpret_cast<float2*>(merged + (lane / 4 + 8) * Cfg::kMergeStride + col) =
        make_float2(o_acc[t][2] * own_weight[1], o_acc[t][3] * own_weight[1]);
  }
  __syncthreads();

  // Sum the key groups and store 8 columns per thread and step: T to o (one part), FP32 to the
  // part's slice of the workspace (several).
  constexpr int kChunks = kCtaRows * kHeadDim / 8;
#pragma unroll
  for (int chunk = tid; chunk < kChunks; chunk += Cfg::kThreads) {
    const int r = chunk / (kHeadDim / 8);
    const int col = (chunk % (kHeadDim / 8)) * 8;
    if (r >= cta_rows) continue;
    float out[8] = {};
#pragma unroll
    for (int g = 0; g < kKeyGroups; ++g) {
      const float* src =
          s_o + ((r / 16) * kKeyGroups + g) * 16 * Cfg::kMergeStride + (r % 16) * Cfg::kMergeStride;
      const float4 lo = *reinterpret_cast<const float4*>(src + col);
      const float4 hi = *reinterpret_cast<const float4*>(src + col + 4);
      out[0] += lo.x;
      out[1] += lo.y;
      out[2] += lo.z;
      out[3] += lo.w;
      out[4] += hi.x;
      out[5] += hi.y;
      out[6] += hi.z;
      out[7] += hi.w;
    }
    const std::size_t row = group_row0 + cta_row0 + r;
    if (p.splits > 1) {
      float4* dst = reinterpret_cast<float4*>(
          p.part_o + (static_cast<std::size_t>(split) * p.out_rows + row) * kHeadDim + col);
      dst[0] = make_float4(out[0], out[1], out[2], out[3]);
      dst[1] = make_float4(out[4], out[5], out[6], out[7]);
    } else {
      uint4 packed;
      packed.x = pack2<T>(out[0], out[1]);
      packed.y = pack2<T>(out[2], out[3]);
      packed.z = pack2<T>(out[4], out[5]);
      packed.w = pack2<T>(out[6], out[7]);
      *reinterpret_cast<uint4*>(p.o + row * kHeadDim + col) = packed;
    }
  }
}

// The main kernel: decode_cta per CTA. Each architecture's code has the body of one stream, the
// bulk copies where it has them, cp.async elsewhere; the launch picks the kernel whose body the
// device's code has (launch_for_stream).
template <typename T, int kHeadDim, int kRowTiles, bool kPaged, bool kTma>
__global__ void __launch_bounds__(DecodeConfig<kHeadDim, kTma>::kThreads,
                                  DecodeConfig<kHeadDim, kTma>::kCtasPerSm)
    flash_decode_kernel(const __grid_constant__ DecodeParams<T> p) {
  if constexpr (kTma != kTmaCompiled) {
    __trap();
  } else {
    decode_cta<T, kHeadDim, kRowTiles, kPaged, kTma>(p);
  }
}

// Merges the parts of each row: lse = log Σ_s exp(lse_s), o = Σ_s exp(lse_s - lse) · o_s. One
// CTA per row of [B, heads, q_len]: its threads read the parts' LSEs at once (one part each),
// reduce them to the row's LSE and leave each part's weight in shared memory; then each warp
// sums every fourth part's O, lane by lane over the columns, its loads independent of one
// another (a batch of one sequence split 100 ways would otherwise wait on 100 loads in turn),
// and the warps' sums are added through shared memory.
constexpr int kCombineThreads = 128;
constexpr int kCombineWarps = kCombineThreads / 32;
static_assert(kDecodeMaxSplits <= kCombineThreads, "one thread per part");

template <typename T, int kHeadDim>
__global__ void __launch_bounds__(kCombineThreads)
    flash_decode_combine_kernel(const float* __restrict__ part_o,
                                const float* __restrict__ part_lse, T* __restrict__ o,
                                float* __restrict__ lse, int rows, int splits) {
  constexpr int kPerLane = kHeadDim / 32;
  static_assert(kPerLane == 2 || kPerLane == 4, "d = 64 or 128");
  __shared__ float weights[kCombineThreads];
  __shared__ float reduce[kCombineWarps];
  __shared__ float sums[kCombineWarps][kHeadDim];
  const int row = blockIdx.x;
  const int tid = threadIdx.x;
  const int warp = tid / 32;
  const int lane = tid % 32;
#if __CUDA_ARCH__ >= 900
  // Launched as a programmatic dependent of the split kernel: the partials are complete and
  // visible only once this returns (a no-op when launched the ordinary way).
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif

  const float mine =
      tid < splits ? part_lse[static_cast<std::size_t>(tid) * rows + row] : -INFINITY;
  float max_lse = warp_max(mine);
  if (lane == 0) reduce[warp] = max_lse;
  __syncthreads();
  max_lse = reduce[0];
  for (int w = 1; w < kCombineWarps; ++w) max_lse = fmaxf(max_lse, reduce[w]);
  __syncthreads();  // reduce[] is reused below
  const float term = mine == -INFINITY ? 0.f : expf(mine - max_lse);
  const float warp_total = warp_sum(term);
  if (lane == 0) reduce[warp] = warp_total;
  __syncthreads();
  float sum = 0.f;
  for (int w = 0; w < kCombineWarps; ++w) sum += reduce[w];
  // Every part empty (only when kv_len < q_len slipped through): o = 0, lse = -inf.
  const float total = sum > 0.f ? max_lse + logf(sum) : -INFINITY;
  weights[tid] = sum > 0.f ? term / sum : 0.f;  // exp(lse_s - total)
  __syncthreads();

  float acc[kPerLane] = {};
#pragma unroll 4
  for (int s = warp; s < splits; s += kCombineWarps) {
    const float weight = weights[s];
    const float* src =
        part_o + (static_cast<std::size_t>(s) * rows + row) * kHeadDim + lane * kPerLane;
    if constexpr (kPerLane == 4) {
      const float4 x = *reinterpret_cast<const float4*>(src);
      acc[0] = fmaf(weight, x.x, acc[0]);
      acc[1] = fmaf(weight, x.y, acc[1]);
      acc[2] = fmaf(weight, x.z, acc[2]);
      acc[3] = fmaf(weight, x.w, acc[3]);
    } else {
      const float2 x = *reinterpret_cast<const float2*>(src);
      acc[0] = fmaf(weight, x.x, acc[0]);
      acc[1] = fmaf(weight, x.y, acc[1]);
    }
  }
#pragma unroll
  for (int i = 0; i < kPerLane; ++i) sums[warp][lane * kPerLane + i] = acc[i];
  __syncthreads();
  if (warp != 0) return;
#pragma unroll
  for (int i = 0; i < kPerLane; ++i) {
    float x = 0.f;
#pragma unroll
    for (int w = 0; w < kCombineWarps; ++w) x += sums[w][lane * kPerLane + i];
    acc[i] = x;
  }
  T* dst = o + static_cast<std::size_t>(row) * kHeadDim + lane * kPerLane;
  if constexpr (kPerLane == 4) {
    *reinterpret_cast<uint2*>(dst) = make_uint2(pack2<T>(acc[0], acc[1]), pack2<T>(acc[2], acc[3]));
  } else {
    *reinterpret_cast<uint32_t*>(dst) = pack2<T>(acc[0], acc[1]);
  }
  if (lane == 0) lse[row] = total;
}

// The parts the launch splits each sequence's keys into: the shape's, else decode_plan.hpp's
// choice for the SMs of the current context (a green context's share under `run --sms`).
cudaError_t resolve_splits(const AttentionShape& shape, int* splits) {
  if (shape.kv_splits > 0) {
    *splits = shape.kv_splits;
    return cudaSuccess;
  }
  int sms = 0;
  ROOFLINE_RETURN_IF_ERROR(current_context_sms(&sms));
  *splits = decode_splits(shape.batch, shape.key_heads(),
                          decode_rows(shape.heads, shape.key_heads(), shape.q_len), shape.head_dim,
                          shape.seq_len, sms);
  return cudaSuccess;
}

// Rows of [B, heads, q_len]: the rows of o, lse and of each part's slice of the workspace.
std::size_t output_rows(const AttentionShape& shape) {
  return static_cast<std::size_t>(shape.batch) * shape.heads * shape.q_len;
}

std::size_t partial_o_bytes(const AttentionShape& shape, int splits) {
  return align_up(static_cast<std::size_t>(splits) * output_rows(shape) * shape.head_dim *
                  sizeof(float));
}

std::size_t partial_lse_bytes(const AttentionShape& shape, int splits) {
  return align_up(static_cast<std::size_t>(splits) * output_rows(shape) * sizeof(float));
}

template <typename T, int kHeadDim, int kRowTiles, bool kPaged, bool kTma>
cudaError_t launch_decode(const AttentionShape& shape, const DecodeParams<T>& params,
                          cudaStream_t stream) {
  using Cfg = DecodeConfig<kHeadDim, kTma>;
  auto kernel = flash_decode_kernel<T, kHeadDim, kRowTiles, kPaged, kTma>;
  ROOFLINE_RETURN_IF_ERROR(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                                static_cast<int>(Cfg::kSmemBytes)));
  // All of the unified L1/shared array as shared memory: decode_ctas_per_sm CTAs need it.
  ROOFLINE_RETURN_IF_ERROR(cudaFuncSetAttribute(
      kernel, cudaFuncAttributePreferredSharedMemoryCarveout, cudaSharedmemCarveoutMaxShared));
  const dim3 grid(decode_row_blocks(params.rows), params.splits, shape.batch * shape.key_heads());
  kernel<<<grid, Cfg::kThreads, Cfg::kSmemBytes, stream>>>(params);
  ROOFLINE_RETURN_IF_LAUNCH_FAILED();
  if (params.splits == 1) return cudaSuccess;
  // The combine as a programmatic dependent launch (sm_90): its CTAs start while the split
  // kernel runs and wait for it on the device, which takes the launch gap between the two off
  // the decode step's time. Older GPUs launch it the ordinary way, after the split kernel.
  int major = 0;
  ROOFLINE_RETURN_IF_ERROR(current_device_major(&major));
  cudaLaunchAttribute dependent{};
  dependent.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  dependent.val.programmaticStreamSerializationAllowed = 1;
  cudaLaunchConfig_t config{};
  config.gridDim = dim3(static_cast<unsigned>(output_rows(shape)));
  config.blockDim = dim3(kCombineThreads);
  config.stream = stream;
  config.attrs = &dependent;
  config.numAttrs = major >= 9 ? 1 : 0;
  return cudaLaunchKernelEx(&config, flash_decode_combine_kernel<T, kHeadDim>, params.part_o,
                            params.part_lse, params.o, params.lse,
                            static_cast<int>(output_rows(shape)), params.splits);
}

template <typename T, int kHeadDim, int kRowTiles, bool kTma>
cudaError_t launch_for_tiles(const AttentionShape& shape, const DecodeParams<T>& params,
                             cudaStream_t stream) {
  return shape.page_size > 0
             ? launch_decode<T, kHeadDim, kRowTiles, true, kTma>(shape, params, stream)
             : launch_decode<T, kHeadDim, kRowTiles, false, kTma>(shape, params, stream);
}

// 16-row tiles per CTA: as few as the group's rows need (more than 32 rows: all four).
template <typename T, int kHeadDim, bool kTma>
cudaError_t launch_for_dim(const AttentionShape& shape, const DecodeParams<T>& params,
                           cudaStream_t stream) {
  if (params.rows <= kDecodeRowTile) {
    return launch_for_tiles<T, kHeadDim, 1, kTma>(shape, params, stream);
  }
  if (params.rows <= 2 * kDecodeRowTile) {
    return launch_for_tiles<T, kHeadDim, 2, kTma>(shape, params, stream);
  }
  return launch_for_tiles<T, kHeadDim, kDecodeRowsPerCta / kDecodeRowTile, kTma>(shape, params,
                                                                                 stream);
}

// The TMA stream's views of K and V (DecodeParams::k_map): boxes of 64 columns by 64 rows, or
// by the page when a page is shorter, in the 128-byte swizzle.
template <typename T>
cudaError_t encode_kv_maps(const AttentionShape& shape, const AttentionBuffers& buffers,
                           DecodeParams<T>* params) {
  const bool paged = shape.page_size > 0;
  const std::uint64_t rows = static_cast<std::uint64_t>(paged ? shape.page_size : shape.seq_len);
  const std::uint64_t depth =
      static_cast<std::uint64_t>(paged ? buffers.kv_pages : shape.batch) * params->kv_heads;
  params->box_rows = paged ? std::min(shape.page_size, kDecodeKeysPerTile) : kDecodeKeysPerTile;
  const sm90::TmaElement element =
      shape.dtype == DType::kBf16 ? sm90::TmaElement::kBfloat16 : sm90::TmaElement::kHalf;
  const auto d = static_cast<std::uint64_t>(shape.head_dim);
  const auto box_rows = static_cast<std::uint32_t>(params->box_rows);
  ROOFLINE_RETURN_IF_ERROR(sm90::encode_tensor_map_3d(
      &params->k_map, element, params->k, d, rows, depth, 64, box_rows, sm90::TmaSwizzle::k128B));
  return sm90::encode_tensor_map_3d(&params->v_map, element, params->v, d, rows, depth, 64,
                                    box_rows, sm90::TmaSwizzle::k128B);
}

// The K/V stream by bulk tensor copies where the device runs code built for sm_90 or later (the
// PTX version of its image of the kernels), by cp.async elsewhere.
template <typename T, int kHeadDim>
cudaError_t launch_for_stream(const AttentionShape& shape, const AttentionBuffers& buffers,
                              DecodeParams<T>& params, cudaStream_t stream) {
  cudaFuncAttributes image{};
  ROOFLINE_RETURN_IF_ERROR(
      cudaFuncGetAttributes(&image, flash_decode_kernel<T, kHeadDim, 1, false, true>));
  if (image.ptxVersion < 90) return launch_for_dim<T, kHeadDim, false>(shape, params, stream);
  ROOFLINE_RETURN_IF_ERROR(encode_kv_maps(shape, buffers, &params));
  return launch_for_dim<T, kHeadDim, true>(shape, params, stream);
}

template <typename T>
cudaError_t launch_for_type(const AttentionShape& shape, const AttentionBuffers& buffers,
                            int splits, cudaStream_t stream) {
  DecodeParams<T> params{};
  params.q = static_cast<const T*>(buffers.q);
  params.k = static_cast<const T*>(buffers.k);
  params.v = static_cast<const T*>(buffers.v);
  params.o = static_cast<T*>(buffers.o);
  params.lse = buffers.lse;
  if (splits > 1) {
    params.part_o = static_cast<float*>(buffers.workspace);
    params.part_lse = reinterpret_cast<float*>(static_cast<unsigned char*>(buffers.workspace) +
                                               partial_o_bytes(shape, splits));
  }
  params.kv_lens = buffers.kv_lens;
  params.block_table = buffers.block_table;
  params.heads = shape.heads;
  params.kv_heads = shape.key_heads();
  params.group = shape.heads / params.kv_heads;
  params.q_len = shape.q_len;
  params.rows = decode_rows(shape.heads, params.kv_heads, shape.q_len);
  params.seq_len = shape.seq_len;
  params.splits = splits;
  params.out_rows = output_rows(shape);
  if (shape.page_size > 0) {
    while ((1 << params.page_shift) < shape.page_size) ++params.page_shift;
    params.max_blocks = ceil_div(shape.seq_len, shape.page_size);
  }
  params.causal = shape.causal;
  params.scale = 1.f / sqrtf(static_cast<float>(shape.head_dim));
  params.scale_log2 = params.scale * kLog2e;
  switch (shape.head_dim) {
    case 64:
      return launch_for_stream<T, 64>(shape, buffers, params, stream);
    case 128:
      return launch_for_stream<T, 128>(shape, buffers, params, stream);
    default:
      return cudaErrorNotSupported;
  }
}

}  // namespace

// The split-KV partials: FP32 O [splits, B, heads, q_len, d], then FP32 LSE [splits, B, heads,
// q_len], each from a 256-byte boundary; nothing with one part. Auto splits (kv_splits 0)
// depend on the current device's SM count, as in the launch.
std::size_t flash_decode_workspace_bytes(const AttentionShape& shape) {
  int splits = 1;
  if (resolve_splits(shape, &splits) != cudaSuccess || splits <= 1) return 0;
  return partial_o_bytes(shape, splits) + partial_lse_bytes(shape, splits);
}

// Work model: FLOPs = 4·d·H·Σ_b (q_len·kv_len_b − (causal ? q_len·(q_len−1)/2 : 0)) (S and
// P·V, FMA = 2); minimum DRAM bytes = 2·2·H_kv·Σ_b kv_len_b·d (K and V) + 2·2·B·H·q_len·d (Q
// read, O written) + 4·B·H·q_len (LSE) [+ 4·Σ_b ⌈kv_len_b/page⌉ block-table entries + 4·B].
cudaError_t flash_decode_forward(const AttentionShape& shape, const AttentionBuffers& buffers,
                                 cudaStream_t stream) {
  if (!shape.decode() || shape.heads % shape.key_heads() != 0) return cudaErrorInvalidValue;
  if (shape.page_size > 0 && (buffers.block_table == nullptr || buffers.kv_pages <= 0))
    return cudaErrorInvalidValue;
  int splits = 1;
  ROOFLINE_RETURN_IF_ERROR(resolve_splits(shape, &splits));
  if (splits > 1 && buffers.workspace == nullptr) return cudaErrorInvalidValue;
  return shape.dtype == DType::kBf16
             ? launch_for_type<__nv_bfloat16>(shape, buffers, splits, stream)
             : launch_for_type<__half>(shape, buffers, splits, stream);
}

}  // namespace roofline::kernels

// The analytic model's tiles (catalog.hpp) and plan (decode_plan.hpp) are this file's own.
namespace roofline::kernels {
namespace {
static_assert(forward_tiles_are("flash-decode", 64, kDecodeRowsPerCta,
                                DecodeConfig<64, true>::kBlockKv));
static_assert(forward_tiles_are("flash-decode", 128, kDecodeRowsPerCta,
                                DecodeConfig<128, true>::kBlockKv));
static_assert(DecodeConfig<64, true>::kBlockKv == kDecodeKeysPerTile &&
                  DecodeConfig<128, true>::kBlockKv == kDecodeKeysPerTile,
              "key tiles of decode_plan.hpp's size, so that parts start on tile boundaries");
static_assert(kDecodeRowTile == 16, "rows pad to mma.sync's m16");
static_assert(DecodeConfig<64, true>::kCtasPerSm == 4 && DecodeConfig<128, true>::kCtasPerSm == 2,
              "the occupancy that the stage counts were sized for");
}  // namespace
}  // namespace roofline::kernels
