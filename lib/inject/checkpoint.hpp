// A copy of a context's device memory (CUPTI's checkpoint API, libcheckpoint, beside libcupti),
// saved before a graph's nodes are replayed alone and restored before the graph itself runs
// (node_replay.hpp). The library is opened at the first use, so that a CUPTI without it leaves
// graph nodes timed rather than the injection unloadable.
#pragma once

#include <cuda.h>

#include <memory>
#include <string>

namespace roofline::inject {

class Checkpoint {
 public:
  // Saves the device memory of `context` (the program's allocations, pinned host memory
  // included); throws std::runtime_error with CUPTI's message.
  explicit Checkpoint(CUcontext context);
  // Frees the copy (never restores it).
  ~Checkpoint();
  Checkpoint(const Checkpoint&) = delete;
  Checkpoint& operator=(const Checkpoint&) = delete;

  // Puts the memory back as saved; throws std::runtime_error.
  void restore();

 private:
  struct Handle;
  std::unique_ptr<Handle> handle_;
};

}  // namespace roofline::inject
