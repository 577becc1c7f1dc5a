// CounterLease: the processes of one `profile` run take a GPU's counters in turn. Real
// processes (fork) hold and wait for the lease here; no GPU is involved.
#include <doctest/doctest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "lib/profile/counter_lease.hpp"
#include "tests/unit/helpers.hpp"

using namespace roofline;
using namespace std::chrono_literals;

namespace {

// Runs `body` in a child process; returns the child's pid. The child exits with body's value.
template <class Body>
pid_t in_child(Body body) {
  const pid_t pid = ::fork();
  if (pid == 0) ::_exit(body());
  REQUIRE(pid > 0);
  return pid;
}

int exit_status(pid_t pid) {
  int status = 0;
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  REQUIRE(WIFEXITED(status));
  return WEXITSTATUS(status);
}

// Polls `condition` for up to 10 s.
template <class Condition>
bool eventually(Condition condition) {
  for (int i = 0; i < 10000; ++i) {
    if (condition()) return true;
    std::this_thread::sleep_for(1ms);
  }
  return false;
}

}  // namespace

TEST_CASE("counter lease: one holder, the others wait, the holder sees them and hands over") {
  TempDir dir;
  const std::string key = CounterLease::key_of("0000:18:00.0");
  CHECK(key == "0000-18-00.0");
  CounterLease lease(dir.path.string(), key);
  REQUIRE(lease.acquire(0ms));
  CHECK(lease.held());
  CHECK(lease.holder() == ::getpid());
  CHECK_FALSE(lease.others_waiting());

  // Another process cannot have it while this one holds it, and says whom it waited for.
  const pid_t refused = in_child([&] {
    CounterLease other(dir.path.string(), key);
    if (other.acquire(50ms)) return 1;
    return other.holder() == ::getppid() ? 0 : 2;
  });
  CHECK(exit_status(refused) == 0);

  // A process that waits is seen waiting, and gets the lease once it is released.
  const pid_t waiter = in_child([&] {
    CounterLease other(dir.path.string(), key);
    if (!other.acquire(20s)) return 1;
    return other.holder() == ::getpid() ? 0 : 2;
  });
  CHECK(eventually([&] { return lease.others_waiting(); }));
  lease.release();
  CHECK_FALSE(lease.held());
  CHECK(exit_status(waiter) == 0);
  CHECK_FALSE(lease.others_waiting());  // the waiter is gone
}

TEST_CASE("counter lease: a holder that dies without releasing frees the lease") {
  TempDir dir;
  const pid_t dead = in_child([&] {
    CounterLease held(dir.path.string(), "gpu0");
    ::_exit(held.acquire(0ms) ? 0 : 1);  // no release, no destructor
    return 3;
  });
  CHECK(exit_status(dead) == 0);
  CounterLease lease(dir.path.string(), "gpu0");
  CHECK(lease.acquire(1s));
}

TEST_CASE("counter lease: a forked child that closes its copy leaves the parent's lease") {
  TempDir dir;
  CounterLease lease(dir.path.string(), "gpu0");
  REQUIRE(lease.acquire(0ms));
  // The child shares the parent's lock; closing its descriptors must not release it.
  const pid_t forked = in_child([&] {
    lease.close_inherited();
    CounterLease other(dir.path.string(), "gpu0");
    return other.acquire(0ms) ? 1 : 0;
  });
  CHECK(exit_status(forked) == 0);
  // Once the parent releases, the lock is free: no copy in a child keeps it.
  const pid_t keeper = in_child([&] {
    lease.close_inherited();
    std::this_thread::sleep_for(2s);
    return 0;
  });
  lease.release();
  const pid_t taker = in_child([&] {
    CounterLease other(dir.path.string(), "gpu0");
    return other.acquire(1s) ? 0 : 1;
  });
  CHECK(exit_status(taker) == 0);
  CHECK(exit_status(keeper) == 0);
}

TEST_CASE("counter lease: devices are independent, a missing directory is an error") {
  TempDir dir;
  CounterLease a(dir.path.string(), "gpu0");
  CounterLease b(dir.path.string(), "gpu1");
  REQUIRE(a.acquire(0ms));
  const pid_t other = in_child([&] {
    CounterLease b2(dir.path.string(), "gpu1");
    return b2.acquire(0ms) ? 0 : 1;
  });
  CHECK(exit_status(other) == 0);
  CHECK(b.acquire(1s));
  CHECK_THROWS_WITH_AS(CounterLease((dir.path / "missing").string(), "gpu0"),
                       doctest::Contains("cannot open"), std::runtime_error);
}
