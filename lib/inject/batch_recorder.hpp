// Batches (--replay batch, the default, with one-pass counter sets): one user-replay pass,
// started at the first measured launch, stays open across launches; each measured launch is a
// user range, opened after the context's earlier work (the flush included) has finished and
// closed after the kernel has. A graph launch is one such range, measured as a whole (a batch
// never switches to kernel replay, which would need another config). The pass is ended,
// decoded and evaluated, and its launches' records appended, when its image is full
// (kFirstBatchRanges, then kBatchRanges), before a launch measured the other way, at a hand-over of
// the counters, at context destruction and at exit: so a pass start (tens of ms) is paid per batch,
// not per launch.
#pragma once

#include <mutex>
#include <string>

#include "lib/inject/driver.hpp"
#include "lib/inject/launch_rows.hpp"
#include "lib/inject/recorder.hpp"
#include "lib/inject/session.hpp"
#include "lib/profile/profile_protocol.hpp"

namespace roofline::inject {

// Keeps the open batch in the session it is given. Called with the counter hand-over's lock
// held; begin_range, end_range and end with the session's context current.
class BatchRecorder {
 public:
  // `read_at_exit`: the exit handler that reads the batch open at exit, registered when the
  // first batch starts (see begin_range).
  BatchRecorder(const Driver& driver, Recorder& recorder, LaunchRows& rows, ReplayMode replay,
                void (*read_at_exit)());

  // True when a launch of `session` goes into a batch: the batch mode and a one-pass set (a
  // graph launch too, as one range).
  bool takes(const Session& session) const;

  // Opens the range of a batched launch, starting a batch first when none is open; returns the
  // range's name. Throws gpu::ProfilerError.
  std::string begin_range(Session& session);
  // The exit of a launch measured in the batch: closes its range; its row is written when the
  // batch is read, here when the batch is full.
  void end_range(Session& session, BatchedLaunch launch);

  // Ends the open batch of `session` (if any), reads its counters and writes a row for each
  // of its launches.
  void end(Session& session);
  // The batch's launches get error rows saying `why`; the batch is dropped. Needs no context.
  void fail(Session& session, const std::string& why);

 private:
  const Driver& driver_;
  Recorder& recorder_;
  LaunchRows& rows_;
  ReplayMode replay_;
  void (*read_at_exit_)();
  std::once_flag exit_registered_;
};

}  // namespace roofline::inject
