// Device probe for lib/gpu/range_profiler.cpp: runs RangeProfiler (user ranges, user replay)
// with the recommended metric set over kernels of known work, an L2 flush before every
// measured launch in every pass, and prints pass count, per-range values against the expected
// work, and the cost of each phase. Writes the decoded counter-data image, its metric list and
// values (a fixture for offline evaluation tests) into the folder given as argv[1].
//
// Not part of the build: scripts/device_cupti_probe.sh compiles it with nvcc next to
// range_profiler.cpp. Kernels:
//   flush:  reads a 256 MiB buffer (> 4x the H200's 60 MB L2) so the next kernel starts cold;
//           reading, not writing, so no dirty lines are written back inside a measured range.
//   copy:   256 MiB int4 copy: 268435456 B read from DRAM, up to that written (minus lines
//           still dirty in L2 at the end), 2x268435456 B of L2 traffic from the SMs.
//   ffma:   4 independent FFMA chains per thread: threads x iters x 4 FFMA instructions.
//   wmma:   16x16x16 fp16->fp32 mma_sync per warp and step (HMMA on sm_80/sm_90):
//           warps x iters x 2*16*16*16 tensor FLOPs.
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <mma.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "lib/gpu/range_profiler.hpp"

namespace {

using roofline::gpu::MetricHost;
using roofline::gpu::ProfilerError;
using roofline::gpu::RangeProfiler;
using roofline::gpu::RangeValues;

#define PROBE_CUDA(call)                                                      \
  do {                                                                        \
    cudaError_t e_ = (call);                                                  \
    if (e_ != cudaSuccess) {                                                  \
      std::fprintf(stderr, "%s failed: %s\n", #call, cudaGetErrorString(e_)); \
      std::exit(1);                                                           \
    }                                                                         \
  } while (0)

constexpr std::size_t kCopyBytes = std::size_t{256} << 20;
constexpr std::size_t kFlushBytes = std::size_t{256} << 20;
constexpr int kFmaBlocks = 1024, kFmaThreads = 256, kFmaIters = 4096;
constexpr int kMmaBlocks = 528, kMmaWarpsPerBlock = 4, kMmaIters = 4096;

__global__ void flush_kernel(const int4* buf, std::size_t n, int* sink) {
  int acc = 0;
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < n;
       i += std::size_t{gridDim.x} * blockDim.x) {
    int4 v = buf[i];
    acc ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  if (acc == 0x7fffffff) *sink = acc;  // keeps the reads; practically never stores
}

__global__ void copy_kernel(const int4* src, int4* dst, std::size_t n) {
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < n;
       i += std::size_t{gridDim.x} * blockDim.x) {
    dst[i] = src[i];
  }
}

__global__ void ffma_kernel(float* out, float b, float c, int iters) {
  float a0 = threadIdx.x, a1 = a0 + 1.f, a2 = a0 + 2.f, a3 = a0 + 3.f;
#pragma unroll 16
  for (int i = 0; i < iters; ++i) {
    a0 = fmaf(a0, b, c);
    a1 = fmaf(a1, b, c);
    a2 = fmaf(a2, b, c);
    a3 = fmaf(a3, b, c);
  }
  out[blockIdx.x * blockDim.x + threadIdx.x] = a0 + a1 + a2 + a3;
}

__global__ void wmma_kernel(const half* a, const half* b, float* out, int iters) {
  using namespace nvcuda;
  wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> fa;
  wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::col_major> fb;
  wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
  wmma::load_matrix_sync(fa, a, 16);
  wmma::load_matrix_sync(fb, b, 16);
  wmma::fill_fragment(acc, 0.0f);
  for (int i = 0; i < iters; ++i) wmma::mma_sync(acc, fa, fb, acc);
  const int warp = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
  wmma::store_matrix_sync(out + std::size_t{256} * warp, acc, 16, wmma::mem_row_major);
}

__global__ void fill_half(half* p, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] = __float2half(0.001f * (i % 7));
}

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

struct Buffers {
  int4* flush = nullptr;
  int4* src = nullptr;
  int4* dst = nullptr;
  int* sink = nullptr;
  float* fma_out = nullptr;
  half* a = nullptr;
  half* b = nullptr;
  float* mma_out = nullptr;
};

void flush(const Buffers& buf) {
  flush_kernel<<<132 * 8, 512>>>(buf.flush, kFlushBytes / sizeof(int4), buf.sink);
}

void launch(const Buffers& buf, const std::string& what, int small) {
  if (what.rfind("copy", 0) == 0) {
    copy_kernel<<<132 * 8, 512>>>(buf.src, buf.dst, kCopyBytes / sizeof(int4));
  } else if (what.rfind("ffma", 0) == 0) {
    ffma_kernel<<<kFmaBlocks, kFmaThreads>>>(buf.fma_out, 0.999f, 0.001f, small ? 16 : kFmaIters);
  } else {
    wmma_kernel<<<kMmaBlocks, 32 * kMmaWarpsPerBlock>>>(buf.a, buf.b, buf.mma_out, kMmaIters);
  }
}

// One sweep: all passes over `ranges`, flushing L2 before each measured launch.
std::vector<RangeValues> sweep(RangeProfiler& profiler, const Buffers& buf,
                               const std::vector<std::string>& ranges, bool small) {
  int pass = 0;
  bool done = false;
  do {
    const double t0 = now_s();
    profiler.begin_pass();
    for (const auto& r : ranges) {
      flush(buf);
      profiler.push_range(r);
      launch(buf, r, small ? 1 : 0);
      profiler.pop_range();
    }
    PROBE_CUDA(cudaDeviceSynchronize());
    done = profiler.end_pass();
    std::printf("  pass %d: %.1f ms (begin..end, %zu ranges)%s\n", ++pass, (now_s() - t0) * 1e3,
                ranges.size(), done ? ", all passes submitted" : "");
  } while (!done);
  const double t0 = now_s();
  auto values = profiler.decode_and_evaluate();
  std::printf("  decode_and_evaluate: %.1f ms, %zu ranges back\n", (now_s() - t0) * 1e3,
              values.size());
  return values;
}

void print_values(const std::vector<std::string>& metrics, const std::vector<RangeValues>& ranges) {
  for (const auto& r : ranges) {
    std::printf("  range '%s'\n", r.name.c_str());
    for (std::size_t i = 0; i < metrics.size(); ++i) {
      std::printf("    %-66s %.6g\n", metrics[i].c_str(), r.values[i]);
    }
  }
}

double value(const std::vector<std::string>& metrics, const RangeValues& r, const char* name) {
  for (std::size_t i = 0; i < metrics.size(); ++i) {
    if (metrics[i] == name) return r.values[i];
  }
  return NAN;
}

void write_file(const std::string& path, const std::vector<std::uint8_t>& bytes) {
  std::ofstream f(path, std::ios::binary);
  f.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  std::printf("  wrote %s (%zu bytes)\n", path.c_str(), bytes.size());
}

}  // namespace

int main(int argc, char** argv) {
  const std::string out = argc > 1 ? argv[1] : ".";
  int count = 0;
  PROBE_CUDA(cudaGetDeviceCount(&count));
  cudaDeviceProp prop{};
  PROBE_CUDA(cudaGetDeviceProperties(&prop, 0));
  std::printf("devices: %d; device 0: %s, cc %d.%d, %d SMs, L2 %d bytes\n", count, prop.name,
              prop.major, prop.minor, prop.multiProcessorCount, prop.l2CacheSize);

  double t0 = now_s();
  std::string chip;
  try {
    chip = roofline::gpu::device_chip_name(0);
  } catch (const ProfilerError& e) {
    std::printf("device_chip_name failed (kind %d): %s\n", static_cast<int>(e.kind()), e.what());
    return 2;
  }
  std::printf("device_chip_name: %s (%.1f ms)\n", chip.c_str(), (now_s() - t0) * 1e3);
  try {
    roofline::gpu::device_chip_name(7);
    std::printf("device_chip_name(7): no exception (unexpected)\n");
  } catch (const ProfilerError& e) {
    std::printf("device_chip_name(7): kind %d: %s\n", static_cast<int>(e.kind()), e.what());
  }

  std::vector<std::string> metrics = {
      "gpu__time_duration.sum",
      "sm__cycles_elapsed.avg.per_second",
      "dram__cycles_elapsed.avg.per_second",
      "lts__cycles_elapsed.avg.per_second",
      "dram__bytes_read.sum",
      "dram__bytes_write.sum",
      "lts__t_sectors_srcunit_tex.sum",
      "lts__t_bytes.sum",
      "l1tex__t_bytes.sum",
      "sm__sass_data_bytes_mem_shared.sum",
      "sm__sass_thread_inst_executed_op_fadd_pred_on.sum",
      "sm__sass_thread_inst_executed_op_fmul_pred_on.sum",
      "sm__sass_thread_inst_executed_op_ffma_pred_on.sum",
      "sm__sass_thread_inst_executed_op_hadd_pred_on.sum",
      "sm__sass_thread_inst_executed_op_hmul_pred_on.sum",
      "sm__sass_thread_inst_executed_op_hfma_pred_on.sum",
  };
  const std::vector<std::string> tensor =
      chip == "GH100"
          ? std::vector<
                std::string>{"sm__ops_path_tensor_op_hmma_src_fp16_dst_fp32_sparsity_off.sum",
                             "sm__ops_path_tensor_op_hmma_src_fp16_dst_fp16_sparsity_off.sum",
                             "sm__ops_path_tensor_op_hmma_src_bf16_dst_fp32_sparsity_off.sum",
                             "sm__ops_path_tensor_op_hmma_src_tf32_dst_fp32_sparsity_off.sum",
                             "sm__ops_path_tensor_op_hgmma_src_fp16_sparsity_off.sum",
                             "sm__ops_path_tensor_op_hgmma_src_bf16_dst_fp32_sparsity_off.sum",
                             "sm__ops_path_tensor_op_hgmma_src_tf32_dst_fp32_sparsity_off.sum"}
          : std::vector<std::string>{"sm__ops_path_tensor_src_fp16_dst_fp32_sparsity_off.sum",
                                     "sm__ops_path_tensor_src_fp16_dst_fp16_sparsity_off.sum",
                                     "sm__ops_path_tensor_src_bf16_dst_fp32_sparsity_off.sum",
                                     "sm__ops_path_tensor_src_tf32_dst_fp32_sparsity_off.sum"};
  metrics.insert(metrics.end(), tensor.begin(), tensor.end());

  t0 = now_s();
  MetricHost host(chip);
  const double t_host = now_s() - t0;
  t0 = now_s();
  const auto offline_config = host.config_image(metrics);
  const double t_config = now_s() - t0;
  std::printf(
      "MetricHost(%s): %.1f ms; config_image (%zu metrics, incl. name checks): %.1f ms, "
      "%zu bytes, %d passes\n",
      chip.c_str(), t_host * 1e3, metrics.size(), t_config * 1e3, offline_config.size(),
      host.num_passes(offline_config));

  Buffers buf;
  PROBE_CUDA(cudaMalloc(&buf.flush, kFlushBytes));
  PROBE_CUDA(cudaMalloc(&buf.src, kCopyBytes));
  PROBE_CUDA(cudaMalloc(&buf.dst, kCopyBytes));
  PROBE_CUDA(cudaMalloc(&buf.sink, sizeof(int)));
  PROBE_CUDA(cudaMalloc(&buf.fma_out, sizeof(float) * kFmaBlocks * kFmaThreads));
  PROBE_CUDA(cudaMalloc(&buf.a, sizeof(half) * 256));
  PROBE_CUDA(cudaMalloc(&buf.b, sizeof(half) * 256));
  PROBE_CUDA(cudaMalloc(&buf.mma_out, sizeof(float) * 256 * kMmaBlocks * kMmaWarpsPerBlock));
  PROBE_CUDA(cudaMemset(buf.flush, 0x3c, kFlushBytes));
  PROBE_CUDA(cudaMemset(buf.src, 0x5a, kCopyBytes));
  fill_half<<<1, 256>>>(buf.a, 256);
  fill_half<<<1, 256>>>(buf.b, 256);
  // Warm-up: module load and first launches outside the profiler.
  for (const char* k : {"copy_256MiB", "ffma", "wmma"}) launch(buf, k, 0);
  flush(buf);
  PROBE_CUDA(cudaDeviceSynchronize());

  const int max_ranges = 8;
  t0 = now_s();
  RangeProfiler* profiler_ptr = nullptr;
  try {
    profiler_ptr = new RangeProfiler(0, metrics, max_ranges);
  } catch (const ProfilerError& e) {
    std::printf("RangeProfiler failed (kind %d): %s\n", static_cast<int>(e.kind()), e.what());
    return 3;
  }
  RangeProfiler& profiler = *profiler_ptr;
  std::printf(
      "RangeProfiler ctor (init, supported, chip, availability, config, enable, "
      "counter data, set config): %.1f ms; %d passes; counter data %zu bytes\n",
      (now_s() - t0) * 1e3, profiler.num_passes(), profiler.counter_data_image().size());
  const std::vector<std::uint8_t> empty_image = profiler.counter_data_image();
  write_file(out + "/empty_initialized.counterdata", empty_image);

  try {
    RangeProfiler second(0, metrics, 2);
    std::printf("second RangeProfiler: no exception (unexpected)\n");
  } catch (const ProfilerError& e) {
    std::printf("second RangeProfiler: kind %d: %s\n", static_cast<int>(e.kind()), e.what());
  }

  const std::vector<std::string> ranges = {"copy_256MiB", "ffma", "wmma"};
  std::printf("sweep 1: %s\n", "copy_256MiB, ffma, wmma");
  std::vector<RangeValues> v1;
  try {
    v1 = sweep(profiler, buf, ranges, false);
  } catch (const ProfilerError& e) {
    std::printf("sweep 1 failed (kind %d): %s\n", static_cast<int>(e.kind()), e.what());
    return 4;
  }
  print_values(metrics, v1);
  const std::vector<std::uint8_t> image1 = profiler.counter_data_image();
  write_file(out + "/gh100_probe.counterdata", image1);
  {
    std::ofstream f(out + "/gh100_probe.txt");
    f << "# chip " << chip << "\n# metrics (in order)\n";
    for (const auto& m : metrics) f << "metric " << m << "\n";
    for (const auto& r : v1) {
      for (std::size_t i = 0; i < metrics.size(); ++i) {
        char line[512];
        std::snprintf(line, sizeof line, "value %s %s %.17g\n", r.name.c_str(), metrics[i].c_str(),
                      r.values[i]);
        f << line;
      }
    }
  }

  if (v1.size() == 3) {
    const double threads = double(kFmaBlocks) * kFmaThreads;
    const double warps = double(kMmaBlocks) * kMmaWarpsPerBlock;
    std::printf("checks:\n");
    std::printf("  copy dram read  %.6g B (expect %.6g)\n",
                value(metrics, v1[0], "dram__bytes_read.sum"), double(kCopyBytes));
    std::printf("  copy dram write %.6g B (expect <= %.6g; dirty L2 lines not counted)\n",
                value(metrics, v1[0], "dram__bytes_write.sum"), double(kCopyBytes));
    std::printf("  copy L2 from SMs %.6g B (expect %.6g)\n",
                32 * value(metrics, v1[0], "lts__t_sectors_srcunit_tex.sum"), 2.0 * kCopyBytes);
    std::printf("  copy time %.6g ns -> %.3f TB/s (read+write)\n",
                value(metrics, v1[0], "gpu__time_duration.sum"),
                2.0 * kCopyBytes / value(metrics, v1[0], "gpu__time_duration.sum") / 1e3);
    std::printf("  ffma inst %.6g (expect %.6g)\n",
                value(metrics, v1[1], "sm__sass_thread_inst_executed_op_ffma_pred_on.sum"),
                threads * kFmaIters * 4);
    std::printf("  wmma tensor flops (hmma f16->f32) %.6g (expect %.6g)\n", v1[2].values[16],
                warps * kMmaIters * 2.0 * 16 * 16 * 16);
    std::printf("  sm clock %.4g Hz, dram clock %.4g Hz\n",
                value(metrics, v1[1], "sm__cycles_elapsed.avg.per_second"),
                value(metrics, v1[0], "dram__cycles_elapsed.avg.per_second"));
  }

  // Offline evaluation of the same image on a fresh host object, as CI will do it.
  try {
    t0 = now_s();
    MetricHost offline(chip);
    const auto v_off = offline.evaluate(image1, metrics);
    double worst = 0;
    for (std::size_t r = 0; r < v_off.size() && r < v1.size(); ++r) {
      for (std::size_t i = 0; i < metrics.size(); ++i) {
        const double a = v_off[r].values[i], b = v1[r].values[i];
        if (a != b) worst = std::fmax(worst, std::fabs(a - b) / std::fmax(std::fabs(b), 1e-300));
      }
    }
    std::printf(
        "offline evaluate: %zu ranges, names %s/%s/%s, worst relative difference %.3g "
        "(%.1f ms)\n",
        v_off.size(), v_off.size() > 0 ? v_off[0].name.c_str() : "-",
        v_off.size() > 1 ? v_off[1].name.c_str() : "-",
        v_off.size() > 2 ? v_off[2].name.c_str() : "-", worst, (now_s() - t0) * 1e3);
  } catch (const ProfilerError& e) {
    std::printf("offline evaluate failed (kind %d): %s\n", static_cast<int>(e.kind()), e.what());
  }

  // Reuse for a second sweep, with a duplicated range name at the end.
  std::printf("sweep 2 (reuse; 4 ranges, 'copy_256MiB' twice):\n");
  try {
    const auto v2 = sweep(profiler, buf, {"copy_256MiB", "ffma", "wmma", "copy_256MiB"}, false);
    for (const auto& r : v2) {
      std::printf("  range '%s': time %.6g ns, dram read %.6g B, ffma %.6g\n", r.name.c_str(),
                  value(metrics, r, "gpu__time_duration.sum"),
                  value(metrics, r, "dram__bytes_read.sum"),
                  value(metrics, r, "sm__sass_thread_inst_executed_op_ffma_pred_on.sum"));
    }
    write_file(out + "/sweep2.counterdata", profiler.counter_data_image());
  } catch (const ProfilerError& e) {
    std::printf("sweep 2 failed (kind %d): %s\n", static_cast<int>(e.kind()), e.what());
  }

  // More ranges than max_ranges: expect the dropped-range error.
  std::printf("sweep 3 (%d small ranges, max_ranges %d):\n", max_ranges + 2, max_ranges);
  try {
    std::vector<std::string> many;
    for (int i = 0; i < max_ranges + 2; ++i) many.push_back("ffma_small_" + std::to_string(i));
    const auto v3 = sweep(profiler, buf, many, true);
    std::printf("  no exception: %zu ranges back\n", v3.size());
  } catch (const ProfilerError& e) {
    std::printf("  kind %d: %s\n", static_cast<int>(e.kind()), e.what());
  }

  t0 = now_s();
  delete profiler_ptr;
  std::printf("RangeProfiler destructor: %.1f ms\n", (now_s() - t0) * 1e3);

  // A fresh profiler after the first is gone (guard released, CUPTI re-initialised).
  try {
    t0 = now_s();
    RangeProfiler again(0, {"gpu__time_duration.sum", "dram__bytes_read.sum"}, 2);
    std::printf("second instance after the first: ctor %.1f ms, %d passes\n", (now_s() - t0) * 1e3,
                again.num_passes());
    const auto v = sweep(again, buf, {"copy_256MiB"}, false);
    if (!v.empty()) std::printf("  copy dram read %.6g B\n", v[0].values[1]);
    write_file(out + "/small_2metrics.counterdata", again.counter_data_image());
  } catch (const ProfilerError& e) {
    std::printf("second instance failed (kind %d): %s\n", static_cast<int>(e.kind()), e.what());
  }
  std::ifstream maps("/proc/self/maps");
  std::string line, last;
  while (std::getline(maps, line)) {
    const auto at = line.find('/');
    if (at == std::string::npos) continue;
    const std::string path = line.substr(at);
    if ((path.find("cupti") != std::string::npos || path.find("nvperf") != std::string::npos ||
         path.find("libcuda") != std::string::npos) &&
        path != last) {
      std::printf("loaded: %s\n", path.c_str());
      last = path;
    }
  }
  std::printf("probe done\n");
  return 0;
}
