// Times every bundled kernel, forward and backward, at the benchmark shapes and prints
// TFLOP/s (4·B·H·N²·d forward, halved when causal; backward 2.5x). Each repetition runs after
// an L2 flush and is timed with CUDA events; the median of the repetitions is reported.
//
// usage: gpu_kernel_bench [--reps R] [--seq N] [--kernels a,b,c] [--verify]
//   --verify also checks each forward output at B=1,H=8 against the FP32 reference.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

#include <cuda_runtime_api.h>

#include "kernels/attention.hpp"
#include "tests/gpu/device_buffer.hpp"

namespace rk = roofline::kernels;
using roofline::testing::DeviceBuffer;

namespace {

bool check(cudaError_t status, const char* what) {
  if (status != cudaSuccess) {
    std::fprintf(stderr, "error: %s: %s\n", what, cudaGetErrorString(status));
    return false;
  }
  return true;
}

struct Row {
  std::string kernel;
  std::string shape;
  std::string pass;
  double ms;
  double spread_ms;  // max - min over the repetitions
  double tflops;
  std::string note;
};

// Median milliseconds of `reps` runs of `body`, each after an L2 flush.
template <typename Body>
bool time_median(Body body, DeviceBuffer& flush, int warmup, int reps, double* median_ms,
                 double* spread_ms) {
  cudaEvent_t start;
  cudaEvent_t stop;
  if (!check(cudaEventCreate(&start), "event") || !check(cudaEventCreate(&stop), "event")) {
    return false;
  }
  std::vector<float> times;
  bool ok = true;
  for (int i = 0; i < warmup + reps && ok; ++i) {
    ok = check(rk::flush_l2(flush.get(), flush.bytes(), nullptr), "flush_l2");
    ok = ok && check(cudaEventRecord(start), "record");
    ok = ok && check(body(), "kernel launch");
    ok = ok && check(cudaEventRecord(stop), "record");
    ok = ok && check(cudaEventSynchronize(stop), "kernel execution");
    float ms = 0;
    ok = ok && check(cudaEventElapsedTime(&ms, start, stop), "elapsed");
    if (i >= warmup) times.push_back(ms);
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  if (!ok) return false;
  std::sort(times.begin(), times.end());
  *median_ms = times.size() % 2 == 1
                   ? times[times.size() / 2]
                   : 0.5 * (times[times.size() / 2 - 1] + times[times.size() / 2]);
  *spread_ms = times.back() - times.front();
  return true;
}

std::vector<std::string> split(const std::string& list) {
  std::vector<std::string> out;
  std::stringstream in(list);
  std::string item;
  while (std::getline(in, item, ',')) out.push_back(item);
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  int reps = 10;
  int seq_len = 16384;
  bool verify = false;
  std::vector<std::string> kernels = {"standard", "flash-v1", "flash-v2"};
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--reps") && i + 1 < argc) {
      reps = std::atoi(argv[++i]);
    } else if (!std::strcmp(argv[i], "--seq") && i + 1 < argc) {
      seq_len = std::atoi(argv[++i]);
    } else if (!std::strcmp(argv[i], "--kernels") && i + 1 < argc) {
      kernels = split(argv[++i]);
    } else if (!std::strcmp(argv[i], "--verify")) {
      verify = true;
    } else {
      std::fprintf(stderr, "usage: %s [--reps R] [--seq N] [--kernels a,b] [--verify]\n", argv[0]);
      return 2;
    }
  }
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::printf("SKIPPED: no CUDA device (gpu_kernel_bench)\n");
    return 77;
  }
  cudaDeviceProp prop{};
  cudaGetDeviceProperties(&prop, 0);
  std::printf("device: %s, %d SMs, L2 %d MB\n", prop.name, prop.multiProcessorCount,
              prop.l2CacheSize >> 20);

  DeviceBuffer flush(
      std::max<std::size_t>(4 * static_cast<std::size_t>(prop.l2CacheSize), 256u << 20));
  std::vector<Row> rows;
  struct Config {
    int batch, heads, head_dim;
  };
  for (const Config& cfg : {Config{1, 8, 64}, Config{4, 16, 128}}) {
    for (bool causal : {false, true}) {
      rk::AttentionShape shape;
      shape.batch = cfg.batch;
      shape.heads = cfg.heads;
      shape.seq_len = seq_len;
      shape.head_dim = cfg.head_dim;
      shape.causal = causal;
      char label[96];
      std::snprintf(label, sizeof(label), "B%d H%d N%d d%d %s", cfg.batch, cfg.heads, seq_len,
                    cfg.head_dim, causal ? "causal" : "full");
      const std::size_t rows_count =
          static_cast<std::size_t>(cfg.batch) * cfg.heads * static_cast<std::size_t>(seq_len);
      const std::size_t elements = rows_count * cfg.head_dim;
      DeviceBuffer q(elements * 2), k(elements * 2), v(elements * 2), o(elements * 2),
          d_o(elements * 2), d_q(elements * 2), d_k(elements * 2), d_v(elements * 2),
          lse(rows_count * sizeof(float));
      bool ok = check(rk::fill_random_half(q.get(), elements, 11, 1.f, nullptr), "fill") &&
                check(rk::fill_random_half(k.get(), elements, 12, 1.f, nullptr), "fill") &&
                check(rk::fill_random_half(v.get(), elements, 13, 1.f, nullptr), "fill") &&
                check(rk::fill_random_half(d_o.get(), elements, 14, 1.f, nullptr), "fill");
      if (!ok) return 4;
      DeviceBuffer ref_o, ref_lse;
      if (verify && cfg.batch == 1) {
        ref_o = DeviceBuffer(elements * sizeof(float));
        ref_lse = DeviceBuffer(rows_count * sizeof(float));
        rk::AttentionBuffers in;
        in.q = q.get();
        in.k = k.get();
        in.v = v.get();
        rk::ReferenceOutputs out;
        out.o = ref_o.as_float();
        out.lse = ref_lse.as_float();
        if (!check(rk::launch_reference(rk::Pass::kForward, shape, in, out, false, nullptr),
                   "reference") ||
            !check(cudaDeviceSynchronize(), "reference")) {
          return 4;
        }
      }
      const double fwd_flops = 4.0 * cfg.batch * cfg.heads * static_cast<double>(seq_len) *
                               seq_len * cfg.head_dim * (causal ? 0.5 : 1.0);
      for (const std::string& kernel : kernels) {
        DeviceBuffer workspace(rk::workspace_bytes(kernel, shape));
        if (workspace.status() != cudaSuccess) {
          cudaGetLastError();
          rows.push_back({kernel, label, "fwd", 0, 0, 0, "workspace does not fit"});
          continue;
        }
        rk::AttentionBuffers b;
        b.q = q.get();
        b.k = k.get();
        b.v = v.get();
        b.o = o.get();
        b.lse = lse.as_float();
        b.d_o = d_o.get();
        b.d_q = d_q.get();
        b.d_k = d_k.get();
        b.d_v = d_v.get();
        b.workspace = workspace.get();
        for (rk::Pass pass : {rk::Pass::kForward, rk::Pass::kBackward}) {
          const bool forward = pass == rk::Pass::kForward;
          auto body = [&] { return rk::launch_attention(kernel, pass, shape, b, nullptr); };
          // One untimed run: module load, cuBLAS handle, and (for backward) the forward state.
          if (!check(rk::launch_attention(kernel, rk::Pass::kForward, shape, b, nullptr),
                     "forward") ||
              !check(cudaDeviceSynchronize(), "forward")) {
            return 4;
          }
          double median = 0;
          double spread = 0;
          if (!time_median(body, flush, 1, reps, &median, &spread)) return 4;
          const double flops = forward ? fwd_flops : 2.5 * fwd_flops;
          Row row{kernel, label,  forward ? "fwd" : "bwd",
                  median, spread, flops / (median * 1e-3) / 1e12,
                  ""};
          if (forward && ref_o.get() != nullptr) {
            DeviceBuffer stats(3 * sizeof(double));
            double host[3] = {};
            if (check(rk::compare_half_to_float(o.get(), ref_o.as_float(), elements,
                                                static_cast<double*>(stats.get()), nullptr),
                      "compare") &&
                check(cudaMemcpy(host, stats.get(), sizeof(host), cudaMemcpyDeviceToHost),
                      "copy")) {
              char note[64];
              std::snprintf(note, sizeof(note), "O rel L2 %.2e", host[1] / host[2]);
              row.note = note;
            }
          }
          std::printf("%-9s %-28s %s %10.3f ms (spread %.3f) %8.1f TFLOP/s %s\n",
                      row.kernel.c_str(), row.shape.c_str(), row.pass.c_str(), row.ms,
                      row.spread_ms, row.tflops, row.note.c_str());
          std::fflush(stdout);
          rows.push_back(row);
        }
      }
    }
  }
  std::printf(
      "\n| kernel | shape | pass | median ms | TFLOP/s | note |\n|---|---|---|---|---|---|\n");
  for (const Row& r : rows) {
    std::printf("| %s | %s | %s | %.3f | %.1f | %s |\n", r.kernel.c_str(), r.shape.c_str(),
                r.pass.c_str(), r.ms, r.tflops, r.note.c_str());
  }
  return 0;
}
