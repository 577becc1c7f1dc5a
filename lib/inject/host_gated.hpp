// Kernels that spin until the host releases them: XLA's autotuner launches DelayKernel ahead of
// the kernels it times and sets a host-mapped flag once they are queued, so that their start
// waits for none of the launch overhead. `profile` waits for every launch it measures (its range,
// or its events) before the program goes on, and a kernel waiting for its own program's host
// thread would then spin until its timeout (XLA: "Delay kernel timed out", 100 ms each, 47 s of
// a 15 s JAX program on an H100 on 2026-12-06), and the autotuner would time the wrong thing and
// may choose other kernels. Such a launch is left to run as it would alone: its row says so, with
// no time.
#pragma once

#include <string_view>

namespace roofline::inject {

// Why a launch of the kernel with this demangled name must not be waited for; empty for the
// kernels `profile` measures.
inline std::string_view host_gated_reason(std::string_view demangled) {
  // stream_executor::gpu::(anonymous namespace)::DelayKernel(...), as XLA names it.
  if (demangled.find("stream_executor::gpu::") != std::string_view::npos &&
      demangled.find("DelayKernel") != std::string_view::npos)
    return "not measured: XLA's DelayKernel spins until its program's host thread releases it "
           "(the autotuner queues the kernels it times behind it); waiting for it would hold "
           "that thread until the kernel timed out, so it runs as it would alone";
  return {};
}

}  // namespace roofline::inject
