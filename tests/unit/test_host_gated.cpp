// Kernels that spin until their program's host thread releases them are left unmeasured by
// `profile` (lib/inject/host_gated.hpp): which names those are, and how it knows, without
// waiting, that one has finished.
#include <doctest/doctest.h>

#include <cstdint>
#include <vector>

#include "lib/inject/driver.hpp"
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

namespace {

// A driver whose events finish when the test says: event i is the i-th created, `done[i]`
// says whether its query returns success; each destroyed event is counted.
struct FakeEvents {
  static inline std::vector<bool> done;
  static inline int created = 0;
  static inline int destroyed = 0;
  static inline bool refuse_record = false;
  static CUresult create(CUevent* event, unsigned) {
    *event = reinterpret_cast<CUevent>(static_cast<std::uintptr_t>(++created));
    done.push_back(false);
    return CUDA_SUCCESS;
  }
  static CUresult record(CUevent, CUstream) {
    return refuse_record ? CUDA_ERROR_INVALID_HANDLE : CUDA_SUCCESS;
  }
  static CUresult query(CUevent event) {
    return done[reinterpret_cast<std::uintptr_t>(event) - 1] ? CUDA_SUCCESS : CUDA_ERROR_NOT_READY;
  }
  static CUresult destroy(CUevent) {
    ++destroyed;
    return CUDA_SUCCESS;
  }
};

roofline::inject::Driver fake_driver() {
  roofline::inject::Driver d;
  d.event_create = FakeEvents::create;
  d.event_record = FakeEvents::record;
  d.event_query = FakeEvents::query;
  d.event_destroy = FakeEvents::destroy;
  return d;
}

}  // namespace

TEST_CASE(
    "profile measures nothing while a host-gated kernel has not finished, and waits for none") {
  FakeEvents::done.clear();
  FakeEvents::created = FakeEvents::destroyed = 0;
  FakeEvents::refuse_record = false;
  const roofline::inject::Driver driver = fake_driver();
  roofline::inject::HostGates gates(driver);
  CHECK_FALSE(gates.any_closed());  // nothing launched: every launch is measured
  REQUIRE(gates.close_behind(nullptr));
  REQUIRE(gates.close_behind(nullptr));
  CHECK(gates.any_closed());  // neither has run
  FakeEvents::done[0] = true;
  CHECK(gates.any_closed());  // the second still spins
  CHECK(FakeEvents::destroyed == 1);
  FakeEvents::done[1] = true;
  CHECK_FALSE(gates.any_closed());
  CHECK(FakeEvents::destroyed == 2);
  // An event the driver will not record holds no gate (and is not leaked).
  FakeEvents::refuse_record = true;
  CHECK_FALSE(gates.close_behind(nullptr));
  CHECK(FakeEvents::destroyed == 3);
  CHECK_FALSE(gates.any_closed());
}
