// The GPU's counters, handed over between the processes of one run. Several processes of one
// run may use the same GPU, and only one of them can hold its counters at a time. A process
// opens its counter session when it first needs it, under the device's CounterLease (a lock in
// the run's directory), and keeps it while no other process waits: the cost of opening one is
// paid once per process. When another process waits, the holder closes its session and hands
// the lease over after its current launch, or at once when idle (a watcher thread looks every
// few milliseconds), then takes it back for its next profiled launch. A launch that cannot
// have the counters (another process of the run kept them longer than kLeaseWait, or a
// profiler outside the run holds them) is timed with events and its row says so; the run goes
// on. Under --stalls the lease guards the warp sampling instead (CUPTI PC sampling, enabled per
// context): one process of the run samples at a time, handed over the same way.
#pragma once

#include <cuda.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>

#include "lib/inject/batch_recorder.hpp"
#include "lib/inject/driver.hpp"
#include "lib/inject/recorder.hpp"
#include "lib/inject/session.hpp"
#include "lib/profile/profile_protocol.hpp"

namespace roofline::inject {

// Owns the session of the context measured (one at a time: a launch on another context closes
// the previous one) and the watcher thread. Before a session's counters close, its open batch
// is read through `batches` (or failed, when its context is gone).
class CounterHandover {
 public:
  // `launch_mutex`: held (shared or exclusive) from a launch's entry to its exit callback; the
  // watcher hands over only while it is free. `run_dir`: the run's record directory, where the
  // leases lie.
  CounterHandover(const Driver& driver, Recorder& recorder, BatchRecorder& batches, CounterSet set,
                  CacheControl cache, std::string run_dir, std::shared_mutex& launch_mutex);

  // Guards the session. Lock order: the launch mutex, then this one, then the recorder's
  // phases mutex. Every member below but stop() and close_inherited() is called with it held.
  std::unique_lock<std::mutex> lock();

  // The session open, or nullptr.
  Session* session();
  // The session of `context`, opened on first use (closing the previous one). Counters are
  // not opened here. Throws std::runtime_error with the driver's message.
  Session& session_for(CUcontext context);
  // Opens the counters of `session` under its lease, waiting for another process of the run
  // to hand them over. False, with `why`, when this launch must do without them. Throws
  // gpu::ProfilerError when counters cannot work at all (not permitted, unsupported).
  bool take_counters(Session& session, std::string* why);
  // --stalls: this process's turn at sampling the device's warps, under the same lease (two
  // processes of a run never sample at once; the sampler is made by the caller once this is
  // true, and closed with the lease when another process waits). False, with `why`, when
  // another process kept the lease longer than kLeaseWait.
  bool take_sampling(Session& session, std::string* why);
  // The device record, once per process; `passes`: of the counter set, 0 without counters.
  void record_device(const Session& session, int passes);
  // After a profiled launch, with the session's context current: hands the counters over
  // when another process waits for them, or for good when `done`.
  void hand_over(bool done);
  // At the destruction of `context`: closes its session, if it is the one open.
  void close(CUcontext context);

  // At exit: the watcher stops; a hand-over it has begun ends before lock() returns.
  void stop();
  // In the child of a fork() without exec, where only the forking thread exists (no lock is
  // taken: another thread may have held one at the fork): the watcher stops, and the lease's
  // descriptors, shared with the parent, are closed without unlocking.
  void close_inherited();

 private:
  void release_counters(Session& session);
  // Why the lease could not be had: "another process of this run (pid N) kept the GPU's
  // <what> for more than 10 s".
  std::string lease_kept(const Session& session, const std::string& what) const;
  void start_watcher();
  void watch();
  void close_session();

  const Driver& driver_;
  Recorder& recorder_;
  BatchRecorder& batches_;
  CounterSet set_;
  CacheControl cache_;
  std::string run_dir_;  // the run's record directory: record files and counter leases
  std::shared_mutex& launch_mutex_;
  std::atomic<bool> stopping_{false};  // the process is exiting: the watcher stops
  std::mutex mutex_;
  std::unique_ptr<Session> session_;
  bool watcher_started_ = false;
  bool device_recorded_ = false;
};

}  // namespace roofline::inject
