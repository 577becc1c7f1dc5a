#include "lib/inject/event_timer.hpp"

#include <stdexcept>

namespace roofline::inject {
namespace {

void check(const Driver& driver, const char* call, CUresult result) {
  if (result != CUDA_SUCCESS) throw std::runtime_error(driver.describe(call, result));
}

}  // namespace

EventTimer::EventTimer(const Driver& driver) : driver_(driver) {
  check(driver, "cuEventCreate", driver.event_create(&start_, CU_EVENT_DEFAULT));
  if (CUresult r = driver.event_create(&stop_, CU_EVENT_DEFAULT); r != CUDA_SUCCESS) {
    driver.event_destroy(start_);
    check(driver, "cuEventCreate", r);
  }
}

EventTimer::~EventTimer() {
  driver_.event_destroy(stop_);  // a failure leaves the events to the context's teardown
  driver_.event_destroy(start_);
}

void EventTimer::begin(CUstream stream) {
  check(driver_, "cuEventRecord", driver_.event_record(start_, stream));
}

double EventTimer::end(CUstream stream) {
  check(driver_, "cuEventRecord", driver_.event_record(stop_, stream));
  check(driver_, "cuEventSynchronize", driver_.event_synchronize(stop_));
  float milliseconds = 0;
  check(driver_, "cuEventElapsedTime", driver_.event_elapsed_time(&milliseconds, start_, stop_));
  return milliseconds * 1e-3;
}

}  // namespace roofline::inject
