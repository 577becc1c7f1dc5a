// A GPU's counters, shared by the processes of one `profile` run. CUPTI lets one process at a
// time hold a device's counters (another gets CUPTI_ERROR_HARDWARE_BUSY), while a
// torchrun-style program runs several processes that use CUDA at once, often on one GPU.
//
// The injection library of each process holds the device's lease while its counter session is
// open: an exclusive flock(2) on DIR/counters-KEY.lock, where DIR is the run's record
// directory and KEY names the device the same way in every process (its PCI bus id, whatever
// CUDA_VISIBLE_DEVICES says). A process that cannot take the lease at once holds a shared
// flock on DIR/counters-KEY.want while it waits, so the holder can see that someone waits
// (others_waiting) and hand the lease over at its next launch boundary or when it is idle.
// Locks end with their process, so a crashed holder never blocks the others.
//
// Not thread-safe: one object per device per process, used under the caller's lock.
#pragma once

#include <chrono>
#include <string>

namespace roofline {

class CounterLease {
 public:
  // Opens (creates) the two files. Throws std::runtime_error naming the path and errno's text.
  CounterLease(const std::string& dir, const std::string& key);
  ~CounterLease();  // closing the files releases any lock held
  CounterLease(const CounterLease&) = delete;
  CounterLease& operator=(const CounterLease&) = delete;

  // Takes the lease, waiting at most `timeout` for the holder to hand it over. True when held
  // on return (at once when already held); false when the wait timed out.
  bool acquire(std::chrono::milliseconds timeout);
  // Gives the lease up (nothing when not held).
  void release();
  bool held() const { return held_; }
  // True when another process waits in acquire() for this lease.
  bool others_waiting() const;
  // The process id the current holder wrote into the lock file; 0 when none is known.
  int holder() const;
  // In the child of a fork(): closes the descriptors shared with the parent without unlocking
  // (an unlock would release the parent's lease), so that the lock ends with the parent. The
  // object is unusable afterwards.
  void close_inherited();

  // "0000:18:00.0" -> "0000-18-00.0": a device key usable in a file name.
  static std::string key_of(const std::string& device_name);

 private:
  bool try_take();

  std::string lock_path_;
  int lock_fd_ = -1;
  int want_fd_ = -1;
  bool held_ = false;
};

}  // namespace roofline
