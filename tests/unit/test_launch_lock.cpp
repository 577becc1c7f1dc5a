// The injection's launch lock (lib/inject/launch_lock.hpp): launches left unmeasured never wait
// for each other, a measured one runs with no other launch inside the driver. The scenario of
// XLA's autotuner, played with threads: one launch waits inside the driver for a kernel that
// another thread releases only after its own launch returns.
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <thread>

#include "lib/inject/launch_lock.hpp"

using roofline::inject::LaunchLock;
using Held = LaunchLock::Held;
using namespace std::chrono_literals;

namespace {

// True when `f` finishes within a second (it would hang on a lock otherwise).
template <typename F>
bool finishes(std::future<F>& f) {
  return f.wait_for(1s) == std::future_status::ready;
}

}  // namespace

TEST_CASE("a launch left unmeasured does not keep another thread's launch out of the driver") {
  LaunchLock lock;
  std::atomic<bool> released{false};
  // Thread B: a launch left unmeasured, inside the driver, waiting (as a lazily loaded kernel's
  // context synchronisation waits for the DelayKernel) until thread A's flag is set, or until
  // its timeout (XLA's is 100 ms; here 2 s), which is the failure.
  auto b = std::async(std::launch::async, [&] {
    Held held = lock.enter();
    const auto start = std::chrono::steady_clock::now();
    while (!released.load() && std::chrono::steady_clock::now() - start < 2s)
      std::this_thread::sleep_for(1ms);
    return lock.exit(held);
  });
  std::this_thread::sleep_for(20ms);
  // Thread A: its own launch (behind its DelayKernel: unmeasured) enters and leaves the driver,
  // then releases the DelayKernel.
  auto a = std::async(std::launch::async, [&] {
    Held held = lock.enter();
    held = lock.exit(held);
    released.store(true);
    return held;
  });
  CHECK(finishes(a));  // within a second: not behind B's timeout
  b.wait();
  CHECK(released.load());
  CHECK(a.get() == Held::kNone);
  CHECK(b.get() == Held::kNone);
}

TEST_CASE("a measured launch waits for the launches inside the driver, and keeps new ones out") {
  LaunchLock lock;
  Held inside = lock.enter();   // another thread's launch, inside the driver
  std::promise<void> decided;   // the measured thread holds the lock exclusively
  std::promise<void> gate;      // ... until told that a gate closed meanwhile
  std::promise<void> finished;  // ... and then exits
  auto measured = std::async(std::launch::async, [&] {
    Held held = lock.measure(lock.enter());
    const Held exclusive = held;
    decided.set_value();
    gate.get_future().wait();
    held = lock.unmeasured(held);  // not measured after all: shared again
    const Held shared = held;
    finished.get_future().wait();
    held = lock.exit(held);
    return exclusive == Held::kExclusive && shared == Held::kShared && held == Held::kNone;
  });
  auto is_decided = decided.get_future();
  CHECK(is_decided.wait_for(50ms) == std::future_status::timeout);  // waits for `inside`
  inside = lock.exit(inside);
  REQUIRE(is_decided.wait_for(1s) == std::future_status::ready);
  // While it is measured, no launch enters (nor does the watcher take the lock).
  auto later = std::async(std::launch::async, [&] { return lock.exit(lock.enter()); });
  CHECK(later.wait_for(50ms) == std::future_status::timeout);
  CHECK_FALSE(lock.mutex().try_lock());
  gate.set_value();
  CHECK(finishes(later));  // shared beside the unmeasured launch
  CHECK_FALSE(lock.mutex().try_lock());
  finished.set_value();
  REQUIRE(finishes(measured));
  CHECK(measured.get());
  CHECK(later.get() == Held::kNone);
  // Free again: the watcher can take it.
  REQUIRE(lock.mutex().try_lock());
  lock.mutex().unlock();
}

TEST_CASE("the launch lock's transitions from what a thread holds") {
  LaunchLock lock;
  CHECK(lock.exit(Held::kNone) == Held::kNone);
  CHECK(lock.unmeasured(Held::kNone) == Held::kNone);
  Held held = lock.measure(Held::kNone);  // a launch that held nothing: exclusive
  CHECK(held == Held::kExclusive);
  CHECK(lock.measure(held) == Held::kExclusive);  // already exclusive: unchanged
  CHECK(lock.exit(held) == Held::kNone);
  CHECK(lock.mutex().try_lock());
  lock.mutex().unlock();
}
