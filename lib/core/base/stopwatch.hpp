// Adds the wall-clock seconds a scope lasts to a running total: where a pass's time goes.
#pragma once

#include <chrono>

namespace roofline {

class Stopwatch {
 public:
  explicit Stopwatch(double& into) : into_(into), t_(std::chrono::steady_clock::now()) {}
  ~Stopwatch() {
    into_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - t_).count();
  }
  Stopwatch(const Stopwatch&) = delete;
  Stopwatch& operator=(const Stopwatch&) = delete;

 private:
  double& into_;
  std::chrono::steady_clock::time_point t_;
};

}  // namespace roofline
