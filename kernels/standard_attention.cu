// standard: attention as frameworks run it without fusion.
//
// What it demonstrates: the memory traffic that fusion removes. Forward is three launches:
// S = scale · Q K^T (cuBLAS strided-batched GEMM, FP16 or BF16 out, as the inputs), a row softmax
// that writes P to a separate buffer, and O = P V (cuBLAS). Backward: dV = P^T dO, dP = dO V^T
// (cuBLAS), the softmax gradient dS = P ∘ (dP − rowsum(P ∘ dP)) written over dP, dQ = scale · dS K
// and dK = scale · dS^T Q (cuBLAS). S, P (and dP/dS) are materialised in the workspace.
//
// Tiling: the GEMMs are cuBLAS's. The softmax kernels give each row to one warp (N <= 1024 or
// 2048) or one block (N <= 16384 or 32768), cache the row in registers after a single pass of
// 16-byte loads and write the result with 16-byte stores, so every byte of S (and P, dP) crosses
// DRAM once per kernel; under causal masking they read only the unmasked prefix of each row.
//
// Regime: memory-bound. The GEMMs are tensor-core work (and cuBLAS's Q K^T with k = d is
// itself bandwidth-limited by its N x N output), while the softmax moves 4·B·H·N² bytes for
// O(B·H·N²) FLOPs; at large N the S/P traffic dominates and the kernel sits on the DRAM roof.
// Where it lands today (regime, binding roof, share of it, advice), row by row:
//   cuflash-roofline run --kernel standard --pass fwd,bwd --seq 4096 --counter-set full
#include <dlfcn.h>

#include <string>
#include <unordered_map>

#include <cublas_v2.h>

#include "kernels/common.cuh"
#include "kernels/launchers.hpp"

namespace roofline::kernels {
namespace {

// ---------------------------------------------------------------------------------------------
// cuBLAS plumbing

// cuBLAS is opened when standard attention first runs, not linked: libcublasLt maps 540 MB, so
// every command (show, model, specs: no GPU work) paid for it at start, and none could start
// under a 512 MiB address-space limit. nullptr when the library cannot be opened.
struct Cublas {
  decltype(&cublasCreate_v2) create = nullptr;
  decltype(&cublasSetStream_v2) set_stream = nullptr;
  // Optional (null where the library lacks it): the SMs cuBLAS plans its grids for.
  decltype(&cublasSetSmCountTarget) set_sm_count_target = nullptr;
  // cublasGemmStridedBatchedEx, 32-bit sizes (the header overloads it with 64-bit ones in C++).
  cublasStatus_t (*gemm)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int,
                         const void*, const void*, cudaDataType, int, long long, const void*,
                         cudaDataType, int, long long, const void*, void*, cudaDataType, int,
                         long long, int, cublasComputeType_t, cublasGemmAlgo_t) = nullptr;
};

const Cublas* cublas() {
  static const Cublas* const loaded = []() -> const Cublas* {
    const std::string soname = "libcublas.so." + std::to_string(CUBLAS_VER_MAJOR);
    void* library = dlopen(soname.c_str(), RTLD_NOW | RTLD_LOCAL);
    Dl_info cudart{};  // else beside the CUDA runtime this program loaded
    if (library == nullptr && dladdr(reinterpret_cast<void*>(&cudaGetDevice), &cudart) != 0 &&
        cudart.dli_fname != nullptr) {
      const std::string path = cudart.dli_fname;
      const std::size_t slash = path.rfind('/');
      if (slash != std::string::npos)
        library = dlopen((path.substr(0, slash + 1) + soname).c_str(), RTLD_NOW | RTLD_LOCAL);
    }
    if (library == nullptr) return nullptr;
    static Cublas api;
    api.create = reinterpret_cast<decltype(api.create)>(dlsym(library, "cublasCreate_v2"));
    api.set_stream =
        reinterpret_cast<decltype(api.set_stream)>(dlsym(library, "cublasSetStream_v2"));
    api.gemm = reinterpret_cast<decltype(api.gemm)>(dlsym(library, "cublasGemmStridedBatchedEx"));
    api.set_sm_count_target = reinterpret_cast<decltype(api.set_sm_count_target)>(
        dlsym(library, "cublasSetSmCountTarget"));
    if (api.create == nullptr || api.set_stream == nullptr || api.gemm == nullptr) return nullptr;
    return &api;
  }();
  return loaded;
}

cudaError_t to_cuda_error(cublasStatus_t status) {
  return status == CUBLAS_STATUS_SUCCESS ? cudaSuccess : cudaErrorUnknown;
}

// One handle per (host thread, device): cuBLAS handles are not thread-safe and are bound to the
// device that was current when they were created. They are created on first use and never
// destroyed, because at thread exit the CUDA runtime may already be shut down.
struct Handle {
  cublasHandle_t handle = nullptr;
  int sm_target = 0;  // what cuBLAS was last told (0: its default, the whole device)
};

// cuBLAS plans its grids (split-K, waves) for the SMs it is told of: in a context with fewer SMs
// than the device (a green context's share under `run --sms`) it is told that count; in one
// with all of them it keeps its default. Nothing where the library has no such call.
cudaError_t target_context_sms(Handle& h, int device) {
  if (cublas()->set_sm_count_target == nullptr) return cudaSuccess;
  int sms = 0, device_sms = 0;
  ROOFLINE_RETURN_IF_ERROR(current_context_sms(&sms));
  ROOFLINE_RETURN_IF_ERROR(
      cudaDeviceGetAttribute(&device_sms, cudaDevAttrMultiProcessorCount, device));
  const int target = sms < device_sms ? sms : 0;
  if (target == h.sm_target) return cudaSuccess;
  ROOFLINE_RETURN_IF_ERROR(to_cuda_error(cublas()->set_sm_count_target(h.handle, target)));
  h.sm_target = target;
  return cudaSuccess;
}

cublasHandle_t cublas_handle(cudaError_t* error) {
  thread_local std::unordered_map<int, Handle> handles;
  int device = 0;
  *error = cudaGetDevice(&device);
  if (*error != cudaSuccess) return nullptr;
  auto found = handles.find(device);
  if (found == handles.end()) {
    if (cublas() == nullptr) {
      *error = cudaErrorSharedObjectInitFailed;  // libcublas could not be opened
      return nullptr;
    }
    cublasHandle_t handle = nullptr;
    if (cublas()->create(&handle) != CUBLAS_STATUS_SUCCESS) {
      *error = cudaErrorUnknown;
      return nullptr;
    }
    found = handles.emplace(device, Handle{handle, 0}).first;
  }
  *error = target_context_sms(found->second, device);
  return *error == cudaSuccess ? found->second.handle : nullptr;
}

// Row-major C[batch][m_rows][n_cols] = alpha · op(A) · op(B), expressed in cuBLAS's
// column-major terms by the caller. All operands FP16 or BF16 (`type`), FP32 accumulation.
struct Gemm {
  cublasOperation_t trans_a;
  cublasOperation_t trans_b;
  int m;
  int n;
  int k;
  const void* a;
  int lda;
  long long stride_a;
  const void* b;
  int ldb;
  long long stride_b;
  void* c;
  int ldc;
  long long stride_c;
};

cudaError_t run_gemm(cublasHandle_t handle, const Gemm& g, float alpha, int batch,
                     cudaDataType_t type) {
  const float beta = 0.f;
  return to_cuda_error(cublas()->gemm(handle, g.trans_a, g.trans_b, g.m, g.n, g.k, &alpha, g.a,
                                      type, g.lda, g.stride_a, g.b, type, g.ldb, g.stride_b, &beta,
                                      g.c, type, g.ldc, g.stride_c, batch, CUBLAS_COMPUTE_32F,
                                      CUBLAS_GEMM_DEFAULT));
}

// ---------------------------------------------------------------------------------------------
// Row softmax and its gradient

constexpr int kMinBlockThreads = 128;

// Reduction over the kThreadsPerRow threads of a row: shuffles inside a warp, then shared
// memory across the warps of a block. A row is at most one warp or exactly one block.
// T (the kernel's element type) only keeps each kernel's `partial` its own: shared between the
// FP16 and BF16 kernels it stopped being a kernel-local (demoted) variable, which cost the FP16
// softmax kernel<512, 8> 25 registers on sm_90.
template <typename T, int kThreadsPerRow, bool kMax>
__device__ __forceinline__ float row_reduce(float x) {
  x = kMax ? group_max<(kThreadsPerRow < 32 ? kThreadsPerRow : 32)>(x)
           : group_sum<(kThreadsPerRow < 32 ? kThreadsPerRow : 32)>(x);
  if constexpr (kThreadsPerRow > 32) {
    constexpr int kWarps = kThreadsPerRow / 32;
    __shared__ float partial[kWarps];
    const int warp = threadIdx.x / 32;
    const int lane = threadIdx.x % 32;
    __syncthreads();  // partial[] may still be read by the previous reduction
    if (lane == 0) partial[warp] = x;
    __syncthreads();
    x = partial[0];
#pragma unroll
    for (int w = 1; w < kWarps; ++w) x = kMax ? fmaxf(x, partial[w]) : x + partial[w];
  }
  return x;
}

// P[row] = softmax(S[row]) over the first `valid` keys (valid = query + 1 when causal), zero
// after. Each thread caches kVecs vectors of 8 scores as FP32, so each exp is taken once and S
// is read once. Requires n % 8 == 0 (16-byte aligned rows) and n <= kThreadsPerRow·kVecs·8.
template <typename T, int kThreadsPerRow, int kVecs>
__global__ void __launch_bounds__(kThreadsPerRow < kMinBlockThreads ? kMinBlockThreads
                                                                    : kThreadsPerRow)
    softmax_forward_cached_kernel(const T* __restrict__ s, T* __restrict__ p, int n, bool causal,
                                  long long rows) {
  constexpr int kRowsPerBlock =
      kThreadsPerRow < kMinBlockThreads ? kMinBlockThreads / kThreadsPerRow : 1;
  const long long row =
      static_cast<long long>(blockIdx.x) * kRowsPerBlock + threadIdx.x / kThreadsPerRow;
  // Whole warps (or the whole block) share one row, so this exit keeps reductions uniform.
  if (row >= rows) return;
  const int tid = threadIdx.x % kThreadsPerRow;
  const int valid = causal ? static_cast<int>(row % n) + 1 : n;
  const T* s_row = s + static_cast<std::size_t>(row) * n;
  T* p_row = p + static_cast<std::size_t>(row) * n;

  float x[kVecs][8];
  float row_max = -INFINITY;
#pragma unroll
  for (int i = 0; i < kVecs; ++i) {
    const int col = (i * kThreadsPerRow + tid) * 8;
    Pack8 h;
    h.vec = make_uint4(0, 0, 0, 0);
    if (col < valid) h.vec = *reinterpret_cast<const uint4*>(s_row + col);
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const float2 f = unpack_pair<T>(h, e);
      x[i][2 * e] = col + 2 * e < valid ? f.x : -INFINITY;
      x[i][2 * e + 1] = col + 2 * e + 1 < valid ? f.y : -INFINITY;
    }
#pragma unroll
    for (int e = 0; e < 8; ++e) row_max = fmaxf(row_max, x[i][e]);
  }
  row_max = row_reduce<T, kThreadsPerRow, true>(row_max);

  float row_sum = 0.f;
#pragma unroll
  for (int i = 0; i < kVecs; ++i) {
#pragma unroll
    for (int e = 0; e < 8; ++e) {
      x[i][e] = __expf(x[i][e] - row_max);  // masked: exp(-inf) = 0
      row_sum += x[i][e];
    }
  }
  row_sum = row_reduce<T, kThreadsPerRow, false>(row_sum);
  const float inv_sum = 1.f / row_sum;

#pragma unroll
  for (int i = 0; i < kVecs; ++i) {
    const int col = (i * kThreadsPerRow + tid) * 8;
    if (col < n) {
      uint4 out;
      out.x = pack2<T>(x[i][0] * inv_sum, x[i][1] * inv_sum);
      out.y = pack2<T>(x[i][2] * inv_sum, x[i][3] * inv_sum);
      out.z = pack2<T>(x[i][4] * inv_sum, x[i][5] * inv_sum);
      out.w = pack2<T>(x[i][6] * inv_sum, x[i][7] * inv_sum);
      *reinterpret_cast<uint4*>(p_row + col) = out;
    }
  }
}

// dS[row] = P[row] ∘ (dP[row] − <P[row], dP[row]>), in place over dP. P is zero past `valid`,
// so only the prefix is read and the rest written as zeros. Rows cached as 16-byte vectors of T.
template <typename T, int kThreadsPerRow, int kVecs>
__global__ void __launch_bounds__(kThreadsPerRow < kMinBlockThreads ? kMinBlockThreads
                                                                    : kThreadsPerRow)
    softmax_backward_cached_kernel(const T* __restrict__ p, T* __restrict__ dp_ds, int n,
                                   bool causal, long long rows) {
  constexpr int kRowsPerBlock =
      kThreadsPerRow < kMinBlockThreads ? kMinBlockThreads / kThreadsPerRow : 1;
  const long long row =
      static_cast<long long>(blockIdx.x) * kRowsPerBlock + threadIdx.x / kThreadsPerRow;
  if (row >= rows) return;
  const int tid = threadIdx.x % kThreadsPerRow;
  const int valid = causal ? static_cast<int>(row % n) + 1 : n;
  const T* p_row = p + static_cast<std::size_t>(row) * n;
  T* g_row = dp_ds + static_cast<std::size_t>(row) * n;

  Pack8 pv[kVecs];
  Pack8 gv[kVecs];
  float dot = 0.f;
#pragma unroll
  for (int i = 0; i < kVecs; ++i) {
    const int col = (i * kThreadsPerRow + tid) * 8;
    pv[i].vec = make_uint4(0, 0, 0, 0);
    gv[i].vec = make_uint4(0, 0, 0, 0);
    if (col < valid) {
      pv[i].vec = *reinterpret_cast<const uint4*>(p_row + col);
      gv[i].vec = *reinterpret_cast<const uint4*>(g_row + col);
    }
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const float2 fp = unpack_pair<T>(pv[i], e);
      const float2 fg = unpack_pair<T>(gv[i], e);
      dot = fmaf(fp.x, fg.x, fmaf(fp.y, fg.y, dot));
    }
  }
  dot = row_reduce<T, kThreadsPerRow, false>(dot);

#pragma unroll
  for (int i = 0; i < kVecs; ++i) {
    const int col = (i * kThreadsPerRow + tid) * 8;
    if (col < n) {
      uint4 out;
      uint32_t* words = &out.x;
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const float2 fp = unpack_pair<T>(pv[i], e);
        const float2 fg = unpack_pair<T>(gv[i], e);
        words[e] = pack2<T>(fp.x * (fg.x - dot), fp.y * (fg.y - dot));
      }
      *reinterpret_cast<uint4*>(g_row + col) = out;
    }
  }
}

// Any n (rows need not be 16-byte aligned): one block per row, scalar accesses, the row
// streamed from memory in each pass.
constexpr int kStreamThreads = 256;

template <typename T>
__global__ void __launch_bounds__(kStreamThreads)
    softmax_forward_streaming_kernel(const T* __restrict__ s, T* __restrict__ p, int n,
                                     bool causal) {
  const long long row = blockIdx.x;
  const int valid = causal ? static_cast<int>(row % n) + 1 : n;
  const T* s_row = s + static_cast<std::size_t>(row) * n;
  T* p_row = p + static_cast<std::size_t>(row) * n;
  float row_max = -INFINITY;
  for (int j = threadIdx.x; j < valid; j += kStreamThreads) {
    row_max = fmaxf(row_max, to_float<T>(s_row[j]));
  }
  row_max = row_reduce<T, kStreamThreads, true>(row_max);
  float row_sum = 0.f;
  for (int j = threadIdx.x; j < valid; j += kStreamThreads) {
    row_sum += __expf(to_float<T>(s_row[j]) - row_max);
  }
  row_sum = row_reduce<T, kStreamThreads, false>(row_sum);
  const float inv_sum = 1.f / row_sum;
  for (int j = threadIdx.x; j < n; j += kStreamThreads) {
    p_row[j] = from_float<T>(j < valid ? __expf(to_float<T>(s_row[j]) - row_max) * inv_sum : 0.f);
  }
}

template <typename T>
__global__ void __launch_bounds__(kStreamThreads)
    softmax_backward_streaming_kernel(const T* __restrict__ p, T* __restrict__ dp_ds, int n,
                                      bool causal) {
  const long long row = blockIdx.x;
  const int valid = causal ? static_cast<int>(row % n) + 1 : n;
  const T* p_row = p + static_cast<std::size_t>(row) * n;
  T* g_row = dp_ds + static_cast<std::size_t>(row) * n;
  float dot = 0.f;
  for (int j = threadIdx.x; j < valid; j += kStreamThreads) {
    dot += to_float<T>(p_row[j]) * to_float<T>(g_row[j]);
  }
  dot = row_reduce<T, kStreamThreads, false>(dot);
  for (int j = threadIdx.x; j < n; j += kStreamThreads) {
    const float value = j < valid ? to_float<T>(p_row[j]) * (to_float<T>(g_row[j]) - dot) : 0.f;
    g_row[j] = from_float<T>(value);
  }
}

template <typename T, bool kForward, int kThreadsPerRow, int kVecs>
cudaError_t launch_cached(const T* a, T* b, int n, bool causal, long long rows,
                          cudaStream_t stream) {
  constexpr int kBlock = kThreadsPerRow < kMinBlockThreads ? kMinBlockThreads : kThreadsPerRow;
  constexpr int kRowsPerBlock = kBlock / kThreadsPerRow;
  const long long blocks = (rows + kRowsPerBlock - 1) / kRowsPerBlock;
  if constexpr (kForward) {
    softmax_forward_cached_kernel<T, kThreadsPerRow, kVecs>
        <<<static_cast<unsigned>(blocks), kBlock, 0, stream>>>(a, b, n, causal, rows);
  } else {
    softmax_backward_cached_kernel<T, kThreadsPerRow, kVecs>
        <<<static_cast<unsigned>(blocks), kBlock, 0, stream>>>(a, b, n, causal, rows);
  }
  return cudaGetLastError();
}

// Picks the smallest cached configuration that holds a row; the streaming kernel otherwise.
// The backward kernel caches two rows, so it spreads a row over more threads.
template <typename T, bool kForward>
cudaError_t launch_row_kernel_for_type(const T* a, T* b, int n, bool causal, long long rows,
                                       cudaStream_t stream) {
  if (n % 8 == 0) {
    if (n <= 256) return launch_cached<T, kForward, 32, 1>(a, b, n, causal, rows, stream);
    if (n <= 512) return launch_cached<T, kForward, 32, 2>(a, b, n, causal, rows, stream);
    if (n <= 1024) return launch_cached<T, kForward, 32, 4>(a, b, n, causal, rows, stream);
    if constexpr (kForward) {
      if (n <= 2048) return launch_cached<T, true, 32, 8>(a, b, n, causal, rows, stream);
      if (n <= 4096) return launch_cached<T, true, 128, 4>(a, b, n, causal, rows, stream);
      if (n <= 8192) return launch_cached<T, true, 256, 4>(a, b, n, causal, rows, stream);
      if (n <= 16384) return launch_cached<T, true, 256, 8>(a, b, n, causal, rows, stream);
      if (n <= 32768) return launch_cached<T, true, 512, 8>(a, b, n, causal, rows, stream);
    } else {
      if (n <= 2048) return launch_cached<T, false, 128, 2>(a, b, n, causal, rows, stream);
      if (n <= 4096) return launch_cached<T, false, 128, 4>(a, b, n, causal, rows, stream);
      if (n <= 8192) return launch_cached<T, false, 256, 4>(a, b, n, causal, rows, stream);
      if (n <= 16384) return launch_cached<T, false, 512, 4>(a, b, n, causal, rows, stream);
    }
  }
  if (kForward) {
    softmax_forward_streaming_kernel<T>
        <<<static_cast<unsigned>(rows), kStreamThreads, 0, stream>>>(a, b, n, causal);
  } else {
    softmax_backward_streaming_kernel<T>
        <<<static_cast<unsigned>(rows), kStreamThreads, 0, stream>>>(a, b, n, causal);
  }
  return cudaGetLastError();
}

// a and b hold elements of `dtype`.
template <bool kForward>
cudaError_t launch_row_kernel(DType dtype, const void* a, void* b, int n, bool causal,
                              long long rows, cudaStream_t stream) {
  if (dtype == DType::kBf16) {
    return launch_row_kernel_for_type<__nv_bfloat16, kForward>(static_cast<const __nv_bfloat16*>(a),
                                                               static_cast<__nv_bfloat16*>(b), n,
                                                               causal, rows, stream);
  }
  return launch_row_kernel_for_type<__half, kForward>(
      static_cast<const __half*>(a), static_cast<__half*>(b), n, causal, rows, stream);
}

// ---------------------------------------------------------------------------------------------
// Launch sequences

struct Views {
  int n;
  int d;
  int batch;                // B·H
  long long head_stride;    // N·d elements
  long long square_stride;  // N·N elements
  void* s;                  // S in forward, dP then dS in backward (elements of dtype)
  void* p;
  float scale;
  DType dtype;
  cudaDataType_t type;  // dtype in cuBLAS's terms
};

Views make_views(const AttentionShape& shape, void* workspace) {
  Views v{};
  v.n = shape.seq_len;
  v.d = shape.head_dim;
  v.batch = shape.batch * shape.heads;
  v.head_stride = static_cast<long long>(v.n) * v.d;
  v.square_stride = static_cast<long long>(v.n) * v.n;
  const std::size_t square_bytes = static_cast<std::size_t>(v.batch) *
                                   static_cast<std::size_t>(v.square_stride) * sizeof(__half);
  v.s = workspace;
  v.p = static_cast<unsigned char*>(workspace) + align_up(square_bytes);
  v.scale = 1.f / sqrtf(static_cast<float>(v.d));
  v.dtype = shape.dtype;
  v.type = shape.dtype == DType::kBf16 ? CUDA_R_16BF : CUDA_R_16F;
  return v;
}

}  // namespace

std::size_t standard_workspace_bytes(const AttentionShape& shape) {
  const std::size_t square = static_cast<std::size_t>(shape.batch) * shape.heads * shape.seq_len *
                             static_cast<std::size_t>(shape.seq_len);
  // S (reused for dP and dS in backward) and P.
  return 2 * align_up(square * sizeof(__half));
}

// Work model: FLOPs = 4·B·H·N²·d, halved when causal (the model's convention; cuBLAS computes
// the full N x N product and the softmax adds O(N²) non-GEMM work);
// minimum DRAM bytes = 2·B·H·N·d·(3 reads + 1 write); this kernel also moves S and P
// (about 8·B·H·N² bytes: S written and read, P written and read).
cudaError_t standard_forward(const AttentionShape& shape, const AttentionBuffers& buffers,
                             cudaStream_t stream) {
  cudaError_t status = cudaSuccess;
  cublasHandle_t handle = cublas_handle(&status);
  ROOFLINE_RETURN_IF_ERROR(status);
  ROOFLINE_RETURN_IF_ERROR(to_cuda_error(cublas()->set_stream(handle, stream)));
  const Views v = make_views(shape, buffers.workspace);

  // Row-major S[q][k] is column-major S^T (N_k x N_q) = K · Q^T: A = K (stored d x N_k, so
  // transposed), B = Q^T (stored as is).
  const Gemm scores{CUBLAS_OP_T, CUBLAS_OP_N,    v.n,       v.n, v.d,           buffers.k,
                    v.d,         v.head_stride,  buffers.q, v.d, v.head_stride, v.s,
                    v.n,         v.square_stride};
  ROOFLINE_RETURN_IF_ERROR(run_gemm(handle, scores, v.scale, v.batch, v.type));
  ROOFLINE_RETURN_IF_ERROR(launch_row_kernel<true>(v.dtype, v.s, v.p, v.n, shape.causal,
                                                   static_cast<long long>(v.batch) * v.n, stream));
  // O^T (d x N_q) = V^T (d x N_k) · P^T (N_k x N_q): both stored that way already.
  const Gemm output{CUBLAS_OP_N,     CUBLAS_OP_N, v.d,           v.n,          v.n,
                    buffers.v,       v.d,         v.head_stride, v.p,          v.n,
                    v.square_stride, buffers.o,   v.d,           v.head_stride};
  return run_gemm(handle, output, 1.f, v.batch, v.type);
}

// Work model: FLOPs = 2.5 × forward = 10·B·H·N²·d, halved when causal (four GEMMs here: the
// forward's P is reused, so S is not recomputed); compulsory DRAM bytes = 2·B·H·N·d·(4 reads:
// Q, K, V, dO + 3 writes: dQ, dK, dV); it also moves P, dP, dS (≈ 7·2·B·H·N² bytes).
cudaError_t standard_backward(const AttentionShape& shape, const AttentionBuffers& buffers,
                              cudaStream_t stream) {
  cudaError_t status = cudaSuccess;
  cublasHandle_t handle = cublas_handle(&status);
  ROOFLINE_RETURN_IF_ERROR(status);
  ROOFLINE_RETURN_IF_ERROR(to_cuda_error(cublas()->set_stream(handle, stream)));
  const Views v = make_views(shape, buffers.workspace);

  // dV^T (d x N_k) = dO^T (d x N_q) · P (N_q x N_k): P is stored as P^T column-major.
  const Gemm grad_v{CUBLAS_OP_N,     CUBLAS_OP_T, v.d,           v.n,          v.n,
                    buffers.d_o,     v.d,         v.head_stride, v.p,          v.n,
                    v.square_stride, buffers.d_v, v.d,           v.head_stride};
  ROOFLINE_RETURN_IF_ERROR(run_gemm(handle, grad_v, 1.f, v.batch, v.type));
  // dP (row-major N_q x N_k) = column-major dP^T = V · dO^T, the same form as S.
  const Gemm grad_p{CUBLAS_OP_T, CUBLAS_OP_N,    v.n,         v.n, v.d,           buffers.v,
                    v.d,         v.head_stride,  buffers.d_o, v.d, v.head_stride, v.s,
                    v.n,         v.square_stride};
  ROOFLINE_RETURN_IF_ERROR(run_gemm(handle, grad_p, 1.f, v.batch, v.type));
  ROOFLINE_RETURN_IF_ERROR(launch_row_kernel<false>(v.dtype, v.p, v.s, v.n, shape.causal,
                                                    static_cast<long long>(v.batch) * v.n, stream));
  // dQ^T (d x N_q) = K^T (d x N_k) · dS^T (N_k x N_q): both stored that way already.
  const Gemm grad_q{CUBLAS_OP_N,     CUBLAS_OP_N, v.d,           v.n,          v.n,
                    buffers.k,       v.d,         v.head_stride, v.s,          v.n,
                    v.square_stride, buffers.d_q, v.d,           v.head_stride};
  ROOFLINE_RETURN_IF_ERROR(run_gemm(handle, grad_q, v.scale, v.batch, v.type));
  // dK^T (d x N_k) = Q^T (d x N_q) · dS (N_q x N_k).
  const Gemm grad_k{CUBLAS_OP_N,     CUBLAS_OP_T, v.d,           v.n,          v.n,
                    buffers.q,       v.d,         v.head_stride, v.s,          v.n,
                    v.square_stride, buffers.d_k, v.d,           v.head_stride};
  return run_gemm(handle, grad_k, v.scale, v.batch, v.type);
}

bool cublas_available() {
  return cublas() != nullptr;
}

}  // namespace roofline::kernels
