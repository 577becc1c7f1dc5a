#include "lib/inject/counter_handover.hpp"

#include <chrono>
#include <stdexcept>
#include <thread>
#include <utility>
#include <vector>

#include "lib/core/domain/metric_catalog.hpp"
#include "lib/inject/launch_site.hpp"

namespace roofline::inject {
namespace {

// How long a launch waits for another process of the run to hand the counters over before it
// is timed without them. A holder hands over after its current launch, so the wait is about
// one launch; a kernel that waits for a kernel of the waiting process (a collective between
// two processes on one GPU) would otherwise never end.
constexpr std::chrono::milliseconds kLeaseWait{10000};
// How often an idle holder looks for processes waiting for its counters.
constexpr std::chrono::milliseconds kWatchPeriod{5};
// A process that takes the lease just as the last holder exits may find the counters still
// busy for a moment: it tries this often, 100 ms apart, before it concludes that a profiler
// outside the run holds them.
constexpr int kBusyAttempts = 20;

}  // namespace

CounterHandover::CounterHandover(const Driver& driver, Recorder& recorder, BatchRecorder& batches,
                                 CounterSet set, CacheControl cache, std::string run_dir,
                                 std::shared_mutex& launch_mutex)
    : driver_(driver),
      recorder_(recorder),
      batches_(batches),
      set_(set),
      cache_(cache),
      run_dir_(std::move(run_dir)),
      launch_mutex_(launch_mutex) {}

std::unique_lock<std::mutex> CounterHandover::lock() {
  return std::unique_lock<std::mutex>(mutex_);
}

Session* CounterHandover::session() {
  return session_.get();
}

Session& CounterHandover::session_for(CUcontext context) {
  if (session_ != nullptr && session_->context == context) return *session_;
  close_session();
  auto session = std::make_unique<Session>();
  session->context = context;
  if (CUresult r = driver_.ctx_get_device(&session->device); r != CUDA_SUCCESS)
    throw std::runtime_error(driver_.describe("cuCtxGetDevice", r));
  session->chip = gpu::chip_name_of_loaded_device(static_cast<int>(session->device));
  session->catalogued = has_catalogue(session->chip);
  // A chip without a catalogue still gets the kernel time, the one metric every chip names.
  session->metrics = session->catalogued ? catalogue_metrics(session->chip, set_)
                                         : std::vector<std::string>{"gpu__time_duration.sum"};
  // The lease names the device as every process sees it, whatever CUDA_VISIBLE_DEVICES says.
  char bus_id[64] = {};
  if (CUresult r = driver_.device_get_pci_bus_id(bus_id, sizeof bus_id, session->device);
      r != CUDA_SUCCESS)
    throw std::runtime_error(driver_.describe("cuDeviceGetPCIBusId", r));
  session->lease = std::make_unique<CounterLease>(run_dir_, CounterLease::key_of(bus_id));
  if (cache_ == CacheControl::kCold)
    session->flush = std::make_unique<CacheFlush>(driver_, session->device);
  session_ = std::move(session);
  return *session_;
}

bool CounterHandover::take_counters(Session& session, std::string* why) {
  if (!session.no_counters.empty()) {
    *why = session.no_counters;
    return false;
  }
  if (session.counters != nullptr) return true;
  const Clock::time_point waited = Clock::now();
  const bool held = session.lease->acquire(kLeaseWait);
  recorder_.add_phase("wait", seconds_since(waited));
  if (!held) {
    *why = lease_kept(session, "counters") + ": kernel time only (CUDA events)";
    return false;
  }
  const Clock::time_point opened = Clock::now();
  for (int attempt = 1;; ++attempt) {
    try {
      session.counters = std::make_unique<gpu::KernelRangeProfiler>(
          static_cast<void*>(session.context), static_cast<int>(session.device), session.metrics);
      break;
    } catch (const gpu::ProfilerError& error) {
      if (error.kind() != gpu::ProfilerErrorKind::kMultipleSubscribers) {
        session.lease->release();
        throw;
      }
      if (attempt == kBusyAttempts) {
        session.lease->release();
        session.no_counters = std::string(
                                  "the GPU's counters are held outside this run: "
                                  "kernel time only (CUDA events): ") +
                              error.what();
        *why = session.no_counters;
        recorder_.add_phase("open", seconds_since(opened));
        return false;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }
  recorder_.add_phase("open", seconds_since(opened));
  recorder_.add_phase("sessions", 1);
  record_device(session, session.counters->num_passes());
  start_watcher();
  return true;
}

bool CounterHandover::take_sampling(Session& session, std::string* why) {
  if (session.lease->held()) return true;
  const Clock::time_point waited = Clock::now();
  const bool held = session.lease->acquire(kLeaseWait);
  recorder_.add_phase("wait", seconds_since(waited));
  if (!held) {
    *why = lease_kept(session, "warp sampling");
    return false;
  }
  start_watcher();
  return true;
}

std::string CounterHandover::lease_kept(const Session& session, const std::string& what) const {
  const int holder = session.lease->holder();
  return "another process of this run" +
         (holder > 0 ? " (pid " + std::to_string(holder) + ")" : std::string()) +
         " kept the GPU's " + what + " for more than " + std::to_string(kLeaseWait.count() / 1000) +
         " s";
}

void CounterHandover::start_watcher() {
  if (watcher_started_) return;
  watcher_started_ = true;
  std::thread([this] { watch(); }).detach();
}

void CounterHandover::record_device(const Session& session, int passes) {
  if (device_recorded_) return;
  recorder_.record(device_record(device_info(driver_, session.device, session.chip),
                                 std::string(to_string(set_)), session.metrics, passes));
  device_recorded_ = true;
}

void CounterHandover::hand_over(bool done) {
  if (session_ != nullptr && session_->lease != nullptr && session_->lease->held() &&
      (done || session_->lease->others_waiting()))
    release_counters(*session_);
}

void CounterHandover::close(CUcontext context) {
  if (session_ == nullptr || session_->context != context) return;
  close_session();
}

void CounterHandover::stop() {
  stopping_.store(true);
}

void CounterHandover::close_inherited() {
  stopping_.store(true);
  if (session_ != nullptr && session_->lease != nullptr) session_->lease->close_inherited();
}

// Closes the counters (or disables the warp sampling) and gives the lease up. With the
// session's context current (or being destroyed), and the lock held.
void CounterHandover::release_counters(Session& session) {
  batches_.end(session);
  const Clock::time_point t = Clock::now();
  session.counters.reset();
  session.sampler.reset();
  session.lease->release();
  recorder_.add_phase("close", seconds_since(t));
}

// The watcher thread: hands the counters over while this process is between launches and
// another process waits for them (a holder that goes idle would otherwise keep them).
void CounterHandover::watch() {
  while (!stopping_.load()) {
    std::this_thread::sleep_for(kWatchPeriod);
    try {
      std::unique_lock<std::shared_mutex> launch(launch_mutex_, std::try_to_lock);
      if (!launch.owns_lock()) continue;  // a launch is in flight: its exit hands over
      std::lock_guard<std::mutex> lock(mutex_);
      if (stopping_.load() || session_ == nullptr || !session_->lease->held() ||
          !session_->lease->others_waiting())
        continue;
      if (driver_.ctx_push_current(session_->context) != CUDA_SUCCESS) continue;
      release_counters(*session_);
      CUcontext popped = nullptr;
      driver_.ctx_pop_current(&popped);
    } catch (...) {
      // An flock failure: the next launch boundary hands over instead. Nothing may escape
      // into the program.
    }
  }
}

void CounterHandover::close_session() {
  if (session_ == nullptr) return;
  // The counters, flush buffer and events belong to the context: free them with it current.
  if (driver_.ctx_push_current(session_->context) == CUDA_SUCCESS) {
    if (session_->lease->held()) release_counters(*session_);
    session_->sampler.reset();  // sampling disabled: the context's kernels run concurrently again
    session_->flush.reset();
    session_->timer.reset();
    CUcontext popped = nullptr;
    driver_.ctx_pop_current(&popped);
  } else {  // the context is gone: so are its buffer, events, counters and sampling
    batches_.fail(*session_, "the context was gone before the counters of its batch were read");
    session_->counters.reset();
    session_->sampler.release();
    session_->flush.release();
    session_->timer.release();
  }
  session_.reset();  // closing the lease's files releases it
}

}  // namespace roofline::inject
