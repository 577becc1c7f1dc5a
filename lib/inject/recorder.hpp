// What one profiled process writes: its record file (profile_protocol.hpp) and the seconds the
// library spends in each phase, which the end record carries and `profile -v` prints (wait,
// open, plan, checkpoint, flush, start, sample, sync, push, kernel, pop, restore, events, stop,
// decode, evaluate, activity, record, cubins, close; "sessions" and "batches" count, as do
// "activity by correlation", "activity by window" and "activity missing", how each launch's
// activity records were found).
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "lib/inject/record_file.hpp"

namespace roofline::inject {

using Clock = std::chrono::steady_clock;

inline double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// Thread-safe. The phases' mutex is the last of the library's lock order (nothing else is
// locked while it is held); the record file serialises its own appends.
class Recorder {
 public:
  explicit Recorder(std::unique_ptr<RecordFile> file);

  // Appends one record line (a failed write, disk full, has nothing to do but go on).
  void record(const std::string& line);
  void add_phase(const char* phase, double seconds);
  std::map<std::string, double> phases() const;

 private:
  std::unique_ptr<RecordFile> file_;
  mutable std::mutex phases_mutex_;
  std::map<std::string, double> phases_;  // seconds per phase ("sessions": how many opened)
};

}  // namespace roofline::inject
