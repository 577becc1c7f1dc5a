#include "lib/profile/counter_lease.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <thread>

namespace roofline {
namespace {

int open_file(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) throw std::runtime_error("cannot open " + path + ": " + std::strerror(errno));
  return fd;
}

// flock that retries when a signal interrupts it; false when the lock is taken (LOCK_NB).
bool lock(int fd, int operation) {
  while (::flock(fd, operation) != 0) {
    if (errno == EINTR) continue;
    if (errno == EWOULDBLOCK) return false;
    throw std::runtime_error(std::string("flock: ") + std::strerror(errno));
  }
  return true;
}

}  // namespace

CounterLease::CounterLease(const std::string& dir, const std::string& key)
    : lock_path_(dir + "/counters-" + key + ".lock") {
  lock_fd_ = open_file(lock_path_);
  try {
    want_fd_ = open_file(dir + "/counters-" + key + ".want");
  } catch (...) {
    ::close(lock_fd_);
    throw;
  }
}

CounterLease::~CounterLease() {
  close_inherited();
}

void CounterLease::close_inherited() {
  if (want_fd_ >= 0) ::close(want_fd_);
  if (lock_fd_ >= 0) ::close(lock_fd_);
  want_fd_ = lock_fd_ = -1;
  held_ = false;
}

std::string CounterLease::key_of(const std::string& device_name) {
  std::string key;
  for (char c : device_name)
    key += (std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_') ? c : '-';
  return key.empty() ? "device" : key;
}

bool CounterLease::try_take() {
  if (!lock(lock_fd_, LOCK_EX | LOCK_NB)) return false;
  held_ = true;
  // The holder's pid, for the messages of processes that wait; a failure only loses that.
  const std::string pid = std::to_string(::getpid());
  if (::ftruncate(lock_fd_, 0) == 0) (void)!::pwrite(lock_fd_, pid.data(), pid.size(), 0);
  return true;
}

bool CounterLease::acquire(std::chrono::milliseconds timeout) {
  if (held_) return true;
  if (try_take()) return true;
  // Waiting: say so (a shared lock on the .want file) until the lease is ours or time is up.
  lock(want_fd_, LOCK_SH);
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  auto pause = std::chrono::microseconds(100);
  bool taken = false;
  while (!(taken = try_take()) && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(pause);
    pause = std::min<std::chrono::microseconds>(pause * 2, std::chrono::milliseconds(2));
  }
  lock(want_fd_, LOCK_UN);
  return taken;
}

void CounterLease::release() {
  if (!held_) return;
  held_ = false;
  lock(lock_fd_, LOCK_UN);
}

bool CounterLease::others_waiting() const {
  // An exclusive lock on .want is refused while any waiter holds its shared one.
  if (!lock(want_fd_, LOCK_EX | LOCK_NB)) return true;
  lock(want_fd_, LOCK_UN);
  return false;
}

int CounterLease::holder() const {
  char text[16] = {};
  const ssize_t n = ::pread(lock_fd_, text, sizeof text - 1, 0);
  return n > 0 ? std::atoi(text) : 0;
}

}  // namespace roofline
