#include "lib/inject/host_gated.hpp"

#include <algorithm>

#include "lib/inject/driver.hpp"

namespace roofline::inject {

bool HostGates::close_behind(CUstream stream) {
  CUevent event = nullptr;
  if (driver_.event_create(&event, CU_EVENT_DISABLE_TIMING) != CUDA_SUCCESS) return false;
  if (driver_.event_record(event, stream) != CUDA_SUCCESS) {
    driver_.event_destroy(event);
    return false;
  }
  pending_.push_back(event);
  return true;
}

bool HostGates::any_closed() {
  // An event whose query is anything but "not ready" (done, or an error that no wait would
  // clear) no longer holds the gate.
  const auto done = std::remove_if(pending_.begin(), pending_.end(), [&](CUevent event) {
    if (driver_.event_query(event) == CUDA_ERROR_NOT_READY) return false;
    driver_.event_destroy(event);
    return true;
  });
  pending_.erase(done, pending_.end());
  return !pending_.empty();
}

}  // namespace roofline::inject
