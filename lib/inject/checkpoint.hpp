// A copy of a context's device memory (CUPTI's checkpoint API, libcheckpoint, beside libcupti),
// saved before a graph's nodes are replayed alone and restored before the graph itself runs
// (node_replay.hpp). One copy is saved over again for every graph launch (allowOverwrite): a
// copy allocated and freed around each launch slowed the launch's kernels after it (a captured
// decode loop's 243 kernels by 9%, graph_counter.hpp). The library is opened at the first use,
// so that a CUPTI without it leaves graph nodes timed rather than the injection unloadable.
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

  // Saves the memory again, over the copy (in its storage when the program's allocations are
  // those of the last save); throws std::runtime_error.
  void save();
  // Puts the memory back as saved; throws std::runtime_error.
  void restore();

 private:
  struct Handle;
  std::unique_ptr<Handle> handle_;
};

}  // namespace roofline::inject
