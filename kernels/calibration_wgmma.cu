// The wgmma micro-kernel for `calibrate` (see calibration.hpp): the Hopper tensor-core peak.
//
// wgmma.mma_async (a warpgroup of 128 threads issues one 64×256×16 FP16 MMA with FP32
// accumulators, both operands read from shared memory through matrix descriptors) exists only
// in the sm_90a feature set, so this file is built for sm_90a alone (its own CMake target); in
// any other build the kernel body is empty and the host side reports it unavailable.
// Each warpgroup keeps one 64×256 accumulator (128 registers per thread) and issues
// kWgmmaPerTrip MMAs into it per commit group, then waits: the operands never change, so the
// tensor pipe, not memory, sets the rate. The shared operands hold small values that are not
// zero, so the pipe does real work.
#include <cstdint>

#include "kernels/calibration.hpp"
#include "kernels/common.cuh"

namespace roofline::kernels {
namespace {

constexpr int kWarpgroups = 2;  // per block: one block per SM, two warpgroups in flight
constexpr int kThreads = 128 * kWarpgroups;
constexpr int kWgmmaPerTrip = 16;
constexpr double kWgmmaFlops = 2.0 * 64 * 256 * 16;
// A: 64×16 FP16 (2 KiB), B: 256×16 FP16 (8 KiB), per warpgroup.
constexpr int kABytes = 64 * 16 * 2;
constexpr int kBBytes = 256 * 16 * 2;
constexpr int kSharedBytes = kWarpgroups * (kABytes + kBBytes);

#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define ROOFLINE_HAS_WGMMA 1
#endif

#ifdef ROOFLINE_HAS_WGMMA
// Shared-memory matrix descriptor, no swizzle: start address, leading-dimension byte offset
// (between core matrices along K) and stride byte offset (between 8-row groups), all in units
// of 16 bytes. A core matrix is 8 rows × 16 bytes, stored contiguously (128 bytes).
__device__ __forceinline__ std::uint64_t matrix_descriptor(std::uint32_t address) {
  constexpr std::uint64_t kLeadingBytes = 128;  // the second 8-element K half of each row group
  constexpr std::uint64_t kStrideBytes = 256;   // the next 8-row group
  return (static_cast<std::uint64_t>(address & 0x3FFFF) >> 4) | ((kLeadingBytes >> 4) << 16) |
         ((kStrideBytes >> 4) << 32);
}

__device__ __forceinline__ void wgmma_m64n256k16(float (&d)[128], std::uint64_t a,
                                                 std::uint64_t b) {
  asm volatile(
      "{\n"
      ".reg .pred accumulate;\n"
      "setp.ne.b32 accumulate, %130, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16 {"
      "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
      "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, "
      "%30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, "
      "%44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, "
      "%58, %59, %60, %61, %62, %63, %64, %65, %66, %67, %68, %69, %70, %71, "
      "%72, %73, %74, %75, %76, %77, %78, %79, %80, %81, %82, %83, %84, %85, "
      "%86, %87, %88, %89, %90, %91, %92, %93, %94, %95, %96, %97, %98, %99, "
      "%100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, "
      "%111, %112, %113, %114, %115, %116, %117, %118, %119, %120, %121, "
      "%122, %123, %124, %125, %126, %127"
      "}, %128, %129, accumulate, 1, 1, 0, 0;\n"
      "}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]),
        "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]),
        "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]),
        "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]),
        "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]),
        "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]),
        "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]),
        "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
        "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]),
        "+f"(d[63]), "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]),
        "+f"(d[70]), "+f"(d[71]), "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]),
        "+f"(d[77]), "+f"(d[78]), "+f"(d[79]), "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]),
        "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]), "+f"(d[88]), "+f"(d[89]), "+f"(d[90]),
        "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]), "+f"(d[96]), "+f"(d[97]),
        "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]),
        "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]),
        "+f"(d[110]), "+f"(d[111]), "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]),
        "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]), "+f"(d[120]), "+f"(d[121]),
        "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127])
      : "l"(a), "l"(b), "r"(1));
}
#endif

__global__ void __launch_bounds__(kThreads, 1)
    wgmma_kernel(long long trips, unsigned long long* clock, unsigned int* sink) {
#ifdef ROOFLINE_HAS_WGMMA
  extern __shared__ __align__(128) unsigned char shared[];
  for (int i = threadIdx.x; i < kSharedBytes / 2; i += blockDim.x)
    reinterpret_cast<__half*>(shared)[i] = __float2half_rn(0.01f * static_cast<float>(i % 17));
  // Generic-proxy stores must be visible to the async proxy that wgmma reads through.
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
  __syncthreads();

  unsigned long long cycles0 = 0, ns0 = 0;
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(ns0));
    cycles0 = clock64();
  }
  const int group = threadIdx.x / 128;
  const std::uint32_t base =
      static_cast<std::uint32_t>(__cvta_generic_to_shared(shared)) + group * (kABytes + kBBytes);
  const std::uint64_t a = matrix_descriptor(base);
  const std::uint64_t b = matrix_descriptor(base + kABytes);
  float d[128];
#pragma unroll
  for (int i = 0; i < 128; ++i) d[i] = 0.f;
  for (long long trip = 0; trip < trips; ++trip) {
    asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#pragma unroll
    for (int k = 0; k < kWgmmaPerTrip; ++k) wgmma_m64n256k16(d, a, b);
    asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
    asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
  }
  if (clock != nullptr && blockIdx.x == 0 && threadIdx.x == 0) {
    const unsigned long long cycles = clock64() - cycles0;
    unsigned long long ns1;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(ns1));
    clock[0] = cycles;
    clock[1] = ns1 - ns0;
  }
  float sum = 0;
#pragma unroll
  for (int i = 0; i < 128; ++i) sum += d[i];
  if (sum == -1.2345f && sink != nullptr) *sink = __float_as_uint(sum);
#else
  (void)trips;
  (void)clock;
  (void)sink;
#endif
}

// Whether this build holds sm_90a code for the current device.
bool wgmma_available() {
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess) return false;
  int major = 0, minor = 0;
  if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) != cudaSuccess ||
      cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device) != cudaSuccess)
    return false;
  cudaFuncAttributes attributes{};
  return major == 9 && minor == 0 &&
         cudaFuncGetAttributes(&attributes, wgmma_kernel) == cudaSuccess;
}

}  // namespace

int wgmma_micro_kernel_threads() {
  return kThreads;
}

cudaError_t wgmma_micro_kernel_blocks_per_sm(int* blocks) {
  *blocks = 0;
  if (!wgmma_available()) {
    cudaGetLastError();  // a missing kernel image is an answer here, not an error
    return cudaSuccess;
  }
  ROOFLINE_RETURN_IF_ERROR(cudaFuncSetAttribute(
      wgmma_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kSharedBytes));
  return cudaOccupancyMaxActiveBlocksPerMultiprocessor(blocks, wgmma_kernel, kThreads,
                                                       kSharedBytes);
}

double wgmma_micro_kernel_flops(const MicroKernelArgs& args) {
  return static_cast<double>(args.blocks) * kWarpgroups * static_cast<double>(args.iterations) *
         kWgmmaPerTrip * kWgmmaFlops;
}

cudaError_t launch_wgmma_micro_kernel(const MicroKernelArgs& args, cudaStream_t stream) {
  if (!wgmma_available()) {
    cudaGetLastError();
    return cudaErrorNoKernelImageForDevice;
  }
  ROOFLINE_RETURN_IF_ERROR(cudaFuncSetAttribute(
      wgmma_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kSharedBytes));
  wgmma_kernel<<<args.blocks, kThreads, kSharedBytes, stream>>>(args.iterations, args.clock,
                                                                args.sink);
  ROOFLINE_RETURN_IF_LAUNCH_FAILED();
  return cudaSuccess;
}

}  // namespace roofline::kernels
