// The L2 flush that `profile --cache cold` runs before each profiled launch, compiled to PTX
// and loaded by the injection library through the driver API into the program's context.
// It only reads: a read-modify-write flush leaves L2 full of dirty lines whose write-backs
// land in the next kernel's DRAM counters. The sum is stored only when it equals `never`,
// which the caller makes impossible (the buffer holds zeros, `never` is 1): the compiler must
// keep the loads, and nothing is written.
//
// 16-byte loads, for more bytes in flight: with 4-byte ones, flushing the H200's 2 x 50 MB took
// 0.15 ms a launch (launch and synchronisation included; 0.20 s of a 1,314-launch profile).
extern "C" __global__ void cuflash_roofline_flush_l2(const uint4* buffer,
                                                     unsigned long long vectors, unsigned never,
                                                     unsigned* sink) {
  unsigned sum = 0;
  for (unsigned long long i =
           blockIdx.x * static_cast<unsigned long long>(blockDim.x) + threadIdx.x;
       i < vectors; i += static_cast<unsigned long long>(gridDim.x) * blockDim.x) {
    const uint4 v = __ldcg(buffer + i);  // cache in L2 only: displaces the program's lines
    sum += v.x + v.y + v.z + v.w;
  }
  if (sum == never) *sink = sum;
}
