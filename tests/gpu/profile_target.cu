// A small CUDA program for the `profile` GPU test: kernels whose work is known exactly, launched
// as real programs launch them. It checks its own results (exit 1 when wrong), so a test sees
// that profiling left them unchanged.
//
//   axpy     y = a*x + y over 2^25 floats: reads 2·4·2^25 B, writes 4·2^25 B, 2·2^25 FP32
//            FLOPs; launched from two host threads on two streams, under NVTX ranges.
//   gemm     C = A·B, 512^3, FP16 inputs, FP32 accumulate, through WMMA (mma.sync):
//            2·512^3 tensor FLOPs.
//   graph    one axpy captured into a CUDA graph and launched as a graph.
//   child    with --spawn-child, the program re-runs itself (--child) in a child process
//            that launches one axpy, before it initialises CUDA itself.
//   repeat   with --repeat N, only this: axpy with a = 1 launched N times on one stream over
//            x = 1, y = 0 (so y = N after), for runs longer than one batch of ranges.
//   graph-replay  with --graph-replay, only this: a graph of four kernel nodes (axpy, the
//            WMMA GEMM, a scale, an axpy that reads the GEMM) captured once and replayed five
//            times, each replay changing its own inputs, as a training step's graph does. Prints
//            a checksum of every output ("profile_target graph-replay: checksum ..."), which
//            profiling must leave bit-identical, and by how much the free device memory changed
//            from before the first replay to after the last ("... free memory: -3 MB"), with
//            1 GiB more allocated besides (profiling must leave the program its memory).
//   graph-branches  with --graph-branches, only this: a graph captured on two streams, with
//            parallel branches (branch a: axpy then scale on the first stream, branch b: scale
//            then axpy on the second, each captured inside an NVTX range of its name), a memset
//            before them and a join (an axpy reading both) and a device-to-device memcpy after,
//            replayed three times. Prints a checksum of every output.
//
// Prints "profile_target: ok" and exits 0 when every result is right.
#include <mma.h>
#include <nvtx3/nvToolsExt.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

#include <cuda_fp16.h>
#include <cuda_runtime.h>

namespace {

constexpr int kAxpyN = 1 << 25;
constexpr int kGemmN = 512;

#define CHECK_CUDA(call)                                                                    \
  do {                                                                                      \
    cudaError_t status_ = (call);                                                           \
    if (status_ != cudaSuccess) {                                                           \
      std::fprintf(stderr, "profile_target: %s: %s\n", #call, cudaGetErrorString(status_)); \
      std::exit(2);                                                                         \
    }                                                                                       \
  } while (0)

__global__ void axpy(float a, const float* x, float* y, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}

// One warp per 16x16 tile of C; row-major A (M×K), column-major B (K×N), row-major C.
__global__ void wmma_gemm(const __half* a, const __half* b, float* c, int n) {
  using namespace nvcuda;
  const int tile_row = blockIdx.y;
  const int tile_col = blockIdx.x;
  wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::row_major> fa;
  wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, wmma::col_major> fb;
  wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
  wmma::fill_fragment(acc, 0.0f);
  for (int k = 0; k < n; k += 16) {
    wmma::load_matrix_sync(fa, a + tile_row * 16 * n + k, n);
    wmma::load_matrix_sync(fb, b + tile_col * 16 * n + k, n);
    wmma::mma_sync(acc, fa, fb, acc);
  }
  wmma::store_matrix_sync(c + tile_row * 16 * n + tile_col * 16, acc, n, wmma::mem_row_major);
}

bool run_axpy(cudaStream_t stream, const char* range, float a) {
  float *x = nullptr, *y = nullptr;
  CHECK_CUDA(cudaMalloc(&x, kAxpyN * sizeof(float)));
  CHECK_CUDA(cudaMalloc(&y, kAxpyN * sizeof(float)));
  std::vector<float> hx(kAxpyN), hy(kAxpyN);
  for (int i = 0; i < kAxpyN; ++i) {
    hx[i] = static_cast<float>(i % 1000) * 0.5f;
    hy[i] = static_cast<float>(i % 7);
  }
  CHECK_CUDA(cudaMemcpyAsync(x, hx.data(), kAxpyN * sizeof(float), cudaMemcpyHostToDevice, stream));
  CHECK_CUDA(cudaMemcpyAsync(y, hy.data(), kAxpyN * sizeof(float), cudaMemcpyHostToDevice, stream));
  nvtxRangePushA(range);
  axpy<<<(kAxpyN + 255) / 256, 256, 0, stream>>>(a, x, y, kAxpyN);
  nvtxRangePop();
  CHECK_CUDA(cudaGetLastError());
  std::vector<float> out(kAxpyN);
  CHECK_CUDA(
      cudaMemcpyAsync(out.data(), y, kAxpyN * sizeof(float), cudaMemcpyDeviceToHost, stream));
  CHECK_CUDA(cudaStreamSynchronize(stream));
  bool ok = true;
  for (int i = 0; i < kAxpyN && ok; i += 997) ok = out[i] == a * hx[i] + hy[i];
  CHECK_CUDA(cudaFree(x));
  CHECK_CUDA(cudaFree(y));
  return ok;
}

bool run_gemm() {
  const int n = kGemmN;
  std::vector<__half> ha(n * n), hb(n * n);
  std::vector<float> fa(n * n), fb(n * n);
  for (int i = 0; i < n * n; ++i) {
    fa[i] = static_cast<float>((i * 7) % 5) - 2.0f;  // small integers: exact in FP16 and FP32
    fb[i] = static_cast<float>((i * 3) % 7) - 3.0f;
    ha[i] = __float2half(fa[i]);
    hb[i] = __float2half(fb[i]);
  }
  __half *a = nullptr, *b = nullptr;
  float* c = nullptr;
  CHECK_CUDA(cudaMalloc(&a, n * n * sizeof(__half)));
  CHECK_CUDA(cudaMalloc(&b, n * n * sizeof(__half)));
  CHECK_CUDA(cudaMalloc(&c, n * n * sizeof(float)));
  CHECK_CUDA(cudaMemcpy(a, ha.data(), n * n * sizeof(__half), cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemcpy(b, hb.data(), n * n * sizeof(__half), cudaMemcpyHostToDevice));
  wmma_gemm<<<dim3(n / 16, n / 16), 32>>>(a, b, c, n);
  CHECK_CUDA(cudaGetLastError());
  std::vector<float> hc(n * n);
  CHECK_CUDA(cudaMemcpy(hc.data(), c, n * n * sizeof(float), cudaMemcpyDeviceToHost));
  bool ok = true;
  for (int row = 0; row < n && ok; row += 37)
    for (int col = 0; col < n && ok; col += 41) {
      float expect = 0;
      for (int k = 0; k < n; ++k) expect += fa[row * n + k] * fb[col * n + k];
      ok = hc[row * n + col] == expect;
    }
  CHECK_CUDA(cudaFree(a));
  CHECK_CUDA(cudaFree(b));
  CHECK_CUDA(cudaFree(c));
  return ok;
}

bool run_repeat(int times) {
  float *x = nullptr, *y = nullptr;
  CHECK_CUDA(cudaMalloc(&x, kAxpyN * sizeof(float)));
  CHECK_CUDA(cudaMalloc(&y, kAxpyN * sizeof(float)));
  const std::vector<float> ones(kAxpyN, 1.0f);
  CHECK_CUDA(cudaMemcpy(x, ones.data(), kAxpyN * sizeof(float), cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemset(y, 0, kAxpyN * sizeof(float)));
  for (int i = 0; i < times; ++i) axpy<<<(kAxpyN + 255) / 256, 256>>>(1.0f, x, y, kAxpyN);
  CHECK_CUDA(cudaGetLastError());
  float first = -1, last = -1;
  CHECK_CUDA(cudaMemcpy(&first, y, sizeof(float), cudaMemcpyDeviceToHost));
  CHECK_CUDA(cudaMemcpy(&last, y + kAxpyN - 1, sizeof(float), cudaMemcpyDeviceToHost));
  CHECK_CUDA(cudaFree(x));
  CHECK_CUDA(cudaFree(y));
  return first == static_cast<float>(times) && last == static_cast<float>(times);
}

bool run_graph() {
  float *x = nullptr, *y = nullptr;
  CHECK_CUDA(cudaMalloc(&x, kAxpyN * sizeof(float)));
  CHECK_CUDA(cudaMalloc(&y, kAxpyN * sizeof(float)));
  CHECK_CUDA(cudaMemset(x, 0, kAxpyN * sizeof(float)));
  CHECK_CUDA(cudaMemset(y, 0, kAxpyN * sizeof(float)));
  cudaStream_t stream = nullptr;
  CHECK_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  CHECK_CUDA(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
  axpy<<<(kAxpyN + 255) / 256, 256, 0, stream>>>(1.0f, x, y, kAxpyN);
  CHECK_CUDA(cudaStreamEndCapture(stream, &graph));
  CHECK_CUDA(cudaGraphInstantiate(&exec, graph, 0));
  CHECK_CUDA(cudaGraphLaunch(exec, stream));
  CHECK_CUDA(cudaStreamSynchronize(stream));
  float first = -1;
  CHECK_CUDA(cudaMemcpy(&first, y, sizeof(float), cudaMemcpyDeviceToHost));
  CHECK_CUDA(cudaGraphExecDestroy(exec));
  CHECK_CUDA(cudaGraphDestroy(graph));
  CHECK_CUDA(cudaStreamDestroy(stream));
  CHECK_CUDA(cudaFree(x));
  CHECK_CUDA(cudaFree(y));
  return first == 0.0f;
}

__global__ void scale(float* v, float factor, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) v[i] = v[i] * factor + 0.25f;
}

// FNV-1a over the bytes of `count` floats.
std::uint64_t checksum(const std::vector<float>& values, std::uint64_t hash) {
  const auto* bytes = reinterpret_cast<const unsigned char*>(values.data());
  for (std::size_t i = 0; i < values.size() * sizeof(float); ++i)
    hash = (hash ^ bytes[i]) * 1099511628211ull;
  return hash;
}

int run_graph_replay() {
  constexpr int kReplays = 5;
  const int n = kGemmN;
  const int elements = n * n;  // the axpy and scale nodes work on the GEMM's output shape
  std::vector<__half> ha(elements), hb(elements);
  std::vector<float> hx(elements);
  for (int i = 0; i < elements; ++i) {
    ha[i] = __float2half(static_cast<float>((i * 7) % 5) - 2.0f);
    hb[i] = __float2half(static_cast<float>((i * 3) % 7) - 3.0f);
    hx[i] = static_cast<float>(i % 11) * 0.125f;
  }
  __half *a = nullptr, *b = nullptr;
  float *c = nullptr, *x = nullptr, *y = nullptr;
  CHECK_CUDA(cudaMalloc(&a, elements * sizeof(__half)));
  CHECK_CUDA(cudaMalloc(&b, elements * sizeof(__half)));
  CHECK_CUDA(cudaMalloc(&c, elements * sizeof(float)));
  CHECK_CUDA(cudaMalloc(&x, elements * sizeof(float)));
  CHECK_CUDA(cudaMalloc(&y, elements * sizeof(float)));
  CHECK_CUDA(cudaMemcpy(a, ha.data(), elements * sizeof(__half), cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemcpy(b, hb.data(), elements * sizeof(__half), cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemcpy(x, hx.data(), elements * sizeof(float), cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemset(y, 0, elements * sizeof(float)));
  // 1 GiB that the graph never reads, and one plain launch over it: the profiler's own setup
  // (done at a program's first launch) is over before the free memory is read.
  constexpr int kBallast = (1 << 30) / sizeof(float);
  float* ballast = nullptr;
  CHECK_CUDA(cudaMalloc(&ballast, kBallast * sizeof(float)));
  CHECK_CUDA(cudaMemset(ballast, 0, kBallast * sizeof(float)));
  cudaStream_t stream = nullptr;
  CHECK_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  scale<<<(kBallast + 255) / 256, 256, 0, stream>>>(ballast, 1.0f, kBallast);
  CHECK_CUDA(cudaStreamSynchronize(stream));
  std::size_t free_before = 0, free_after = 0, total = 0;
  CHECK_CUDA(cudaMemGetInfo(&free_before, &total));
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  const int blocks = (elements + 255) / 256;
  CHECK_CUDA(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
  axpy<<<blocks, 256, 0, stream>>>(0.5f, x, y, elements);  // y += x/2: replays accumulate
  wmma_gemm<<<dim3(n / 16, n / 16), 32, 0, stream>>>(a, b, c, n);
  scale<<<blocks, 256, 0, stream>>>(x, 0.75f, elements);  // the next replay's x differs
  axpy<<<blocks, 256, 0, stream>>>(1e-3f, c, y, elements);
  CHECK_CUDA(cudaStreamEndCapture(stream, &graph));
  CHECK_CUDA(cudaGraphInstantiate(&exec, graph, 0));
  std::uint64_t hash = 1469598103934665603ull;
  std::vector<float> out(elements);
  for (int r = 0; r < kReplays; ++r) {
    CHECK_CUDA(cudaGraphLaunch(exec, stream));
    CHECK_CUDA(cudaStreamSynchronize(stream));
    CHECK_CUDA(cudaMemcpy(out.data(), y, elements * sizeof(float), cudaMemcpyDeviceToHost));
    hash = checksum(out, hash);
  }
  CHECK_CUDA(cudaMemGetInfo(&free_after, &total));
  CHECK_CUDA(cudaMemcpy(out.data(), x, elements * sizeof(float), cudaMemcpyDeviceToHost));
  hash = checksum(out, hash);
  CHECK_CUDA(cudaGraphExecDestroy(exec));
  CHECK_CUDA(cudaGraphDestroy(graph));
  CHECK_CUDA(cudaStreamDestroy(stream));
  for (void* p : {static_cast<void*>(a), static_cast<void*>(b), static_cast<void*>(c),
                  static_cast<void*>(x), static_cast<void*>(y), static_cast<void*>(ballast)})
    CHECK_CUDA(cudaFree(p));
  std::printf("profile_target graph-replay: checksum %016llx\n",
              static_cast<unsigned long long>(hash));
  std::printf("profile_target graph-replay: free memory: %+.0f MB\n",
              (static_cast<double>(free_after) - static_cast<double>(free_before)) / 1e6);
  return 0;
}

int run_graph_branches() {
  constexpr int kReplays = 3;
  constexpr int n = 1 << 24;
  std::vector<float> host(n);
  for (int i = 0; i < n; ++i) host[i] = static_cast<float>(i % 13) * 0.25f;
  float *x = nullptr, *y = nullptr, *z = nullptr, *w = nullptr;
  for (float** p : {&x, &y, &z, &w}) {
    CHECK_CUDA(cudaMalloc(p, n * sizeof(float)));
    CHECK_CUDA(cudaMemcpy(*p, host.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  }
  cudaStream_t main_stream = nullptr, side = nullptr;
  CHECK_CUDA(cudaStreamCreateWithFlags(&main_stream, cudaStreamNonBlocking));
  CHECK_CUDA(cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking));
  cudaEvent_t fork = nullptr, join = nullptr;
  CHECK_CUDA(cudaEventCreateWithFlags(&fork, cudaEventDisableTiming));
  CHECK_CUDA(cudaEventCreateWithFlags(&join, cudaEventDisableTiming));
  const int blocks = n / 256;
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  CHECK_CUDA(cudaStreamBeginCapture(main_stream, cudaStreamCaptureModeGlobal));
  CHECK_CUDA(cudaMemsetAsync(w, 0, n * sizeof(float), main_stream));
  CHECK_CUDA(cudaEventRecord(fork, main_stream));
  CHECK_CUDA(cudaStreamWaitEvent(side, fork));
  nvtxRangePushA("branch a");
  axpy<<<blocks, 256, 0, main_stream>>>(0.5f, x, y, n);
  scale<<<blocks, 256, 0, main_stream>>>(y, 0.5f, n);
  nvtxRangePop();
  nvtxRangePushA("branch b");
  scale<<<blocks, 256, 0, side>>>(z, 0.75f, n);
  axpy<<<blocks, 256, 0, side>>>(0.25f, x, z, n);
  nvtxRangePop();
  CHECK_CUDA(cudaEventRecord(join, side));
  CHECK_CUDA(cudaStreamWaitEvent(main_stream, join));
  nvtxRangePushA("join");
  axpy<<<blocks, 256, 0, main_stream>>>(1.0f, y, z, n);
  nvtxRangePop();
  CHECK_CUDA(cudaMemcpyAsync(w, z, n * sizeof(float), cudaMemcpyDeviceToDevice, main_stream));
  CHECK_CUDA(cudaStreamEndCapture(main_stream, &graph));
  CHECK_CUDA(cudaGraphInstantiate(&exec, graph, 0));
  std::uint64_t hash = 1469598103934665603ull;
  std::vector<float> out(n);
  for (int r = 0; r < kReplays; ++r) {
    CHECK_CUDA(cudaGraphLaunch(exec, main_stream));
    CHECK_CUDA(cudaStreamSynchronize(main_stream));
    CHECK_CUDA(cudaMemcpy(out.data(), w, n * sizeof(float), cudaMemcpyDeviceToHost));
    hash = checksum(out, hash);
  }
  CHECK_CUDA(cudaMemcpy(out.data(), y, n * sizeof(float), cudaMemcpyDeviceToHost));
  hash = checksum(out, hash);
  CHECK_CUDA(cudaGraphExecDestroy(exec));
  CHECK_CUDA(cudaGraphDestroy(graph));
  for (cudaEvent_t e : {fork, join}) CHECK_CUDA(cudaEventDestroy(e));
  for (cudaStream_t s : {main_stream, side}) CHECK_CUDA(cudaStreamDestroy(s));
  for (float* p : {x, y, z, w}) CHECK_CUDA(cudaFree(p));
  std::printf("profile_target graph-branches: checksum %016llx\n",
              static_cast<unsigned long long>(hash));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1 && std::strcmp(argv[1], "--graph-replay") == 0) return run_graph_replay();
  if (argc > 1 && std::strcmp(argv[1], "--graph-branches") == 0) return run_graph_branches();
  const bool child = argc > 1 && std::strcmp(argv[1], "--child") == 0;
  const bool spawn = argc > 1 && std::strcmp(argv[1], "--spawn-child") == 0;
  if (argc > 2 && std::strcmp(argv[1], "--repeat") == 0) {
    const bool ok = run_repeat(std::atoi(argv[2]));
    std::printf("profile_target: %s\n", ok ? "ok" : "WRONG");
    return ok ? 0 : 1;
  }
  if (child) {
    const bool ok = run_axpy(nullptr, "child axpy", 3.0f);
    std::printf("profile_target child: %s\n", ok ? "ok" : "WRONG");
    return ok ? 0 : 1;
  }
  pid_t pid = -1;
  if (spawn) {
    pid = fork();
    if (pid == 0) {
      execl("/proc/self/exe", argv[0], "--child", static_cast<char*>(nullptr));
      _exit(127);
    }
  }
  bool ok = true;
  cudaStream_t streams[2];
  for (cudaStream_t& s : streams) CHECK_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  CHECK_CUDA(cudaFree(nullptr));
  bool thread_ok[2] = {false, false};
  std::thread threads[2] = {
      std::thread([&] { thread_ok[0] = run_axpy(streams[0], "thread 0", 2.0f); }),
      std::thread([&] { thread_ok[1] = run_axpy(streams[1], "thread 1", -1.5f); })};
  for (std::thread& t : threads) t.join();
  ok = ok && thread_ok[0] && thread_ok[1];
  nvtxRangePushA("gemm");
  ok = run_gemm() && ok;
  nvtxRangePop();
  ok = run_graph() && ok;
  for (cudaStream_t s : streams) CHECK_CUDA(cudaStreamDestroy(s));
  if (pid > 0) {
    int status = 0;
    waitpid(pid, &status, 0);
    ok = ok && WIFEXITED(status) && WEXITSTATUS(status) == 0;
  }
  std::printf("profile_target: %s\n", ok ? "ok" : "WRONG");
  return ok ? 0 : 1;
}
