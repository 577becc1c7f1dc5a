// The measurement session of one context. The counter hand-over (counter_handover.hpp) owns
// it, opens it at the context's first profiled launch and its counters under the device's
// lease; the batch recorder (batch_recorder.hpp) keeps the open batch's launches in it; its
// chip and metrics say how the launch rows (launch_rows.hpp) read its ranges. Used under the
// hand-over's lock.
#pragma once

#include <cuda.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "lib/core/domain/launch.hpp"
#include "lib/gpu/cupti/pc_sampler.hpp"
#include "lib/gpu/range_profiler.hpp"
#include "lib/inject/cache_flush.hpp"
#include "lib/inject/event_timer.hpp"
#include "lib/profile/counter_lease.hpp"

namespace roofline::inject {

// A launch measured in a batch: its row waits for the end of the batch's pass.
struct BatchedLaunch {
  KernelLaunch launch;
  std::string range;               // the name of its range
  CUresult result = CUDA_SUCCESS;  // what the launch call returned
  std::string error;               // its description when not CUDA_SUCCESS
  std::uint32_t correlation = 0;   // of its driver call: its kernels' activity records
  std::uint64_t window_start = 0;  // CUPTI timestamps between which only its kernels ran
  std::uint64_t window_end = 0;
  // Non-zero: the range is a replay of this kernel node of graph launch launch.index
  // (node_replay.hpp), whose counters go to that launch's rows, not to a row of its own.
  std::uint64_t replayed_node = 0;
};

// The flush buffer and event pair (the context's), the counters, open only while this
// process holds the device's lease, and, under --stalls (which never opens the counters), the
// context's PC-sampling session.
struct Session {
  CUcontext context = nullptr;
  CUdevice device = 0;
  std::string chip;
  std::vector<std::string> metrics;
  bool catalogued = false;
  std::unique_ptr<CacheFlush> flush;
  std::unique_ptr<EventTimer> timer;  // made for the first launch timed without counters
  std::unique_ptr<CounterLease> lease;
  std::unique_ptr<gpu::KernelRangeProfiler> counters;  // open only while the lease is held
  std::string no_counters;  // set when a profiler outside the run holds the counters
  // --stalls: made at the context's first sampled launch, enabled until the session closes or
  // the last launch to profile is done; `no_sampling` says why it could not be made.
  std::unique_ptr<gpu::cupti::PcSampler> sampler;
  std::string no_sampling;
  // Launches measured in the open batch, in the order of their ranges. Ranges are named by a
  // count that only grows, so that a range left by a dropped launch is never taken for another.
  std::vector<BatchedLaunch> batched;
  std::uint64_t ranges_pushed = 0;
  std::size_t batches_started = 0;  // the first batch is smaller than the later ones
};

}  // namespace roofline::inject
