// flash-v2 backward: FlashAttention-2's backward pass on the tensor cores (mma.sync m16n8k16).
//
// What it demonstrates: the gradient of fused attention recomputes S and P from the saved
// log-sum-exp instead of storing them, so its DRAM traffic stays O(N·d) like the forward.
// Three launches: D = rowsum(dO ∘ O) (which also clears the FP32 dQ accumulator), the main
// kernel, and the FP32 -> FP16 (or BF16) conversion of dQ. The kernel is a template on the
// element type T (__half or __nv_bfloat16), like the forward.
//
// Tiling of the main kernel: one CTA of 8 warps per Bc = 128 keys (16 keys per warp); it keeps
// K and V in shared memory and walks the query tiles (Br = 64 rows, 32 at d = 128; Q, dO, LSE
// and D double-buffered with cp.async). Per tile each warp computes S^T and dP^T for its 16 keys,
// P^T = exp2(S^T·scale·log2e − LSE·log2e), dS^T = P^T ∘ (dP^T − D), and accumulates dV += P^T dO
// and dK += dS^T Q in registers, the P^T / dS^T accumulators reused as 16-bit A fragments. dS^T
// also goes to shared memory, from which the 8 warps compute this tile's dQ contribution
// dS·K and add it to an FP32 buffer with atomics. Under causal masking, query tiles wholly
// above the key tile are never visited and warps whose keys all lie after the tile's queries
// skip the arithmetic.
//
// Regime: compute-bound on the mma.sync tensor ceiling at large N (five GEMMs per tile pair;
// the model's 2.5× forward FLOPs), with the dQ atomics to L2 as the main extra cost.
// Where it lands today (regime, binding roof, share of it, advice), row by row:
//   cuflash-roofline run --kernel flash-v2 --pass bwd --seq 16384 --counter-set full
#include <cfloat>

#include "kernels/catalog.hpp"
#include "kernels/flash_v2.cuh"
#include "kernels/launchers.hpp"

namespace roofline::kernels {
namespace {

template <int kHeadDim>
struct BwdConfig {
  static constexpr int kWarps = 8;
  static constexpr int kThreads = kWarps * 32;
  static constexpr int kBlockKv = 16 * kWarps;
  // d = 128 keeps 128 accumulator registers for dK and dV; 32-query steps leave room for
  // S^T and dP^T without spilling.
  static constexpr int kBlockQ = kHeadDim == 128 ? 32 : 64;
  static constexpr int kStride = flash_v2::kRowStride<kHeadDim>;
  static constexpr int kDsStride = kBlockQ + 8;  // elements; same padding reason as kStride
  static constexpr int kTileKv = kBlockKv * kStride;
  static constexpr int kTileQ = kBlockQ * kStride;
  // The dQ tile (kBlockQ x d) is split over warps: kDqRowGroups of 16 rows x column groups.
  static constexpr int kDqRowGroups = kBlockQ / 16;
  static constexpr int kDqColGroups = kWarps / kDqRowGroups;
  static constexpr int kDqCols = kHeadDim / kDqColGroups;
  // K, V, then two stages of Q and of dO (16-bit), dS^T (16-bit), two stages of LSE and D.
  static constexpr std::size_t kSmemBytes =
      (2 * kTileKv + 4 * kTileQ + kBlockKv * kDsStride) * sizeof(__half) +
      4 * kBlockQ * sizeof(float);
  static_assert(kDqCols % 16 == 0, "dQ columns per warp must be whole ldmatrix pairs");
};

template <typename T>
struct BwdParams {
  const T* q;
  const T* k;
  const T* v;
  const T* d_o;
  const float* lse;
  const float* d_rowsum;  // D = rowsum(dO ∘ O)
  float* dq_accum;        // FP32 [B,H,N,d], cleared by the preprocess kernel
  T* d_k;
  T* d_v;
  int seq_len;
  float scale;
  float scale_log2;
};

template <typename T, int kHeadDim>
__device__ __forceinline__ void load_query_tile(T* s_q, T* s_do, float* s_lse, float* s_drow,
                                                const BwdParams<T>& p, std::size_t head, int q0,
                                                int tid) {
  using Cfg = BwdConfig<kHeadDim>;
  const int n = p.seq_len;
  flash_v2::load_tile_async<Cfg::kBlockQ, kHeadDim, Cfg::kThreads>(s_q, p.q + head * kHeadDim, q0,
                                                                   n, tid);
  flash_v2::load_tile_async<Cfg::kBlockQ, kHeadDim, Cfg::kThreads>(s_do, p.d_o + head * kHeadDim,
                                                                   q0, n, tid);
  // Rows past the end read as 0; the mask below zeroes their P.
  if (tid < Cfg::kBlockQ) {
    const bool valid = q0 + tid < n;
    const std::size_t row = head + (valid ? q0 + tid : 0);
    ptx::cp_async_4(ptx::smem_address(s_lse + tid), p.lse + row, valid);
  } else if (tid < 2 * Cfg::kBlockQ) {
    const int r = tid - Cfg::kBlockQ;
    const bool valid = q0 + r < n;
    const std::size_t row = head + (valid ? q0 + r : 0);
    ptx::cp_async_4(ptx::smem_address(s_drow + r), p.d_rowsum + row, valid);
  }
}

template <typename T, int kHeadDim, bool kCausal>
__global__ void __launch_bounds__(BwdConfig<kHeadDim>::kThreads, 1)
    flash_v2_backward_kernel(const BwdParams<T> p) {
  using Cfg = BwdConfig<kHeadDim>;
  constexpr int kStride = Cfg::kStride;
  constexpr int kDTiles = kHeadDim / 8;      // n-tiles of dK / dV
  constexpr int kQTiles = Cfg::kBlockQ / 8;  // n-tiles of S^T / dP^T

  extern __shared__ __align__(16) unsigned char smem[];
  T* s_k = reinterpret_cast<T*>(smem);
  T* s_v = s_k + Cfg::kTileKv;
  T* s_q = s_v + Cfg::kTileKv;       // two stages
  T* s_do = s_q + 2 * Cfg::kTileQ;   // two stages
  T* s_ds = s_do + 2 * Cfg::kTileQ;  // [kBlockKv][kDsStride], dS^T
  float* s_lse = reinterpret_cast<float*>(s_ds + Cfg::kBlockKv * Cfg::kDsStride);  // two stages
  float* s_drow = s_lse + 2 * Cfg::kBlockQ;                                        // two stages

  const int n = p.seq_len;
  const int tid = threadIdx.x;
  const int warp = tid / 32;
  const int lane = tid % 32;
  const int quad = lane % 4;
  const int kv0 = blockIdx.x * Cfg::kBlockKv;
  const std::size_t head = static_cast<std::size_t>(blockIdx.y) * n;

  // Query tiles wholly before this key tile see none of its keys under causal masking.
  const int first_q_tile = kCausal ? kv0 / Cfg::kBlockQ : 0;
  const int num_q_tiles = ceil_div(n, Cfg::kBlockQ);

  flash_v2::load_tile_async<Cfg::kBlockKv, kHeadDim, Cfg::kThreads>(s_k, p.k + head * kHeadDim, kv0,
                                                                    n, tid);
  flash_v2::load_tile_async<Cfg::kBlockKv, kHeadDim, Cfg::kThreads>(s_v, p.v + head * kHeadDim, kv0,
                                                                    n, tid);
  load_query_tile<T, kHeadDim>(s_q, s_do, s_lse, s_drow, p, head, first_q_tile * Cfg::kBlockQ, tid);
  ptx::cp_async_commit();
  ptx::cp_async_wait<0>();
  __syncthreads();

  const int warp_key0 = kv0 + warp * 16;
  const int key_lo = warp_key0 + lane / 4;  // accumulator elements 0 and 1
  const int key_hi = key_lo + 8;            // accumulator elements 2 and 3
  // A fragments of this warp's 16 K rows and V rows are re-read from shared memory per tile.
  const uint32_t k_address =
      ptx::smem_address(s_k + (warp * 16 + lane % 16) * kStride + (lane / 16) * 8);
  const uint32_t v_address =
      ptx::smem_address(s_v + (warp * 16 + lane % 16) * kStride + (lane / 16) * 8);

  float dk_acc[kDTiles][4];
  float dv_acc[kDTiles][4];
#pragma unroll
  for (int t = 0; t < kDTiles; ++t) {
#pragma unroll
    for (int e = 0; e < 4; ++e) dk_acc[t][e] = dv_acc[t][e] = 0.f;
  }

  const int dq_row_group = warp % Cfg::kDqRowGroups;
  const int dq_col0 = (warp / Cfg::kDqRowGroups) * Cfg::kDqCols;

  for (int q_tile = first_q_tile; q_tile < num_q_tiles; ++q_tile) {
    const int stage = (q_tile - first_q_tile) & 1;
    const int q0 = q_tile * Cfg::kBlockQ;
    if (q_tile + 1 < num_q_tiles) {
      // The other stage was last read in the previous iteration, which ended with a barrier.
      load_query_tile<T, kHeadDim>(
          s_q + (stage ^ 1) * Cfg::kTileQ, s_do + (stage ^ 1) * Cfg::kTileQ,
          s_lse + (stage ^ 1) * Cfg::kBlockQ, s_drow + (stage ^ 1) * Cfg::kBlockQ, p, head,
          q0 + Cfg::kBlockQ, tid);
    }
    ptx::cp_async_commit();
    const T* tile_q = s_q + stage * Cfg::kTileQ;
    const T* tile_do = s_do + stage * Cfg::kTileQ;
    const float* tile_lse = s_lse + stage * Cfg::kBlockQ;
    const float* tile_drow = s_drow + stage * Cfg::kBlockQ;

    // Keys past the end and, under causal masking, warps whose keys all follow the tile's last
    // query contribute nothing; they still publish zeros for dS^T.
    const bool warp_has_work = warp_key0 < n && (!kCausal || warp_key0 <= q0 + Cfg::kBlockQ - 1);
    if (warp_has_work) {
      // S^T = K_w Q^T (16 keys x Br queries).
      float s[kQTiles][4];
      float dp[kQTiles][4];
#pragma unroll
      for (int t = 0; t < kQTiles; ++t) {
#pragma unroll
        for (int e = 0; e < 4; ++e) s[t][e] = dp[t][e] = 0.f;
      }
#pragma unroll
      for (int kk = 0; kk < kHeadDim / 16; ++kk) {
        uint32_t a[4];
        ptx::ldmatrix_x4(a, k_address + kk * 16 * sizeof(T));
#pragma unroll
        for (int pair = 0; pair < kQTiles / 2; ++pair) {
          uint32_t b[4];
          const int row = pair * 16 + (lane / 16) * 8 + lane % 8;
          const int col = kk * 16 + ((lane / 8) % 2) * 8;
          ptx::ldmatrix_x4(b, ptx::smem_address(tile_q + row * kStride + col));
          ptx::mma_m16n8k16<T>(s[2 * pair], a, b[0], b[1]);
          ptx::mma_m16n8k16<T>(s[2 * pair + 1], a, b[2], b[3]);
        }
      }
      // dP^T = V_w dO^T.
#pragma unroll
      for (int kk = 0; kk < kHeadDim / 16; ++kk) {
        uint32_t a[4];
        ptx::ldmatrix_x4(a, v_address + kk * 16 * sizeof(T));
#pragma unroll
        for (int pair = 0; pair < kQTiles / 2; ++pair) {
          uint32_t b[4];
          const int row = pair * 16 + (lane / 16) * 8 + lane % 8;
          const int col = kk * 16 + ((lane / 8) % 2) * 8;
          ptx::ldmatrix_x4(b, ptx::smem_address(tile_do + row * kStride + col));
          ptx::mma_m16n8k16<T>(dp[2 * pair], a, b[0], b[1]);
          ptx::mma_m16n8k16<T>(dp[2 * pair + 1], a, b[2], b[3]);
        }
      }

      // P^T from the saved LSE; dS^T = P^T (dP^T - D). Masked entries get P = 0, hence dS = 0.
      const bool needs_mask =
          q0 + Cfg::kBlockQ > n || kv0 + Cfg::kBlockKv > n || (kCausal && warp_key0 + 15 > q0);
#pragma unroll
      for (int t = 0; t < kQTiles; ++t) {
        const int col = t * 8 + quad * 2;
        const float2 lse = *reinterpret_cast<const float2*>(tile_lse + col);
        const float2 drow = *reinterpret_cast<const float2*>(tile_drow + col);
        const float lse_log2[2] = {lse.x * kLog2e, lse.y * kLog2e};
        const float drow_pair[2] = {drow.x, drow.y};
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          float prob = ptx::exp2_approx(fmaf(s[t][e], p.scale_log2, -lse_log2[e % 2]));
          if (needs_mask) {
            const int query = q0 + col + e % 2;
            const int key = e < 2 ? key_lo : key_hi;
            if (query >= n || key >= n || (kCausal && key > query)) prob = 0.f;
          }
          s[t][e] = prob;
          dp[t][e] = prob * (dp[t][e] - drow_pair[e % 2]);
        }
      }

      // dS^T to shared memory (T) for the dQ step.
#pragma unroll
      for (int t = 0; t < kQTiles; ++t) {
        const int col = t * 8 + quad * 2;
        *reinterpret_cast<uint32_t*>(s_ds + (warp * 16 + lane / 4) * Cfg::kDsStride + col) =
            pack2<T>(dp[t][0], dp[t][1]);
        *reinterpret_cast<uint32_t*>(s_ds + (warp * 16 + lane / 4 + 8) * Cfg::kDsStride + col) =
            pack2<T>(dp[t][2], dp[t][3]);
      }

      // dV += P^T dO and dK += dS^T Q: the accumulators of two adjacent query n-tiles form one
      // A fragment of a 16-query k-step.
#pragma unroll
      for (int kk = 0; kk < Cfg::kBlockQ / 16; ++kk) {
        const uint32_t a_p[4] = {pack2<T>(s[2 * kk][0], s[2 * kk][1]),
                                 pack2<T>(s[2 * kk][2], s[2 * kk][3]),
                                 pack2<T>(s[2 * kk + 1][0], s[2 * kk + 1][1]),
                                 pack2<T>(s[2 * kk + 1][2], s[2 * kk + 1][3])};
        const uint32_t a_ds[4] = {pack2<T>(dp[2 * kk][0], dp[2 * kk][1]),
                                  pack2<T>(dp[2 * kk][2], dp[2 * kk][3]),
                                  pack2<T>(dp[2 * kk + 1][0], dp[2 * kk + 1][1]),
                                  pack2<T>(dp[2 * kk + 1][2], dp[2 * kk + 1][3])};
        const int row = kk * 16 + ((lane / 8) % 2) * 8 + lane % 8;
#pragma unroll
        for (int pair = 0; pair < kDTiles / 2; ++pair) {
          const int col = pair * 16 + (lane / 16) * 8;
          uint32_t b[4];
          ptx::ldmatrix_x4_trans(b, ptx::smem_address(tile_do + row * kStride + col));
          ptx::mma_m16n8k16<T>(dv_acc[2 * pair], a_p, b[0], b[1]);
          ptx::mma_m16n8k16<T>(dv_acc[2 * pair + 1], a_p, b[2], b[3]);
          ptx::ldmatrix_x4_trans(b, ptx::smem_address(tile_q + row * kStride + col));
          ptx::mma_m16n8k16<T>(dk_acc[2 * pair], a_ds, b[0], b[1]);
          ptx::mma_m16n8k16<T>(dk_acc[2 * pair + 1], a_ds, b[2], b[3]);
        }
      }
    } else {
#pragma unroll
      for (int t = 0; t < kQTiles; ++t) {
        const int col = t * 8 + quad * 2;
        *reinterpret_cast<uint32_t*>(s_ds + (warp * 16 + lane / 4) * Cfg::kDsStride + col) = 0u;
        *reinterpret_cast<uint32_t*>(s_ds + (warp * 16 + lane / 4 + 8) * Cfg::kDsStride + col) = 0u;
      }
    }
    __syncthreads();

    // dQ(tile) += scale · dS K: this warp's 16 query rows x kDqCols columns, over all Bc keys.
    // A = dS (queries x keys) is dS^T in shared memory read transposed; B = K read transposed.
    {
      float dq[Cfg::kDqCols / 8][4];
#pragma unroll
      for (int t = 0; t < Cfg::kDqCols / 8; ++t) dq[t][0] = dq[t][1] = dq[t][2] = dq[t][3] = 0.f;
#pragma unroll
      for (int kk = 0; kk < Cfg::kBlockKv / 16; ++kk) {
        uint32_t a[4];
        const int ds_row = kk * 16 + (lane / 16) * 8 + lane % 8;
        const int ds_col = dq_row_group * 16 + ((lane / 8) % 2) * 8;
        ptx::ldmatrix_x4_trans(a, ptx::smem_address(s_ds + ds_row * Cfg::kDsStride + ds_col));
        const int k_row = kk * 16 + ((lane / 8) % 2) * 8 + lane % 8;
#pragma unroll
        for (int pair = 0; pair < Cfg::kDqCols / 16; ++pair) {
          uint32_t b[4];
          const int col = dq_col0 + pair * 16 + (lane / 16) * 8;
          ptx::ldmatrix_x4_trans(b, ptx::smem_address(s_k + k_row * kStride + col));
          ptx::mma_m16n8k16<T>(dq[2 * pair], a, b[0], b[1]);
          ptx::mma_m16n8k16<T>(dq[2 * pair + 1], a, b[2], b[3]);
        }
      }
      const int row_lo = q0 + dq_row_group * 16 + lane / 4;
      const int row_hi = row_lo + 8;
      float* accum = p.dq_accum + head * kHeadDim;
#pragma unroll
      for (int t = 0; t < Cfg::kDqCols / 8; ++t) {
        const int col = dq_col0 + t * 8 + quad * 2;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
        // One 8-byte reduction instead of two 4-byte ones.
        if (row_lo < n) {
          atomicAdd(
              reinterpret_cast<float2*>(accum + static_cast<std::size_t>(row_lo) * kHeadDim + col),
              make_float2(dq[t][0] * p.scale, dq[t][1] * p.scale));
        }
        if (row_hi < n) {
          atomicAdd(
              reinterpret_cast<float2*>(accum + static_cast<std::size_t>(row_hi) * kHeadDim + col),
              make_float2(dq[t][2] * p.scale, dq[t][3] * p.scale));
        }
#else
        if (row_lo < n) {
          float* dst = accum + static_cast<std::size_t>(row_lo) * kHeadDim + col;
          atomicAdd(dst, dq[t][0] * p.scale);
          atomicAdd(dst + 1, dq[t][1] * p.scale);
        }
        if (row_hi < n) {
          float* dst = accum + static_cast<std::size_t>(row_hi) * kHeadDim + col;
          atomicAdd(dst, dq[t][2] * p.scale);
          atomicAdd(dst + 1, dq[t][3] * p.scale);
        }
#endif
      }
    }

    // Completes the next tile's copies and keeps this tile's buffers (and dS^T) alive until
    // every warp is done with them.
    ptx::cp_async_wait<0>();
    __syncthreads();
  }

  // Stage dK (scaled) and dV through this warp's own rows of the K and V tiles (no longer read
  // after the loop's final barrier) and write 16-byte vectors.
  T* staged_k = s_k + warp * 16 * kStride;
  T* staged_v = s_v + warp * 16 * kStride;
#pragma unroll
  for (int t = 0; t < kDTiles; ++t) {
    const int col = t * 8 + quad * 2;
    *reinterpret_cast<uint32_t*>(staged_k + (lane / 4) * kStride + col) =
        pack2<T>(dk_acc[t][0] * p.scale, dk_acc[t][1] * p.scale);
    *reinterpret_cast<uint32_t*>(staged_k + (lane / 4 + 8) * kStride + col) =
        pack2<T>(dk_acc[t][2] * p.scale, dk_acc[t][3] * p.scale);
    *reinterpret_cast<uint32_t*>(staged_v + (lane / 4) * kStride + col) =
        pack2<T>(dv_acc[t][0], dv_acc[t][1]);
    *reinterpret_cast<uint32_t*>(staged_v + (lane / 4 + 8) * kStride + col) =
        pack2<T>(dv_acc[t][2], dv_acc[t][3]);
  }
  __syncwarp();
  flash_v2::store_warp_rows<kHeadDim>(p.d_k + head * kHeadDim, staged_k, warp_key0, n, lane);
  flash_v2::store_warp_rows<kHeadDim>(p.d_v + head * kHeadDim, staged_v, warp_key0, n, lane);
}

template <typename T, int kHeadDim, bool kCausal>
cudaError_t launch_backward(const AttentionShape& shape, const BwdParams<T>& params,
                            cudaStream_t stream) {
  using Cfg = BwdConfig<kHeadDim>;
  auto kernel = flash_v2_backward_kernel<T, kHeadDim, kCausal>;
  ROOFLINE_RETURN_IF_ERROR(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                                static_cast<int>(Cfg::kSmemBytes)));
  const dim3 grid(ceil_div(shape.seq_len, Cfg::kBlockKv), shape.batch * shape.heads);
  kernel<<<grid, Cfg::kThreads, Cfg::kSmemBytes, stream>>>(params);
  return cudaGetLastError();
}

template <typename T, int kHeadDim>
cudaError_t launch_backward_for_dim(const AttentionShape& shape, const BwdParams<T>& params,
                                    cudaStream_t stream) {
  return shape.causal ? launch_backward<T, kHeadDim, true>(shape, params, stream)
                      : launch_backward<T, kHeadDim, false>(shape, params, stream);
}

struct Workspace {
  float* d_rowsum;  // [B,H,N]
  float* dq_accum;  // [B,H,N,d]
};

Workspace carve_workspace(const AttentionShape& shape, void* base) {
  const std::size_t rows = static_cast<std::size_t>(shape.batch) * shape.heads * shape.seq_len;
  auto* bytes = static_cast<unsigned char*>(base);
  return {reinterpret_cast<float*>(bytes),
          reinterpret_cast<float*>(bytes + align_up(rows * sizeof(float)))};
}

template <typename T>
cudaError_t launch_backward_for_type(const AttentionShape& shape, const AttentionBuffers& buffers,
                                     const Workspace& ws, cudaStream_t stream) {
  BwdParams<T> params{};
  params.q = static_cast<const T*>(buffers.q);
  params.k = static_cast<const T*>(buffers.k);
  params.v = static_cast<const T*>(buffers.v);
  params.d_o = static_cast<const T*>(buffers.d_o);
  params.lse = buffers.lse;
  params.d_rowsum = ws.d_rowsum;
  params.dq_accum = ws.dq_accum;
  params.d_k = static_cast<T*>(buffers.d_k);
  params.d_v = static_cast<T*>(buffers.d_v);
  params.seq_len = shape.seq_len;
  params.scale = 1.f / sqrtf(static_cast<float>(shape.head_dim));
  params.scale_log2 = params.scale * kLog2e;
  return for_head_dim(shape.head_dim, [&](auto dim) {
    return launch_backward_for_dim<T, decltype(dim)::value>(shape, params, stream);
  });
}

}  // namespace

std::size_t flash_v2_workspace_bytes(const AttentionShape& shape) {
  const std::size_t rows = static_cast<std::size_t>(shape.batch) * shape.heads * shape.seq_len;
  return align_up(rows * sizeof(float)) + align_up(rows * shape.head_dim * sizeof(float));
}

cudaError_t flash_v2_backward_resident_ctas(const AttentionShape& shape, int* ctas) {
  return flash_v2::for_type_and_dim(shape, [&](auto type, auto dim) {
    using T = decltype(type);
    using Cfg = BwdConfig<decltype(dim)::value>;
    return resident_ctas(shape.causal ? flash_v2_backward_kernel<T, decltype(dim)::value, true>
                                      : flash_v2_backward_kernel<T, decltype(dim)::value, false>,
                         Cfg::kThreads, Cfg::kSmemBytes, ctas);
  });
}

// Work model: FLOPs = 2.5 × forward = 10·B·H·N²·d, halved when causal (five GEMM-sized
// products: S recomputed, dP, dV, dK, dQ);
// minimum DRAM bytes = 2·B·H·N·d·(5 reads: Q, K, V, O, dO + 3 writes: dQ, dK, dV) + 4·B·H·N (LSE).
cudaError_t flash_v2_backward(const AttentionShape& shape, const AttentionBuffers& buffers,
                              cudaStream_t stream) {
  const Workspace ws = carve_workspace(shape, buffers.workspace);
  const long long rows = static_cast<long long>(shape.batch) * shape.heads * shape.seq_len;
  ROOFLINE_RETURN_IF_ERROR(launch_softmax_grad_rowsum(
      buffers.o, buffers.d_o, ws.d_rowsum, ws.dq_accum, rows, shape.head_dim, shape.dtype, stream));
  ROOFLINE_RETURN_IF_ERROR(shape.dtype == DType::kBf16
                               ? launch_backward_for_type<__nv_bfloat16>(shape, buffers, ws, stream)
                               : launch_backward_for_type<__half>(shape, buffers, ws, stream));
  return launch_float_to_element(ws.dq_accum, buffers.d_q, shape.dtype,
                                 static_cast<std::size_t>(rows) * shape.head_dim, stream);
}

}  // namespace roofline::kernels

// The analytic model's tiles (catalog.hpp) are this file's own.
namespace roofline::kernels {
namespace {
static_assert(backward_tiles_are("flash-v2", 32, BwdConfig<32>::kBlockQ, BwdConfig<32>::kBlockKv));
static_assert(backward_tiles_are("flash-v2", 64, BwdConfig<64>::kBlockQ, BwdConfig<64>::kBlockKv));
static_assert(backward_tiles_are("flash-v2", 128, BwdConfig<128>::kBlockQ,
                                 BwdConfig<128>::kBlockKv));
}  // namespace
}  // namespace roofline::kernels
