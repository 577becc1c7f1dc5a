// The record file of one profiled process: JSON lines (profile_protocol.hpp), each appended
// with one write(2) on an O_APPEND descriptor, so that a process that dies leaves whole lines
// and the lines of threads do not interleave.
#pragma once

#include <mutex>
#include <string>

namespace roofline::inject {

class RecordFile {
 public:
  // Creates DIR/PID.jsonl; throws std::runtime_error naming the path and errno's text.
  RecordFile(const std::string& dir, int pid);
  ~RecordFile();
  RecordFile(const RecordFile&) = delete;
  RecordFile& operator=(const RecordFile&) = delete;

  // Appends one "\n"-terminated line; false when the write failed (disk full: nothing to do).
  bool append(const std::string& line);

 private:
  int fd_ = -1;
  std::mutex mutex_;
};

}  // namespace roofline::inject
