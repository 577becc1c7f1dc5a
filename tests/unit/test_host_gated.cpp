// Kernels that spin until their program's host thread releases them are left unmeasured by
// `profile` (lib/inject/host_gated.hpp): which names those are.
#include <doctest/doctest.h>

#include "lib/inject/host_gated.hpp"

using roofline::inject::host_gated_reason;

TEST_CASE("profile leaves XLA's DelayKernel unmeasured, and measures every other kernel") {
  CHECK_FALSE(
      host_gated_reason(
          "stream_executor::gpu::(anonymous namespace)::DelayKernel(volatile "
          "stream_executor::gpu::GpuSemaphoreState*, stream_executor::gpu::GpuSemaphoreState)")
          .empty());
  CHECK(host_gated_reason("stream_executor::gpu::(anonymous namespace)::DelayKernel")
            .find("XLA's DelayKernel") != std::string_view::npos);
  // Other kernels of the same library, and kernels that only share the word, are measured.
  CHECK(host_gated_reason("stream_executor::gpu::xla_fp_comparison<__half>(__half*, __half*, "
                          "float, unsigned long long, int*)")
            .empty());
  CHECK(host_gated_reason("my::DelayKernel(int)").empty());
  CHECK(host_gated_reason("void at::native::vectorized_elementwise_kernel<4>").empty());
  CHECK(host_gated_reason("").empty());
}
