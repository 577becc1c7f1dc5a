#include "lib/inject/recorder.hpp"

namespace roofline::inject {

Recorder::Recorder(std::unique_ptr<RecordFile> file) : file_(std::move(file)) {}

void Recorder::record(const std::string& line) {
  file_->append(line);
}

void Recorder::add_phase(const char* phase, double seconds) {
  std::lock_guard<std::mutex> lock(phases_mutex_);
  phases_[phase] += seconds;
}

std::map<std::string, double> Recorder::phases() const {
  std::lock_guard<std::mutex> lock(phases_mutex_);
  return phases_;
}

}  // namespace roofline::inject
