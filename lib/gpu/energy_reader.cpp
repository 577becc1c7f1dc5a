#include "lib/gpu/energy_reader.hpp"

#include <cstdint>
#include <optional>

#include "lib/gpu/nvml.hpp"

namespace roofline::gpu {

EnergyReader::EnergyReader(void* handle, Clock::time_point origin)
    : handle_(handle), origin_(origin), thread_([this] { poll(); }) {}

EnergyReader::~EnergyReader() {
  stop();
}

void EnergyReader::stop() {
  stopping_.store(true);
  if (thread_.joinable()) thread_.join();
}

void EnergyReader::poll() {
  std::uint64_t last = 0;
  bool have = false;
  while (!stopping_.load()) {
    const std::optional<std::uint64_t> mj = nvml::total_energy_mj(handle_);
    const double t = std::chrono::duration<double>(Clock::now() - origin_).count();
    if (mj && (!have || *mj != last)) {
      const std::lock_guard<std::mutex> lock(mutex_);
      seconds_.push_back(t);
      millijoules_.push_back(static_cast<double>(*mj));
      last = *mj;
      have = true;
    }
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
}

}  // namespace roofline::gpu
