// What the points of a sweep run on: one stream, an L2 flush buffer and the input arena, and
// each point's launch on them. The timing rounds (runner.cpp) and the counter pass
// (counter_pass.hpp) both launch through it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "lib/gpu/device_memory.hpp"
#include "lib/gpu/input_arena.hpp"
#include "lib/gpu/runner.hpp"

namespace roofline::gpu {

class PointLauncher {
 public:
  // `l2_cache_bytes`: the device's L2; the flush buffer is twice that (at least 64 MiB).
  PointLauncher(const std::vector<SweepPoint>& points, std::uint64_t seed,
                std::int64_t l2_cache_bytes);

  const std::vector<SweepPoint>& points() const { return points_; }
  const Stream& stream() const { return stream_; }
  InputArena& arena() { return arena_; }

  // Reads the flush buffer (reads only: a dirty L2 would write back into the next launch).
  void flush_l2();
  // The point's kernel on the arena; throws CudaError naming the kernel when it fails.
  void launch(std::size_t point);
  // Before a point's first launch: its inputs filled, outputs poisoned, and for backward the
  // forward state computed and the gradients poisoned. The arena must hold `sizes`.
  void prepare_first(std::size_t point, const PointSizes& sizes);
  // Before later launches (timing rounds, counter passes): the arena grown for the point, its
  // inputs refilled only when the workload changed (every kernel of a workload reads the same
  // inputs and none writes them), outputs not poisoned (they are overwritten).
  void prepare_again(std::size_t point);

 private:
  const std::vector<SweepPoint>& points_;
  std::uint64_t seed_;
  Stream stream_;
  InputArena arena_;
  DeviceBuffer flush_;
};

}  // namespace roofline::gpu
