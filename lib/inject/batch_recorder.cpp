#include "lib/inject/batch_recorder.hpp"

#include <cstdlib>
#include <map>
#include <utility>
#include <vector>

namespace roofline::inject {
namespace {

// Ranges one batch holds before its pass is ended and read: a context's first batch
// kFirstBatchRanges, every later one kBatchRanges. The image costs about 150 KB a range with the
// default set and is initialised once per batch; each batch pays one pass start (45-70 ms on the
// H200: SetConfig and Start), so a program of many launches pays fewer starts, and a short one no
// larger image. With room for 512, CUPTI 13.0 on the H200 gave back the first 256 ranges of the
// pass and dropped the rest without a word (decode reported none dropped): 256 is the most a
// pass holds here.
constexpr std::size_t kFirstBatchRanges = 128;
constexpr std::size_t kBatchRanges = 256;

}  // namespace

BatchRecorder::BatchRecorder(const Driver& driver, Recorder& recorder, LaunchRows& rows,
                             ReplayMode replay, void (*read_at_exit)())
    : driver_(driver),
      recorder_(recorder),
      rows_(rows),
      replay_(replay),
      read_at_exit_(read_at_exit) {}

bool BatchRecorder::takes(const Session& session) const {
  return replay_ == ReplayMode::kBatch && session.counters != nullptr &&
         session.counters->num_passes() == 1;
}

std::string BatchRecorder::begin_range(Session& session) {
  Clock::time_point t = Clock::now();
  if (!session.counters->batch_open()) {
    session.counters->begin_batch(session.batches_started++ == 0 ? kFirstBatchRanges
                                                                 : kBatchRanges);
    recorder_.add_phase("start", seconds_since(t));
    // The batch open at exit is read by a handler registered now, after the CUDA runtime
    // registered its own: handlers run in reverse order, so it runs while CUDA and CUPTI are
    // still whole. (Read from the handler registered in InitializeInjection, during cuInit,
    // the last batch came back empty from PyTorch and crashed a CUDA C++ program, SIGSEGV.)
    std::call_once(exit_registered_, [this] { std::atexit(read_at_exit_); });
    t = Clock::now();
  }
  // The range must hold this kernel alone: the flush and every earlier launch of the
  // context finish before it opens (kernel replay serialises the same way).
  synchronize_context(driver_);
  recorder_.add_phase("sync", seconds_since(t));
  t = Clock::now();
  std::string range = std::to_string(session.ranges_pushed++);
  session.counters->push_range(range);
  recorder_.add_phase("push", seconds_since(t));
  return range;
}

void BatchRecorder::end_range(Session& session, BatchedLaunch launch) {
  Clock::time_point t = Clock::now();
  // The kernel ends before its range closes, whatever order CUPTI gives the pop.
  synchronize_context(driver_);
  recorder_.add_phase("sync", seconds_since(t));
  launch.window_end = KernelActivity::now_ns();
  session.batched.push_back(std::move(launch));
  t = Clock::now();
  try {
    session.counters->pop_range();
  } catch (const gpu::ProfilerError& error) {
    fail(session, error.what());
    return;
  }
  recorder_.add_phase("pop", seconds_since(t));
  if (session.counters->batch_full()) end(session);
}

void BatchRecorder::end(Session& session) {
  if (session.counters == nullptr || !session.counters->batch_open()) return;
  recorder_.add_phase("batches", 1);
  std::vector<gpu::RangeValues> ranges;
  try {
    ranges = rows_.read_counters(*session.counters);
  } catch (const gpu::ProfilerError& error) {
    fail(session, error.what());
    return;
  }
  const Clock::time_point t = Clock::now();
  rows_.flush_activity();
  std::map<std::string, const gpu::RangeValues*> by_name;
  for (const gpu::RangeValues& range : ranges) by_name[range.name] = &range;
  for (const BatchedLaunch& b : session.batched) {
    const auto found = by_name.find(b.range);
    if (b.replayed_node != 0) {
      rows_.keep_node_counters(
          session, b.launch.index, b.replayed_node,
          b.result != CUDA_SUCCESS || found == by_name.end() ? nullptr : found->second,
          b.result != CUDA_SUCCESS ? b.error
                                   : "the range profiler recorded "
                                     "no range for its replay",
          b.window_start, b.window_end);
      continue;
    }
    if (b.result != CUDA_SUCCESS)
      recorder_.record(launch_record(b.launch, RowStatus::kError, b.error, {}));
    else if (found == by_name.end())
      recorder_.record(launch_record(b.launch, RowStatus::kError,
                                     "the range profiler recorded no range for this launch", {}));
    else
      rows_.record_ranges(
          session, b.launch, {*found->second},
          rows_.take_activity(b.launch, b.correlation, b.window_start, b.window_end),
          Around::kUserRange);
  }
  session.batched.clear();
  recorder_.add_phase("record", seconds_since(t));
}

void BatchRecorder::fail(Session& session, const std::string& why) {
  for (const BatchedLaunch& b : session.batched)
    if (b.replayed_node != 0)
      rows_.keep_node_counters(session, b.launch.index, b.replayed_node, nullptr,
                               "counters lost: " + why);
    else
      recorder_.record(launch_record(b.launch, RowStatus::kError,
                                     b.result != CUDA_SUCCESS ? b.error : "counters lost: " + why,
                                     {}));
  session.batched.clear();
}

}  // namespace roofline::inject
