// Micro-kernels for `calibrate` (see calibration.hpp): one roof each, exact work counts.
//
// Memory kernels stream 16-byte vectors with ld.global.cg (cached in L2 only) in a grid-stride
// loop, so the L1 never serves a repeat and the buffer size alone picks DRAM or L2. Compute
// kernels keep several independent dependency chains per thread (enough to hide the pipe's
// latency at full occupancy) on register operands, so nothing but the pipe limits them; the
// results feed a store that only happens when the value is impossible, which keeps the
// compiler from removing the work without adding memory traffic.
//
// Operands look like the data the bundled kernels read (FP16 values uniform in [-1, 1), as
// `run` fills its inputs), and change from one instruction to the next, because part of a
// pipe's or a bus's energy is the bits it toggles: the DRAM and L2 buffers are filled so by the
// runner, shared memory here, and each mma.sync chain has operands of its own. A constant
// pattern (the same bytes on every beat, the same fragments in every MMA) draws less power than
// the work it stands for, so `calibrate --energy` would price a FLOP or a byte too low.
#include <cstdint>

#include "kernels/calibration.hpp"
#include "kernels/clock_probe.cuh"
#include "kernels/common.cuh"

namespace roofline::kernels {
namespace {

constexpr int kMemoryThreads = 512;
constexpr int kComputeThreads = 256;
constexpr int kFmaChains = 8;           // independent FFMA/HFMA2 chains per thread
constexpr int kFmaUnroll = 16;          // FMAs per chain per loop trip
constexpr int kMmaChains = 4;           // independent accumulators per warp
constexpr int kMmaUnroll = 8;           // mma.sync per chain per loop trip
constexpr int kSharedBytes = 32768;     // shared buffer per block
constexpr int kSharedLoadsPerTrip = 8;  // 16-byte loads per thread per loop trip
constexpr double kMmaFlops = 2.0 * 16 * 8 * 16;
constexpr int kExpChains = 8;   // independent MUFU.EX2 chains per thread
constexpr int kExpUnroll = 16;  // exp2 per chain per loop trip
constexpr int kIntChains = 8;   // independent integer chains per thread
constexpr int kIntUnroll = 16;  // steps per chain per loop trip
constexpr int kIntPerStep = 2;  // a step: LOP3 (xor) then IADD3 (add)
constexpr int kChunkShift = kMicroKernelChunkShift;

__device__ __forceinline__ uint4 load_cg(const uint4* p) {
  uint4 v;
  asm volatile("ld.global.cg.v4.u32 {%0, %1, %2, %3}, [%4];"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "l"(p));
  return v;
}

// Element i of the working set lies in chunk i >> kChunkShift, which starts at element
// chunk << chunk_shift of the buffer (chunk_shift == kChunkShift: contiguous).
__device__ __forceinline__ std::size_t spread(std::size_t i, int chunk_shift) {
  return ((i >> kChunkShift) << chunk_shift) | (i & ((std::size_t{1} << kChunkShift) - 1));
}

// Two FP16 values uniform in [-1, 1) as one 32-bit word, a function of `key` alone.
__device__ __forceinline__ std::uint32_t random_half2_bits(std::uint64_t key) {
  const std::uint64_t bits = splitmix64(key);
  return pack_half2(signed_unit(bits), signed_unit(bits << 24));
}

// The same two values rounded to T (FP16 or BF16).
template <typename T>
__device__ __forceinline__ std::uint32_t random_pair_bits(std::uint64_t key) {
  const std::uint64_t bits = splitmix64(key);
  return pack2<T>(signed_unit(bits), signed_unit(bits << 24));
}

__global__ void __launch_bounds__(kMemoryThreads)
    stream_read_kernel(const uint4* src, std::size_t count, int chunk_shift, long long passes,
                       unsigned long long* clock, unsigned int* sink) {
  ClockProbe probe;
  probe.start();
  unsigned int acc = 0;
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (long long pass = 0; pass < passes; ++pass) {
    std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
    // Four loads in flight per thread before their results are used.
    for (; i + 3 * stride < count; i += 4 * stride) {
      const uint4 a = load_cg(src + spread(i, chunk_shift)),
                  b = load_cg(src + spread(i + stride, chunk_shift)),
                  c = load_cg(src + spread(i + 2 * stride, chunk_shift)),
                  d = load_cg(src + spread(i + 3 * stride, chunk_shift));
      acc ^= a.x ^ a.y ^ a.z ^ a.w ^ b.x ^ b.y ^ b.z ^ b.w ^ c.x ^ c.y ^ c.z ^ c.w ^ d.x ^ d.y ^
             d.z ^ d.w;
    }
    for (; i < count; i += stride) {
      const uint4 a = load_cg(src + spread(i, chunk_shift));
      acc ^= a.x ^ a.y ^ a.z ^ a.w;
    }
  }
  probe.stop(clock);
  if (acc == 0x9E3779B9u && sink != nullptr) *sink = acc;
}

__global__ void __launch_bounds__(kMemoryThreads)
    stream_copy_kernel(const uint4* src, uint4* dst, std::size_t count, long long passes,
                       unsigned long long* clock) {
  ClockProbe probe;
  probe.start();
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (long long pass = 0; pass < passes; ++pass) {
    std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
    for (; i + stride < count; i += 2 * stride) {
      const uint4 a = load_cg(src + i), b = load_cg(src + i + stride);
      dst[i] = a;
      dst[i + stride] = b;
    }
    for (; i < count; i += stride) dst[i] = load_cg(src + i);
  }
  probe.stop(clock);
}

// `passes` grid-stride walks over elements [0, count): body(i, pass) once per element and pass,
// between the clock probe's start and stop.
template <typename Body>
__device__ __forceinline__ void timed_passes(std::size_t count, long long passes,
                                             unsigned long long* clock, Body body) {
  ClockProbe probe;
  probe.start();
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (long long pass = 0; pass < passes; ++pass)
    for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < count;
         i += stride)
      body(i, static_cast<unsigned int>(pass));
  probe.stop(clock);
}

// Stores alone (no load, so the store path is measured by itself, on the whole GPU and on a
// share). What is stored is data like the bundled kernels' (FP16 uniform in [-1, 1), as the read
// streams' buffer holds): neighbouring 16-byte elements come from neighbouring threads, each with
// two random values of its own, one for even passes and one for odd, chosen once per pass. An
// earlier version stored element indices (high bits constant from one beat to the next) and
// measured 102 pJ a written byte on an H100 where its loads cost 138 and its copies as much as
// the loads: the bits a write toggles are part of its price. No instruction per element beyond
// the store and the walk.
__global__ void __launch_bounds__(kMemoryThreads)
    stream_write_kernel(uint4* dst, std::size_t count, long long passes,
                        unsigned long long* clock) {
  const std::uint64_t thread = blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x;
  uint4 values[2];
  for (int v = 0; v < 2; ++v) {
    const std::uint64_t key = (thread * 2 + v) * 4;
    values[v] = make_uint4(random_half2_bits(key), random_half2_bits(key + 1),
                           random_half2_bits(key + 2), random_half2_bits(key + 3));
  }
  timed_passes(count, passes, clock,
               [&](std::size_t i, unsigned int p) { dst[i] = (p & 1) ? values[1] : values[0]; });
}

// Reductions alone, as a backward kernel accumulates dQ in FP32 (flash-v2's): every 16-byte
// element of the working set (resident in L2) takes one reduction per pass, as two 8-byte float2
// reductions on sm_90 (RED.E.ADD.F32x2) and four 4-byte ones before. The L2 slice reads, adds
// and writes each sector: what an L2 byte costs when it is reduced rather than read. The
// addends change with the element and the pass (a mantissa from a multiplicative hash, in
// [0.5, 1)), for the bits they toggle.
__global__ void __launch_bounds__(kMemoryThreads)
    l2_reduce_kernel(uint4* dst, std::size_t count, int chunk_shift, long long passes,
                     unsigned long long* clock) {
  timed_passes(count, passes, clock, [&](std::size_t i, unsigned int p) {
    const unsigned int h = (static_cast<unsigned int>(i) ^ (p << 20)) * 2654435761u;
    const float a = __uint_as_float(0x3f000000u | (h >> 9)),
                b = __uint_as_float(0x3f000000u | (h & 0x7fffffu));
    float* e = reinterpret_cast<float*>(dst + spread(i, chunk_shift));
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    atomicAdd(reinterpret_cast<float2*>(e), make_float2(a, b));
    atomicAdd(reinterpret_cast<float2*>(e + 2), make_float2(b, a));
#else
    atomicAdd(e, a);
    atomicAdd(e + 1, b);
    atomicAdd(e + 2, b);
    atomicAdd(e + 3, a);
#endif
  });
}

// `step` (bytes per trip) and `mask` (buffer bytes - 1) are kernel arguments so that the
// compiler cannot see that every trip reads the same addresses and merge the loads.
__global__ void __launch_bounds__(kComputeThreads)
    shared_read_kernel(long long trips, std::uint32_t step, std::uint32_t mask,
                       unsigned long long* clock, unsigned int* sink) {
  __shared__ uint4 buffer[kSharedBytes / 16];
  for (int i = threadIdx.x; i < kSharedBytes / 16; i += blockDim.x)
    buffer[i] = make_uint4(random_half2_bits(4u * i), random_half2_bits(4u * i + 1),
                           random_half2_bits(4u * i + 2), random_half2_bits(4u * i + 3));
  __syncthreads();
  ClockProbe probe;
  probe.start();
  const std::uint32_t base = static_cast<std::uint32_t>(__cvta_generic_to_shared(buffer));
  // A warp reads 512 consecutive bytes per load: every bank once per 128-byte phase.
  std::uint32_t offset = threadIdx.x * 16u;
  unsigned int acc = 0;
  for (long long trip = 0; trip < trips; ++trip) {
#pragma unroll
    for (int k = 0; k < kSharedLoadsPerTrip; ++k) {
      unsigned int x, y, z, w;
      asm volatile("ld.shared.v4.u32 {%0, %1, %2, %3}, [%4];"
                   : "=r"(x), "=r"(y), "=r"(z), "=r"(w)
                   : "r"(base + ((offset + k * kComputeThreads * 16u) & mask)));
      acc ^= x ^ y ^ z ^ w;
    }
    offset += step;
  }
  probe.stop(clock);
  if (acc == 0x9E3779B9u && sink != nullptr) *sink = acc;
}

__global__ void __launch_bounds__(kComputeThreads)
    fp32_fma_kernel(long long trips, float seed, unsigned long long* clock, unsigned int* sink) {
  ClockProbe probe;
  probe.start();
  float x[kFmaChains];
#pragma unroll
  for (int c = 0; c < kFmaChains; ++c) x[c] = seed + static_cast<float>(threadIdx.x + c);
  // a = -1 at run time (seed = 1): x alternates between x0 and b - x0, so every result differs
  // from the one before in sign and mantissa (a chain that converged would repeat one value).
  const float a = -seed, b = 0.3183099f * seed;
  for (long long trip = 0; trip < trips; ++trip) {
#pragma unroll
    for (int u = 0; u < kFmaUnroll; ++u)
#pragma unroll
      for (int c = 0; c < kFmaChains; ++c) x[c] = fmaf(x[c], a, b);
  }
  probe.stop(clock);
  float sum = 0;
#pragma unroll
  for (int c = 0; c < kFmaChains; ++c) sum += x[c];
  if (sum == -1.2345f && sink != nullptr) *sink = __float_as_uint(sum);
}

__global__ void __launch_bounds__(kComputeThreads)
    fp16_fma_kernel(long long trips, float seed, unsigned long long* clock, unsigned int* sink) {
  ClockProbe probe;
  probe.start();
  __half2 x[kFmaChains];
#pragma unroll
  for (int c = 0; c < kFmaChains; ++c)
    x[c] = __floats2half2_rn(seed + 0.001f * static_cast<float>(threadIdx.x + c), seed);
  // a = -1 at run time: x alternates between x0 and b - x0 (see fp32_fma_kernel).
  const __half2 a = __floats2half2_rn(-seed, -seed);
  const __half2 b = __floats2half2_rn(0.3183099f * seed, 0.7071068f * seed);
  for (long long trip = 0; trip < trips; ++trip) {
#pragma unroll
    for (int u = 0; u < kFmaUnroll; ++u)
#pragma unroll
      for (int c = 0; c < kFmaChains; ++c) x[c] = __hfma2(x[c], a, b);
  }
  probe.stop(clock);
  float sum = 0;
#pragma unroll
  for (int c = 0; c < kFmaChains; ++c) sum += __low2float(x[c]) + __high2float(x[c]);
  if (sum == -1.2345f && sink != nullptr) *sink = __float_as_uint(sum);
}

// T: __half (f32.f16.f16.f32) or __nv_bfloat16 (f32.bf16.bf16.f32): the same pipe and shape,
// operands of the same values rounded to each type.
template <typename T>
__global__ void __launch_bounds__(kComputeThreads)
    mma_sync_kernel(long long trips, float seed, unsigned long long* clock, unsigned int* sink) {
  ClockProbe probe;
  probe.start();
  // Each chain's fragments drawn from (seed, thread, chain): values the compiler cannot know,
  // and different in consecutive MMAs (the chains issue in turn), as a real kernel's tiles are.
  std::uint32_t a[kMmaChains][4], b[kMmaChains][2];
  const std::uint64_t key = (static_cast<std::uint64_t>(__float_as_uint(seed)) << 32) ^
                            ((blockIdx.x * blockDim.x + threadIdx.x) * 64ull);
#pragma unroll
  for (int c = 0; c < kMmaChains; ++c) {
#pragma unroll
    for (int j = 0; j < 4; ++j) a[c][j] = random_pair_bits<T>(key + c * 8 + j);
#pragma unroll
    for (int j = 0; j < 2; ++j) b[c][j] = random_pair_bits<T>(key + c * 8 + 4 + j);
  }
  float d[kMmaChains][4];
#pragma unroll
  for (int c = 0; c < kMmaChains; ++c)
#pragma unroll
    for (int j = 0; j < 4; ++j) d[c][j] = 0.f;
  for (long long trip = 0; trip < trips; ++trip) {
#pragma unroll
    for (int u = 0; u < kMmaUnroll; ++u)
#pragma unroll
      for (int c = 0; c < kMmaChains; ++c)
        if constexpr (kIsBf16<T>)
          asm volatile(
              "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, "
              "{%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
              : "+f"(d[c][0]), "+f"(d[c][1]), "+f"(d[c][2]), "+f"(d[c][3])
              : "r"(a[c][0]), "r"(a[c][1]), "r"(a[c][2]), "r"(a[c][3]), "r"(b[c][0]), "r"(b[c][1]));
        else
          asm volatile(
              "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, "
              "{%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
              : "+f"(d[c][0]), "+f"(d[c][1]), "+f"(d[c][2]), "+f"(d[c][3])
              : "r"(a[c][0]), "r"(a[c][1]), "r"(a[c][2]), "r"(a[c][3]), "r"(b[c][0]), "r"(b[c][1]));
  }
  probe.stop(clock);
  float sum = 0;
#pragma unroll
  for (int c = 0; c < kMmaChains; ++c) sum += d[c][0] + d[c][1] + d[c][2] + d[c][3];
  if (sum == -1.2345f && sink != nullptr) *sink = __float_as_uint(sum);
}

// x ← 2^(−x) stays in [0.5, 1] and every step needs the previous one, so ptxas can neither
// fold nor hoist it; the chains start at different values (lane and chain), so no two chains
// compute the same thing and none can be merged. The negation is an operand modifier of
// MUFU.EX2, so the loop body is MUFU alone (plus the loop counter). .ftz: the instruction the
// flash kernels' softmax issues (kernels/mma.cuh).
__global__ void __launch_bounds__(kComputeThreads)
    exp2_kernel(long long trips, float seed, unsigned long long* clock, unsigned int* sink) {
  ClockProbe probe;
  probe.start();
  float x[kExpChains];
#pragma unroll
  for (int c = 0; c < kExpChains; ++c)
    x[c] = seed * (0.5f + 0.001f * static_cast<float>(threadIdx.x % 97) + 0.01f * c);
  for (long long trip = 0; trip < trips; ++trip) {
#pragma unroll
    for (int u = 0; u < kExpUnroll; ++u)
#pragma unroll
      for (int c = 0; c < kExpChains; ++c)
        asm volatile("ex2.approx.ftz.f32 %0, %1;" : "=f"(x[c]) : "f"(-x[c]));
  }
  probe.stop(clock);
  float sum = 0;
#pragma unroll
  for (int c = 0; c < kExpChains; ++c) sum += x[c];
  if (sum == -1.2345f && sink != nullptr) *sink = __float_as_uint(sum);
}

// The integer instructions that are neither FLOPs nor bytes (address arithmetic, indices,
// masks, loop counters: what the energy model prices per instruction, energy_model.hpp): each
// step of a chain is x ← (x ⊕ m) + k, an xor (LOP3) and an add (IADD3, or IMAD.IADD where
// ptxas balances the pipes), with m and k different in every lane and chain, so each result
// differs from the one before in about half its bits, and neither can fold into the other. The
// loop's own counter and branch are not counted: CUDA 13.0's SASS for sm_90 has 128 LOP3 and 128
// IMAD.IADD per trip and 7 more (uniform datapath, compare, branch). An H200 ran them at 123
// thread instructions per clock and SM, of the 128 the ALU's and the FMA pipe's lanes allow.
__global__ void __launch_bounds__(kComputeThreads)
    int_alu_kernel(long long trips, unsigned int seed, unsigned long long* clock,
                   unsigned int* sink) {
  ClockProbe probe;
  probe.start();
  unsigned int x[kIntChains], m[kIntChains], k[kIntChains];
#pragma unroll
  for (int c = 0; c < kIntChains; ++c) {
    const std::uint64_t bits = splitmix64((std::uint64_t{threadIdx.x} << 8 | c) ^ seed);
    x[c] = static_cast<unsigned int>(bits);
    m[c] = static_cast<unsigned int>(bits >> 32) | 1u;
    k[c] = static_cast<unsigned int>(bits >> 16) | 0x10001u;
  }
  for (long long trip = 0; trip < trips; ++trip) {
#pragma unroll
    for (int u = 0; u < kIntUnroll; ++u)
#pragma unroll
      for (int c = 0; c < kIntChains; ++c) x[c] = (x[c] ^ m[c]) + k[c];
  }
  probe.stop(clock);
  unsigned int acc = 0;
#pragma unroll
  for (int c = 0; c < kIntChains; ++c) acc ^= x[c];
  if (acc == 0x9E3779B9u && sink != nullptr) *sink = acc;
}

constexpr float kSeed = 1.0f;
constexpr unsigned int kIntSeed = 0x5EEDu;

template <typename Kernel>
cudaError_t blocks_per_sm(Kernel kernel, int threads, int* blocks) {
  return cudaOccupancyMaxActiveBlocksPerMultiprocessor(blocks, kernel, threads, 0);
}

}  // namespace

int micro_kernel_threads(MicroKernel kernel) {
  switch (kernel) {
    case MicroKernel::kDramRead:
    case MicroKernel::kDramCopy:
    case MicroKernel::kDramWrite:
    case MicroKernel::kL2Read:
    case MicroKernel::kL2Reduce:
      return kMemoryThreads;
    case MicroKernel::kWgmma:
      return wgmma_micro_kernel_threads();
    case MicroKernel::kDramReadBulk:
      return bulk_read_micro_kernel_threads();
    default:
      return kComputeThreads;
  }
}

cudaError_t micro_kernel_blocks_per_sm(MicroKernel kernel, int* blocks) {
  const int threads = micro_kernel_threads(kernel);
  switch (kernel) {
    case MicroKernel::kDramRead:
    case MicroKernel::kL2Read:
      return blocks_per_sm(stream_read_kernel, threads, blocks);
    case MicroKernel::kDramCopy:
      return blocks_per_sm(stream_copy_kernel, threads, blocks);
    case MicroKernel::kDramWrite:
      return blocks_per_sm(stream_write_kernel, threads, blocks);
    case MicroKernel::kL2Reduce:
      return blocks_per_sm(l2_reduce_kernel, threads, blocks);
    case MicroKernel::kSharedRead:
      return blocks_per_sm(shared_read_kernel, threads, blocks);
    case MicroKernel::kFp32Fma:
      return blocks_per_sm(fp32_fma_kernel, threads, blocks);
    case MicroKernel::kFp16Fma:
      return blocks_per_sm(fp16_fma_kernel, threads, blocks);
    case MicroKernel::kMmaSync:
      return blocks_per_sm(mma_sync_kernel<__half>, threads, blocks);
    case MicroKernel::kMmaSyncBf16:
      return blocks_per_sm(mma_sync_kernel<__nv_bfloat16>, threads, blocks);
    case MicroKernel::kWgmma:
      return wgmma_micro_kernel_blocks_per_sm(blocks);
    case MicroKernel::kDramReadBulk:
      return bulk_read_micro_kernel_blocks_per_sm(blocks);
    case MicroKernel::kExp2:
      return blocks_per_sm(exp2_kernel, threads, blocks);
    case MicroKernel::kIntAlu:
      return blocks_per_sm(int_alu_kernel, threads, blocks);
  }
  return cudaErrorInvalidValue;
}

double micro_kernel_work(MicroKernel kernel, const MicroKernelArgs& args) {
  const double threads = static_cast<double>(args.blocks) * micro_kernel_threads(kernel);
  const double trips = static_cast<double>(args.iterations);
  const double bytes = static_cast<double>(args.bytes / 16 * 16);
  switch (kernel) {
    case MicroKernel::kDramRead:
    case MicroKernel::kL2Read:
      return bytes * trips;
    case MicroKernel::kDramCopy:
      return 2 * bytes * trips;
    case MicroKernel::kDramWrite:
    case MicroKernel::kL2Reduce:
      return bytes * trips;
    case MicroKernel::kSharedRead:
      return threads * trips * kSharedLoadsPerTrip * 16;
    case MicroKernel::kFp32Fma:
      return threads * trips * kFmaUnroll * kFmaChains * 2;
    case MicroKernel::kFp16Fma:
      return threads * trips * kFmaUnroll * kFmaChains * 4;
    case MicroKernel::kMmaSync:
    case MicroKernel::kMmaSyncBf16:
      return threads / 32 * trips * kMmaUnroll * kMmaChains * kMmaFlops;
    case MicroKernel::kWgmma:
      return wgmma_micro_kernel_flops(args);
    case MicroKernel::kDramReadBulk:
      return bulk_read_micro_kernel_bytes(args);
    case MicroKernel::kExp2:
      return threads * trips * kExpUnroll * kExpChains;
    case MicroKernel::kIntAlu:
      return threads * trips * kIntUnroll * kIntChains * kIntPerStep;
  }
  return 0;
}

cudaError_t launch_micro_kernel(MicroKernel kernel, const MicroKernelArgs& args,
                                cudaStream_t stream) {
  if (args.blocks <= 0 || args.iterations <= 0) return cudaErrorInvalidValue;
  const int threads = micro_kernel_threads(kernel);
  const auto* src = static_cast<const uint4*>(args.src);
  const std::size_t count = args.bytes / 16;
  switch (kernel) {
    case MicroKernel::kDramRead:
    case MicroKernel::kL2Read:
      if (src == nullptr || count == 0) return cudaErrorInvalidValue;
      if (args.chunk_shift < kChunkShift) return cudaErrorInvalidValue;
      stream_read_kernel<<<args.blocks, threads, 0, stream>>>(
          src, count, args.chunk_shift, args.iterations, args.clock, args.sink);
      break;
    case MicroKernel::kDramCopy:
      if (src == nullptr || args.dst == nullptr || count == 0) return cudaErrorInvalidValue;
      stream_copy_kernel<<<args.blocks, threads, 0, stream>>>(src, static_cast<uint4*>(args.dst),
                                                              count, args.iterations, args.clock);
      break;
    case MicroKernel::kDramWrite:
      if (args.dst == nullptr || count == 0) return cudaErrorInvalidValue;
      stream_write_kernel<<<args.blocks, threads, 0, stream>>>(static_cast<uint4*>(args.dst), count,
                                                               args.iterations, args.clock);
      break;
    case MicroKernel::kL2Reduce:
      if (args.dst == nullptr || count == 0) return cudaErrorInvalidValue;
      if (args.chunk_shift < kChunkShift) return cudaErrorInvalidValue;
      l2_reduce_kernel<<<args.blocks, threads, 0, stream>>>(
          static_cast<uint4*>(args.dst), count, args.chunk_shift, args.iterations, args.clock);
      break;
    case MicroKernel::kSharedRead:
      shared_read_kernel<<<args.blocks, threads, 0, stream>>>(
          args.iterations, 16u * kComputeThreads * kSharedLoadsPerTrip, kSharedBytes - 1u,
          args.clock, args.sink);
      break;
    case MicroKernel::kFp32Fma:
      fp32_fma_kernel<<<args.blocks, threads, 0, stream>>>(args.iterations, kSeed, args.clock,
                                                           args.sink);
      break;
    case MicroKernel::kFp16Fma:
      fp16_fma_kernel<<<args.blocks, threads, 0, stream>>>(args.iterations, kSeed, args.clock,
                                                           args.sink);
      break;
    case MicroKernel::kMmaSync:
      mma_sync_kernel<__half>
          <<<args.blocks, threads, 0, stream>>>(args.iterations, kSeed, args.clock, args.sink);
      break;
    case MicroKernel::kMmaSyncBf16:
      mma_sync_kernel<__nv_bfloat16>
          <<<args.blocks, threads, 0, stream>>>(args.iterations, kSeed, args.clock, args.sink);
      break;
    case MicroKernel::kWgmma:
      return launch_wgmma_micro_kernel(args, stream);
    case MicroKernel::kDramReadBulk:
      return launch_bulk_read_micro_kernel(args, stream);
    case MicroKernel::kExp2:
      exp2_kernel<<<args.blocks, threads, 0, stream>>>(args.iterations, kSeed, args.clock,
                                                       args.sink);
      break;
    case MicroKernel::kIntAlu:
      int_alu_kernel<<<args.blocks, threads, 0, stream>>>(args.iterations, kIntSeed, args.clock,
                                                          args.sink);
      break;
  }
  ROOFLINE_RETURN_IF_LAUNCH_FAILED();
  return cudaSuccess;
}

}  // namespace roofline::kernels
