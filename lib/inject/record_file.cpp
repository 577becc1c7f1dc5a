#include "lib/inject/record_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace roofline::inject {

RecordFile::RecordFile(const std::string& dir, int pid) {
  const std::string path = dir + "/" + std::to_string(pid) + ".jsonl";
  fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd_ < 0) throw std::runtime_error("cannot write " + path + ": " + std::strerror(errno));
}

RecordFile::~RecordFile() {
  if (fd_ >= 0) ::close(fd_);
}

bool RecordFile::append(const std::string& line) {
  std::lock_guard<std::mutex> lock(mutex_);
  std::size_t written = 0;
  while (written < line.size()) {
    const ssize_t n = ::write(fd_, line.data() + written, line.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    written += static_cast<std::size_t>(n);
  }
  return true;
}

}  // namespace roofline::inject
