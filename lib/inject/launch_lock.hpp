// The injection's launch lock, held by each launch from its entry callback to its exit callback:
// shared while the launch is decided and for a launch left unmeasured, exclusive for a measured
// one. A measured launch therefore runs with no other launch of the process entering the driver
// (its counters and time are its own), while launches left unmeasured never exclude each other:
// inside the driver one may wait for the GPU (a lazily loaded kernel may synchronise the
// context, the CUDA guide's lazy-loading hazards), and so for a kernel that spins until another
// thread of the program, itself launching, releases it (XLA's DelayKernel: host_gated.hpp).
#pragma once

#include <shared_mutex>

namespace roofline::inject {

class LaunchLock {
 public:
  // What the calling thread holds; each launch keeps its own from entry to exit.
  enum class Held { kNone, kShared, kExclusive };

  // At a launch's entry: shared (waits only for a measured launch to finish).
  Held enter() {
    mutex_.lock_shared();
    return Held::kShared;
  }
  // A launch to be measured: shared → exclusive. The launches of other threads already inside
  // the driver finish first; one may measure in between, so what was decided under the shared
  // lock is to be checked again.
  Held measure(Held held) {
    if (held == Held::kShared) mutex_.unlock_shared();
    if (held != Held::kExclusive) mutex_.lock();
    return Held::kExclusive;
  }
  // A launch that, once exclusive, is not measured after all: back to shared.
  Held unmeasured(Held held) {
    if (held == Held::kExclusive) {
      mutex_.unlock();
      mutex_.lock_shared();
    }
    return held == Held::kNone ? Held::kNone : Held::kShared;
  }
  // At its exit: whatever it holds.
  Held exit(Held held) {
    if (held == Held::kExclusive) mutex_.unlock();
    if (held == Held::kShared) mutex_.unlock_shared();
    return Held::kNone;
  }
  // The counter hand-over's watcher hands over only while no launch holds it (try_lock).
  std::shared_mutex& mutex() { return mutex_; }

 private:
  std::shared_mutex mutex_;
};

}  // namespace roofline::inject
