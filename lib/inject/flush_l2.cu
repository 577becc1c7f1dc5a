// The L2 flush that `profile --cache cold` runs before each profiled launch, compiled to PTX
// and loaded by the injection library through the driver API into the program's context.
// It only reads: a read-modify-write flush leaves L2 full of dirty lines whose write-backs
// land in the next kernel's DRAM counters. The sum is stored only when it equals `never`,
// which the caller makes impossible (the buffer holds zeros, `never` is 1): the compiler must
// keep the loads, and nothing is written.
extern "C" __global__ void cuflash_roofline_flush_l2(const unsigned* buffer,
                                                     unsigned long long words, unsigned never,
                                                     unsigned* sink) {
  unsigned sum = 0;
  for (unsigned long long i =
           blockIdx.x * static_cast<unsigned long long>(blockDim.x) + threadIdx.x;
       i < words; i += static_cast<unsigned long long>(gridDim.x) * blockDim.x)
    sum += __ldcg(buffer + i);  // cache in L2 only: displaces the program's lines
  if (sum == never) *sink = sum;
}
