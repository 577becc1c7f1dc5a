// What a pure DRAM read stream of N bytes takes, timed as `cuflash-roofline run` times a launch:
// the bound on the share of the read bandwidth that any kernel reading N bytes once can reach.
// scripts/decode_check.sh's `stream` stage builds and runs it beside flash-decode's table, and
// scripts/bench_decode.py --stream sets each decode row beside the stream of its bytes.
//
//   nvcc -O3 -arch=sm_90 -o stream_sizes scripts/probes/stream_sizes.cu && ./stream_sizes
//
// The stream: one CTA per SM of one warp whose lane 0 keeps four 32 KiB bulk copies (TMA,
// cp.async.bulk into shared memory, completing on an mbarrier) in flight, CTA c reading chunks
// c, c + grid, ...; no compute. As `calibrate`'s dram_read_bulk, over 16 MB to 2 GB. Each launch
// is timed by CUDA events right after a read of 256 MB (the L2 holds none of the buffer) and the
// median of 20 is kept (a first, untimed launch warms the code). Prints one line per size,
// `stream BYTES MEDIAN_US GBPS`, then `status OK`; exits 1 with a line on stderr on a CUDA error
// or a GPU without bulk copies (before sm_90).
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include <cuda_runtime.h>

namespace {

constexpr int kStages = 4;
constexpr unsigned kChunkBytes = 32768;

void check(cudaError_t status, const char* what) {
  if (status == cudaSuccess) return;
  std::fprintf(stderr, "stream_sizes: %s: %s\n", what, cudaGetErrorString(status));
  std::exit(1);
}

__device__ __forceinline__ uint32_t smem_u32(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

__global__ void __launch_bounds__(32)
    bulk_read(const unsigned char* src, size_t chunks, int* sink) {
  extern __shared__ __align__(128) unsigned char stage[];
  __shared__ uint64_t full[kStages];
  if (threadIdx.x != 0) return;
  for (int s = 0; s < kStages; ++s)
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(smem_u32(&full[s])));
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  const size_t mine = blockIdx.x < chunks ? (chunks - blockIdx.x + gridDim.x - 1) / gridDim.x : 0;
  for (size_t k = 0; k < mine + kStages; ++k) {
    const int s = k % kStages;
    if (k >= kStages) {  // the copy issued kStages ago into this stage has landed
      const uint32_t parity = (k / kStages - 1) & 1;
      asm volatile(
          "{\n.reg .pred p;\nW%=:\nmbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1;\n"
          "@!p bra W%=;\n}\n" ::"r"(smem_u32(&full[s])),
          "r"(parity)
          : "memory");
    }
    if (k < mine) {
      const size_t chunk = blockIdx.x + k * gridDim.x;
      asm volatile(
          "mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(smem_u32(&full[s])),
          "r"(kChunkBytes)
          : "memory");
      asm volatile(
          "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, "
          "[%3];" ::"r"(smem_u32(stage + s * kChunkBytes)),
          "l"(src + chunk * kChunkBytes), "r"(kChunkBytes), "r"(smem_u32(&full[s]))
          : "memory");
    }
  }
  if (stage[0] == 123 && stage[1] == 45) *sink = 1;  // keeps the copies; never true (bytes are 1)
}

// Reads `n` 16-byte vectors through L2: what `run`'s flush does before each timed launch.
__global__ void flush_read(const int4* p, size_t n, int* sink) {
  int4 acc = make_int4(0, 0, 0, 0);
  for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += static_cast<size_t>(gridDim.x) * blockDim.x) {
    const int4 v = __ldcg(p + i);
    acc.x ^= v.x;
    acc.y ^= v.y;
  }
  if (acc.x == 0x12345 && acc.y == 0x54321) *sink = acc.x;
}

}  // namespace

int main() {
  int device = 0, major = 0, sms = 0;
  check(cudaGetDevice(&device), "cudaGetDevice");
  check(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device), "attribute");
  check(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device), "attribute");
  if (major < 9) {
    std::fprintf(stderr, "stream_sizes: bulk copies need sm_90 or later (this GPU: sm_%d0)\n",
                 major);
    return 1;
  }
  const size_t max_bytes = size_t{2} << 30, flush_bytes = size_t{256} << 20;
  unsigned char* buffer = nullptr;
  int4* flush = nullptr;
  int* sink = nullptr;
  check(cudaMalloc(&buffer, max_bytes), "cudaMalloc (2 GiB)");
  check(cudaMalloc(&flush, flush_bytes), "cudaMalloc (flush)");
  check(cudaMalloc(&sink, sizeof(int)), "cudaMalloc");
  check(cudaMemset(buffer, 1, max_bytes), "cudaMemset");
  check(cudaMemset(flush, 2, flush_bytes), "cudaMemset");
  check(cudaFuncSetAttribute(bulk_read, cudaFuncAttributeMaxDynamicSharedMemorySize,
                             kStages * kChunkBytes),
        "cudaFuncSetAttribute");
  cudaEvent_t start, end;
  check(cudaEventCreate(&start), "cudaEventCreate");
  check(cudaEventCreate(&end), "cudaEventCreate");
  for (const size_t mb : {16, 33, 67, 134, 268, 537, 1074, 2147}) {
    const size_t chunks = std::min(max_bytes, mb * 1000 * 1000) / kChunkBytes;
    std::vector<float> ms;
    for (int rep = 0; rep <= 20; ++rep) {
      flush_read<<<sms * 4, 256>>>(flush, flush_bytes / 16, sink);
      check(cudaEventRecord(start), "cudaEventRecord");
      bulk_read<<<sms, 32, kStages * kChunkBytes>>>(buffer, chunks, sink);
      check(cudaGetLastError(), "bulk_read launch");
      check(cudaEventRecord(end), "cudaEventRecord");
      check(cudaEventSynchronize(end), "cudaEventSynchronize");
      float t = 0;
      check(cudaEventElapsedTime(&t, start, end), "cudaEventElapsedTime");
      if (rep > 0) ms.push_back(t);
    }
    std::sort(ms.begin(), ms.end());
    const double us = ms[ms.size() / 2] * 1e3;
    const double bytes = static_cast<double>(chunks) * kChunkBytes;
    std::printf("stream %.0f %.2f %.1f\n", bytes, us, bytes / us / 1e3);
  }
  check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  cudaFree(buffer);
  cudaFree(flush);
  cudaFree(sink);
  std::printf("status OK\n");
  return 0;
}
