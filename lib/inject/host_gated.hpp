// Kernels that spin until the host releases them: XLA's autotuner launches DelayKernel ahead of
// the kernels it times and sets a host-mapped flag once they are queued, so that their start
// waits for none of the launch overhead. `profile` waits for every launch it measures (its range,
// or its events) before the program goes on, and a kernel waiting for its own program's host
// thread would then spin until its timeout (XLA: "Delay kernel timed out", 100 ms each, 47 s of
// a 15 s JAX program on an H100 on 2026-12-06), and the autotuner would time the wrong thing and
// may choose other kernels. Such a launch is left to run as it would alone: its row says so, with
// no time. So is every launch made while one of them has not finished (on an H200 on 2026-12-06
// leaving DelayKernel alone was not enough: measuring the kernels queued behind it waited for it
// just the same): HostGates knows that without waiting, from an event recorded behind each.
// And a launch left unmeasured never excludes another thread's: inside the driver it may wait
// for the GPU (a lazily loaded kernel may synchronise the context, the CUDA guide's lazy-loading
// hazards), and so for a DelayKernel whose host thread is about to launch (XLA autotunes on
// several threads; with one exclusive lock per launch 5 of 466 still timed out on the H200).
#pragma once

#include <cuda.h>

#include <string_view>
#include <vector>

namespace roofline::inject {

struct Driver;

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

// The row message of a launch made while a host-gated kernel had not finished.
inline constexpr std::string_view kBehindHostGated =
    "not measured: launched while XLA's DelayKernel waited for its program's host thread "
    "(the autotuner times the kernels queued behind it); measuring it would wait for that "
    "kernel, which the host releases only after this launch returns, so it runs as it would "
    "alone";

// The host-gated kernels launched and not yet finished, each known by an event recorded on its
// stream right after it (cuEventQuery: no wait). Not thread-safe: the injection calls it under
// its state mutex.
class HostGates {
 public:
  explicit HostGates(const Driver& driver) : driver_(driver) {}
  HostGates(const HostGates&) = delete;
  HostGates& operator=(const HostGates&) = delete;
  // The events of unfinished kernels are left to the driver at exit (the context may be gone).
  ~HostGates() = default;

  // Records the event behind a host-gated kernel just launched on `stream`. Returns false when
  // the driver refuses (the gate is then not known: later launches are measured as before).
  bool close_behind(CUstream stream);
  // True while a host-gated kernel launched earlier has not finished; destroys the events of
  // those that have.
  bool any_closed();

 private:
  const Driver& driver_;
  std::vector<CUevent> pending_;
};

}  // namespace roofline::inject
