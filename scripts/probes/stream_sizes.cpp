// What a pure DRAM read of N bytes takes, timed as `cuflash-roofline run` times a launch: the
// bound on the share of the read bandwidth that any kernel reading N bytes once can reach.
// scripts/decode_check.sh's `stream` stage runs it beside flash-decode's table, and
// scripts/bench_decode.py --stream sets each decode row beside the read of its bytes.
//
//   cmake --build BUILD --target stream_sizes && BUILD/scripts/probes/stream_sizes
//
// The read is `calibrate`'s dram_read_bulk micro-kernel (kernels/calibration_bulk.cu: one CTA per
// SM keeping four 32 KiB bulk copies in flight, no compute) over one pass of 16 MB to 2 GB. Each
// launch follows `run`'s L2 flush on the same stream (kernels::flush_l2 over twice the L2) and is
// timed by CUDA events around it; the median of 20 is kept, after one untimed launch. Prints one
// line per size, `stream BYTES MEDIAN_US GBPS`, then `status OK`. Exit 1 with one line on
// stderr on a CUDA error or a GPU without bulk copies (before sm_90, or no sm_90a code).
#include <algorithm>
#include <cstddef>
#include <cstdio>
#include <exception>
#include <vector>

#include <cuda_runtime_api.h>

#include "kernels/attention.hpp"
#include "kernels/calibration.hpp"
#include "lib/gpu/cuda_check.hpp"
#include "lib/gpu/device_memory.hpp"

namespace {

using roofline::gpu::DeviceBuffer;
using roofline::gpu::Event;
using roofline::gpu::Stream;
using roofline::kernels::MicroKernel;

constexpr int kTimed = 20;
constexpr std::size_t kMaxBytes = std::size_t{2} << 30;
constexpr std::size_t kSizesMb[] = {16, 33, 67, 134, 268, 537, 1074, 2147};

int run() {
  int device = 0, sms = 0, l2 = 0, per_sm = 0;
  ROOFLINE_CUDA_CALL(cudaGetDevice(&device));
  ROOFLINE_CUDA_CALL(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  ROOFLINE_CUDA_CALL(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, device));
  ROOFLINE_CUDA_CALL(
      roofline::kernels::micro_kernel_blocks_per_sm(MicroKernel::kDramReadBulk, &per_sm));
  if (per_sm <= 0) {
    std::fprintf(stderr, "stream_sizes: this GPU has no bulk-copy code (sm_90a or later)\n");
    return 1;
  }
  DeviceBuffer buffer(kMaxBytes);
  DeviceBuffer flush(std::max<std::size_t>(2 * static_cast<std::size_t>(l2), 64 << 20));
  DeviceBuffer clock(2 * sizeof(unsigned long long));
  ROOFLINE_CUDA_CALL(cudaMemset(buffer.get(), 1, buffer.bytes()));
  ROOFLINE_CUDA_CALL(cudaMemset(flush.get(), 2, flush.bytes()));
  Stream stream;
  Event start, end;
  roofline::kernels::MicroKernelArgs args;
  args.blocks = per_sm * sms;
  args.iterations = 1;
  args.src = buffer.get();
  args.clock = clock.as<unsigned long long>();
  for (const std::size_t mb : kSizesMb) {
    args.bytes = std::min(kMaxBytes, mb * 1000 * 1000);
    std::vector<double> seconds;
    for (int rep = 0; rep <= kTimed; ++rep) {
      ROOFLINE_CUDA_CALL(roofline::kernels::flush_l2(flush.get(), flush.bytes(), stream.get()));
      ROOFLINE_CUDA_CALL(cudaEventRecord(start.get(), stream.get()));
      ROOFLINE_CUDA_CALL(
          roofline::kernels::launch_micro_kernel(MicroKernel::kDramReadBulk, args, stream.get()));
      ROOFLINE_CUDA_CALL(cudaEventRecord(end.get(), stream.get()));
      const double s = roofline::gpu::elapsed_seconds(start, end);
      if (rep > 0) seconds.push_back(s);
    }
    std::sort(seconds.begin(), seconds.end());
    const double us = seconds[seconds.size() / 2] * 1e6;
    const double bytes = roofline::kernels::micro_kernel_work(MicroKernel::kDramReadBulk, args);
    std::printf("stream %.0f %.2f %.1f\n", bytes, us, bytes / us / 1e3);
  }
  std::printf("status OK\n");
  return 0;
}

}  // namespace

int main() {
  try {
    return run();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "stream_sizes: %s\n", e.what());
    return 1;
  }
}
