// flash-v2 forward: FlashAttention-2 on the tensor cores with warp-level mma.sync.
//
// What it demonstrates: the fused attention forward whose S and P never leave the register
// file. Q·K^T and P·V run as mma.sync.m16n8k16 (FP16 or BF16 in, FP32 accumulate) fed by
// ldmatrix; the S accumulator fragments are rescaled by the online softmax (exp2 with
// log2(e)·scale folded into one FMA), rounded to the element type and reused in place as the A
// operand of P·V. The kernel is a template on the element type T (__half or __nv_bfloat16):
// only the conversions and the MMA's type suffix differ.
//
// Tiling: one CTA of 4 warps per 128 query rows (Br = 128); each warp owns 32 rows (two
// m16 blocks), so the softmax statistics stay inside a warp and no inter-warp reduction is
// needed. K and V stream through shared memory in tiles of Bc = 64 keys (32 at d = 128),
// double-buffered with cp.async so the next tile loads while the current one is multiplied.
// Shared rows are padded by 16 bytes so ldmatrix is free of bank conflicts. Under causal
// masking, tiles above the diagonal are never loaded, warps whose rows lie wholly above a tile
// skip it, and only diagonal tiles pay for the element mask; query tiles are scheduled
// longest-first.
//
// Regime: per CTA the arithmetic intensity against DRAM is about Br·4·d FLOP per 4·d bytes of
// K/V, far right of the H200 ridge, so at large N it is compute-bound; the ceiling it should be
// judged against is the mma.sync FP16 tensor rate (below the wgmma peak), with the exp2 work of
// the softmax on the special-function unit as the main tax.
// Where it lands today (regime, binding roof, share of it, advice), row by row:
//   cuflash-roofline run --kernel flash-v2 --pass fwd --seq 16384 --counter-set full
#include <cfloat>

#include "kernels/catalog.hpp"
#include "kernels/flash_v2.cuh"
#include "kernels/launchers.hpp"
#include "kernels/online_softmax.cuh"

namespace roofline::kernels {
namespace {

// 4 warps per CTA, each owning two blocks of 16 query rows (Br = 128). Two row blocks per warp
// make every K/V fragment loaded by ldmatrix feed two MMAs, halving the shared-memory traffic
// per FLOP against one block per warp (measured on the H200: +10% at d = 128, +20% at d = 64),
// at the price of twice the accumulator registers: d = 128 needs Bc = 32 to stay at 255
// registers without spilling. Two CTAs per SM (8 warps), Q fragments re-read from shared memory
// each k-step (the registers are spoken for); three at d = 32, whose 166-171 registers would
// let the full-mask kernel fit three and the causal one two (the catalogue holds one count).
template <int kHeadDim>
struct FwdConfig {
  static constexpr int kWarps = 4;
  static constexpr int kMTiles = 2;
  static constexpr int kThreads = kWarps * 32;
  static constexpr int kWarpRows = 16 * kMTiles;
  static constexpr int kBlockQ = kWarpRows * kWarps;
  static constexpr int kBlockKv = kHeadDim == 128 ? 32 : 64;
  static constexpr int kStride = flash_v2::kRowStride<kHeadDim>;
  static constexpr int kTileQ = kBlockQ * kStride;    // 16-bit elements
  static constexpr int kTileKv = kBlockKv * kStride;  // 16-bit elements
  // Q, then two stages of K, then two stages of V.
  static constexpr std::size_t kSmemBytes = (kTileQ + 4 * kTileKv) * sizeof(__half);
  static constexpr int kMinBlocksPerSm = kHeadDim == 32 ? 3 : 2;
};

template <typename T>
struct FwdParams {
  const T* q;
  const T* k;
  const T* v;
  T* o;
  float* lse;
  int seq_len;
  float scale;       // 1/sqrt(d)
  float scale_log2;  // scale * log2(e): exp(scale * x) == exp2(scale_log2 * x)
};

template <typename T, int kHeadDim, bool kCausal>
__global__ void __launch_bounds__(FwdConfig<kHeadDim>::kThreads,
                                  FwdConfig<kHeadDim>::kMinBlocksPerSm)
    flash_v2_forward_kernel(const FwdParams<T> p) {
  using Cfg = FwdConfig<kHeadDim>;
  constexpr int kStride = Cfg::kStride;
  constexpr int kM = Cfg::kMTiles;
  constexpr int kOTiles = kHeadDim / 8;       // 8-column n-tiles of O
  constexpr int kSTiles = Cfg::kBlockKv / 8;  // 8-column n-tiles of S

  extern __shared__ __align__(16) unsigned char smem[];
  T* s_q = reinterpret_cast<T*>(smem);
  T* s_k = s_q + Cfg::kTileQ;
  T* s_v = s_k + 2 * Cfg::kTileKv;

  const int n = p.seq_len;
  const int tid = threadIdx.x;
  const int warp = tid / 32;
  const int lane = tid % 32;
  const int num_q_tiles = ceil_div(n, Cfg::kBlockQ);
  // Causal CTAs have triangular work: start the longest ones first to shorten the tail.
  const int q_tile = kCausal ? num_q_tiles - 1 - static_cast<int>(blockIdx.x) : blockIdx.x;
  const int q0 = q_tile * Cfg::kBlockQ;
  const std::size_t head = static_cast<std::size_t>(blockIdx.y) * n;
  const T* q = p.q + head * kHeadDim;
  const T* k = p.k + head * kHeadDim;
  const T* v = p.v + head * kHeadDim;

  const int kv_end = kCausal ? min(n, q0 + Cfg::kBlockQ) : n;
  const int num_kv_tiles = ceil_div(kv_end, Cfg::kBlockKv);

  flash_v2::load_tile_async<Cfg::kBlockQ, kHeadDim, Cfg::kThreads>(s_q, q, q0, n, tid);
  flash_v2::load_tile_async<Cfg::kBlockKv, kHeadDim, Cfg::kThreads>(s_k, k, 0, n, tid);
  flash_v2::load_tile_async<Cfg::kBlockKv, kHeadDim, Cfg::kThreads>(s_v, v, 0, n, tid);
  ptx::cp_async_commit();
  ptx::cp_async_wait<0>();
  __syncthreads();

  const int warp_row0 = q0 + warp * Cfg::kWarpRows;
  const int quad = lane % 4;
  // Row of accumulator element e of row block m: warp_row0 + 16·m + lane/4 + 8·(e/2).

  // ldmatrix addresses of the warp's Q row blocks (A fragments; +32 bytes per k-step).
  uint32_t q_address[kM];
#pragma unroll
  for (int m = 0; m < kM; ++m) {
    q_address[m] = ptx::smem_address(s_q + (warp * Cfg::kWarpRows + m * 16 + lane % 16) * kStride +
                                     (lane / 16) * 8);
  }

  float o_acc[kM][kOTiles][4];
  float row_max[kM][2];  // raw (unscaled) scores
  float row_sum[kM][2];  // this thread's share; the quad is summed at the end
#pragma unroll
  for (int m = 0; m < kM; ++m) {
#pragma unroll
    for (int t = 0; t < kOTiles; ++t) {
      o_acc[m][t][0] = o_acc[m][t][1] = o_acc[m][t][2] = o_acc[m][t][3] = 0.f;
    }
    row_max[m][0] = row_max[m][1] = -INFINITY;
    row_sum[m][0] = row_sum[m][1] = 0.f;
  }

  for (int tile = 0; tile < num_kv_tiles; ++tile) {
    const int stage = tile & 1;
    if (tile + 1 < num_kv_tiles) {
      // The other stage was last read in the previous iteration, which ended with a barrier.
      const int next = (tile + 1) * Cfg::kBlockKv;
      flash_v2::load_tile_async<Cfg::kBlockKv, kHeadDim, Cfg::kThreads>(
          s_k + (stage ^ 1) * Cfg::kTileKv, k, next, n, tid);
      flash_v2::load_tile_async<Cfg::kBlockKv, kHeadDim, Cfg::kThreads>(
          s_v + (stage ^ 1) * Cfg::kTileKv, v, next, n, tid);
    }
    ptx::cp_async_commit();

    const int kv0 = tile * Cfg::kBlockKv;
    const bool warp_has_work = warp_row0 < n && (!kCausal || kv0 <= warp_row0 + Cfg::kWarpRows - 1);
    if (warp_has_work) {
      const T* tile_k = s_k + stage * Cfg::kTileKv;
      const T* tile_v = s_v + stage * Cfg::kTileKv;

      // S = Q K^T for the warp's rows x Bc keys.
      float s[kM][kSTiles][4];
#pragma unroll
      for (int m = 0; m < kM; ++m) {
#pragma unroll
        for (int t = 0; t < kSTiles; ++t) s[m][t][0] = s[m][t][1] = s[m][t][2] = s[m][t][3] = 0.f;
      }
#pragma unroll
      for (int kk = 0; kk < kHeadDim / 16; ++kk) {
        uint32_t q_frag[kM][4];
#pragma unroll
        for (int m = 0; m < kM; ++m) {
          ptx::ldmatrix_x4(q_frag[m], q_address[m] + kk * 16 * sizeof(T));
        }
#pragma unroll
        for (int pair = 0; pair < kSTiles / 2; ++pair) {
          uint32_t b[4];
          const int key = pair * 16 + (lane / 16) * 8 + lane % 8;
          const int col = kk * 16 + ((lane / 8) % 2) * 8;
          ptx::ldmatrix_x4(b, ptx::smem_address(tile_k + key * kStride + col));
#pragma unroll
          for (int m = 0; m < kM; ++m) {
            ptx::mma_m16n8k16<T>(s[m][2 * pair], q_frag[m], b[0], b[1]);
            ptx::mma_m16n8k16<T>(s[m][2 * pair + 1], q_frag[m], b[2], b[3]);
          }
        }
      }

      // Only the ragged last tile and tiles crossing the diagonal pay for the element mask.
      const bool needs_mask =
          kv0 + Cfg::kBlockKv > n || (kCausal && kv0 + Cfg::kBlockKv - 1 > warp_row0);
      if (needs_mask) {
#pragma unroll
        for (int m = 0; m < kM; ++m) {
#pragma unroll
          for (int t = 0; t < kSTiles; ++t) {
#pragma unroll
            for (int e = 0; e < 4; ++e) {
              const int key = kv0 + t * 8 + quad * 2 + (e % 2);
              const int row = warp_row0 + m * 16 + lane / 4 + (e / 2) * 8;
              if (key >= n || (kCausal && key > row)) s[m][t][e] = -INFINITY;
            }
          }
        }
      }

      // Online softmax: new running max per row, reduced over the quad that shares the row.
#pragma unroll
      for (int m = 0; m < kM; ++m) {
        float shift[2];
        float correction[2];
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          float tile_max = -INFINITY;
#pragma unroll
          for (int t = 0; t < kSTiles; ++t) {
            tile_max = fmaxf(tile_max, fmaxf(s[m][t][2 * h], s[m][t][2 * h + 1]));
          }
          tile_max = group_max<4>(tile_max);
          const RowRescale r = rescale_row(row_max[m][h], tile_max, p.scale_log2);
          shift[h] = r.shift;
          correction[h] = r.correction;
        }
        float tile_sum[2] = {0.f, 0.f};
#pragma unroll
        for (int t = 0; t < kSTiles; ++t) {
#pragma unroll
          for (int e = 0; e < 4; ++e) {
            s[m][t][e] = ptx::exp2_approx(fmaf(s[m][t][e], p.scale_log2, -shift[e / 2]));
            tile_sum[e / 2] += s[m][t][e];
          }
        }
#pragma unroll
        for (int h = 0; h < 2; ++h) row_sum[m][h] = row_sum[m][h] * correction[h] + tile_sum[h];
#pragma unroll
        for (int t = 0; t < kOTiles; ++t) {
          o_acc[m][t][0] *= correction[0];
          o_acc[m][t][1] *= correction[0];
          o_acc[m][t][2] *= correction[1];
          o_acc[m][t][3] *= correction[1];
        }
      }

      // O += P V: the accumulator layout of two adjacent S n-tiles is exactly the A-fragment
      // layout of one 16-key k-step, so P goes to T without leaving registers.
#pragma unroll
      for (int kk = 0; kk < Cfg::kBlockKv / 16; ++kk) {
        uint32_t a[kM][4];
#pragma unroll
        for (int m = 0; m < kM; ++m) {
          a[m][0] = pack2<T>(s[m][2 * kk][0], s[m][2 * kk][1]);
          a[m][1] = pack2<T>(s[m][2 * kk][2], s[m][2 * kk][3]);
          a[m][2] = pack2<T>(s[m][2 * kk + 1][0], s[m][2 * kk + 1][1]);
          a[m][3] = pack2<T>(s[m][2 * kk + 1][2], s[m][2 * kk + 1][3]);
        }
#pragma unroll
        for (int pair = 0; pair < kOTiles / 2; ++pair) {
          uint32_t b[4];
          const int key = kk * 16 + ((lane / 8) % 2) * 8 + lane % 8;
          const int col = pair * 16 + (lane / 16) * 8;
          ptx::ldmatrix_x4_trans(b, ptx::smem_address(tile_v + key * kStride + col));
#pragma unroll
          for (int m = 0; m < kM; ++m) {
            ptx::mma_m16n8k16<T>(o_acc[m][2 * pair], a[m], b[0], b[1]);
            ptx::mma_m16n8k16<T>(o_acc[m][2 * pair + 1], a[m], b[2], b[3]);
          }
        }
      }
    }

    ptx::cp_async_wait<0>();
    __syncthreads();
  }

  // Normalise, stage the warp's rows through its own (now unused) slice of the Q tile, and
  // write 16-byte vectors.
#pragma unroll
  for (int m = 0; m < kM; ++m) {
    float inv_sum[2];
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      row_sum[m][h] = group_sum<4>(row_sum[m][h]);
      inv_sum[h] = row_sum[m][h] > 0.f ? 1.f / row_sum[m][h] : 0.f;
    }
    T* staged = s_q + (warp * Cfg::kWarpRows + m * 16) * kStride;
#pragma unroll
    for (int t = 0; t < kOTiles; ++t) {
      const int col = t * 8 + quad * 2;
      *reinterpret_cast<uint32_t*>(staged + (lane / 4) * kStride + col) =
          pack2<T>(o_acc[m][t][0] * inv_sum[0], o_acc[m][t][1] * inv_sum[0]);
      *reinterpret_cast<uint32_t*>(staged + (lane / 4 + 8) * kStride + col) =
          pack2<T>(o_acc[m][t][2] * inv_sum[1], o_acc[m][t][3] * inv_sum[1]);
    }
    __syncwarp();
    flash_v2::store_warp_rows<kHeadDim>(p.o + head * kHeadDim, staged, warp_row0 + m * 16, n, lane);
    if (quad == 0) {
      float* lse = p.lse + head;
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int row = warp_row0 + m * 16 + lane / 4 + h * 8;
        if (row < n) lse[row] = row_max[m][h] * p.scale + logf(row_sum[m][h]);
      }
    }
  }
}

template <typename T, int kHeadDim, bool kCausal>
cudaError_t launch_forward(const AttentionShape& shape, const FwdParams<T>& params,
                           cudaStream_t stream) {
  using Cfg = FwdConfig<kHeadDim>;
  auto kernel = flash_v2_forward_kernel<T, kHeadDim, kCausal>;
  ROOFLINE_RETURN_IF_ERROR(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                                static_cast<int>(Cfg::kSmemBytes)));
  const dim3 grid(ceil_div(shape.seq_len, Cfg::kBlockQ), shape.batch * shape.heads);
  kernel<<<grid, Cfg::kThreads, Cfg::kSmemBytes, stream>>>(params);
  return cudaGetLastError();
}

template <typename T, int kHeadDim>
cudaError_t launch_forward_for_dim(const AttentionShape& shape, const FwdParams<T>& params,
                                   cudaStream_t stream) {
  return shape.causal ? launch_forward<T, kHeadDim, true>(shape, params, stream)
                      : launch_forward<T, kHeadDim, false>(shape, params, stream);
}

template <typename T>
cudaError_t launch_forward_for_type(const AttentionShape& shape, const AttentionBuffers& buffers,
                                    cudaStream_t stream) {
  FwdParams<T> params{};
  params.q = static_cast<const T*>(buffers.q);
  params.k = static_cast<const T*>(buffers.k);
  params.v = static_cast<const T*>(buffers.v);
  params.o = static_cast<T*>(buffers.o);
  params.lse = buffers.lse;
  params.seq_len = shape.seq_len;
  params.scale = 1.f / sqrtf(static_cast<float>(shape.head_dim));
  params.scale_log2 = params.scale * kLog2e;
  return for_head_dim(shape.head_dim, [&](auto dim) {
    return launch_forward_for_dim<T, decltype(dim)::value>(shape, params, stream);
  });
}

}  // namespace

cudaError_t flash_v2_forward_resident_ctas(const AttentionShape& shape, int* ctas) {
  return flash_v2::for_type_and_dim(shape, [&](auto type, auto dim) {
    using T = decltype(type);
    using Cfg = FwdConfig<decltype(dim)::value>;
    return resident_ctas(shape.causal ? flash_v2_forward_kernel<T, decltype(dim)::value, true>
                                      : flash_v2_forward_kernel<T, decltype(dim)::value, false>,
                         Cfg::kThreads, Cfg::kSmemBytes, ctas);
  });
}

// Work model: FLOPs = 4·B·H·N²·d (two GEMMs, FMA = 2), halved when causal;
// minimum DRAM bytes = 2·B·H·N·d·(3 reads + 1 write) + 4·B·H·N (LSE).
cudaError_t flash_v2_forward(const AttentionShape& shape, const AttentionBuffers& buffers,
                             cudaStream_t stream) {
  return shape.dtype == DType::kBf16
             ? launch_forward_for_type<__nv_bfloat16>(shape, buffers, stream)
             : launch_forward_for_type<__half>(shape, buffers, stream);
}

}  // namespace roofline::kernels

// The analytic model's tiles (catalog.hpp) are this file's own.
namespace roofline::kernels {
namespace {
static_assert(forward_tiles_are("flash-v2", 32, FwdConfig<32>::kBlockQ, FwdConfig<32>::kBlockKv));
static_assert(forward_tiles_are("flash-v2", 64, FwdConfig<64>::kBlockQ, FwdConfig<64>::kBlockKv));
static_assert(forward_tiles_are("flash-v2", 128, FwdConfig<128>::kBlockQ,
                                FwdConfig<128>::kBlockKv));
}  // namespace
}  // namespace roofline::kernels
