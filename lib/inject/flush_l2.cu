// The L2 flush that `profile --cache cold` runs before each profiled launch, compiled to PTX
// and loaded by the injection library through the driver API into the program's context.
// It only reads: a read-modify-write flush leaves L2 full of dirty lines whose write-backs
// land in the next kernel's DRAM counters. The sum is stored only when it equals `never`,
// which the caller makes impossible (the buffer holds zeros, `never` is 1): the compiler must
// keep the loads, and nothing is written.
//
// 16-byte loads, four in flight per thread, 2,048 threads per SM: enough bytes in flight for the
// HBM's bandwidth. With one 4-byte load per iteration, flushing the H200's 2 x 50 MB took
// 0.15 ms a launch (launch and synchronisation included; 0.20 s of a 1,314-launch profile),
// with one 16-byte load 0.09 ms.
extern "C" __global__ void cuflash_roofline_flush_l2(const uint4* buffer,
                                                     unsigned long long vectors, unsigned never,
                                                     unsigned* sink) {
  constexpr unsigned kInFlight = 4;
  const unsigned long long threads = static_cast<unsigned long long>(gridDim.x) * blockDim.x;
  unsigned sum = 0;
  unsigned long long i = blockIdx.x * static_cast<unsigned long long>(blockDim.x) + threadIdx.x;
  for (; i + (kInFlight - 1) * threads < vectors; i += kInFlight * threads) {
    uint4 v[kInFlight];
#pragma unroll
    for (unsigned k = 0; k < kInFlight; ++k)
      v[k] = __ldcg(buffer + i + k * threads);  // cache in L2 only: displaces the program's lines
#pragma unroll
    for (unsigned k = 0; k < kInFlight; ++k) sum += v[k].x + v[k].y + v[k].z + v[k].w;
  }
  for (; i < vectors; i += threads) {
    const uint4 v = __ldcg(buffer + i);
    sum += v.x + v.y + v.z + v.w;
  }
  if (sum == never) *sink = sum;
}
