// --graph-nodes counted: each kernel node of a graph launch counted in a replay of its own.
// When a graph is instantiated, what its nodes need to run alone is read (node_replay.hpp);
// before a graph launch that a batch measures, the context's device memory is saved
// (checkpoint.hpp), every node is replayed in an order its edges allow, each kernel node (that
// --kernel-regex passes) a range of the batch after the cold flush, and the memory is restored:
// the graph launch itself then runs on the memory it would have met, and the program's results
// are those of a run without the tool. The ranges' counters go to the launch's node rows
// (LaunchRows::keep_node_counters); a launch whose nodes cannot be replayed has them timed,
// and its rows say why.
//
// The copy of the memory is kept from one graph launch to the next and saved over: a copy
// allocated before each launch's replays and freed after them made the launch's kernels slower
// than the program runs them (H100, 2026-12-06: a captured decode loop's 243 kernels summed
// 2,856-2,888 µs a launch against 2,640-2,653 with --graph-nodes timed; the copy kept,
// 2,645-2,652). So that the program never has less memory for it, the copy is freed at the
// entry of the program's every allocation and question about free memory (memory_callbacks),
// when its context is destroyed and at exit; the next graph launch saves a new one.
#pragma once

#include <cuda.h>
#include <cupti.h>

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <regex>
#include <string>
#include <vector>

#include "lib/inject/batch_recorder.hpp"
#include "lib/inject/driver.hpp"
#include "lib/inject/graph_catalog.hpp"
#include "lib/inject/launch_rows.hpp"
#include "lib/inject/node_replay.hpp"
#include "lib/inject/recorder.hpp"
#include "lib/inject/session.hpp"
#include "lib/profile/profile_protocol.hpp"

namespace roofline::inject {

class Checkpoint;

class GraphCounter {
 public:
  // `filter`: --kernel-regex (nullptr: every kernel node is counted).
  GraphCounter(const Driver& driver, Recorder& recorder, BatchRecorder& batches, LaunchRows& rows,
               const GraphCatalog& catalog, const std::regex* filter, CacheControl cache);

  // The driver callbacks this needs: the calls that instantiate an executable graph, and those
  // that change one after its instantiation.
  static std::vector<CUpti_CallbackId> callbacks();
  static bool instantiates(CUpti_CallbackId id);
  static bool changes_exec(CUpti_CallbackId id);
  // The driver calls at whose entry the kept copy of the memory is freed (release): the
  // allocations of device and managed memory, and cuMemGetInfo.
  static std::vector<CUpti_CallbackId> memory_callbacks();
  static bool takes_memory(CUpti_CallbackId id);

  GraphCounter(const GraphCounter&) = delete;
  GraphCounter& operator=(const GraphCounter&) = delete;
  ~GraphCounter();

  // At the exit of a successful instantiation, with its callback's parameters: the plan of the
  // executable graph made.
  void instantiated(const void* params);
  // At the entry of a call that changes an executable graph (`call`: its name): the graph's
  // plan no longer holds.
  void changed(const void* params, const char* call);

  // Before graph launch `launch` of executable graph `exec` on `stream` is measured in a batch,
  // with the hand-over's lock held and the session's context current: its nodes replayed and
  // counted, the memory restored.
  void count(Session& session, const KernelLaunch& launch, CUstream stream, std::uint32_t exec);

  // Frees the kept copy of `context`'s memory (nullptr: of every context). The context must be
  // alive; waits for a count() in progress.
  void release(CUcontext context);

 private:
  const Driver& driver_;
  Recorder& recorder_;
  BatchRecorder& batches_;
  LaunchRows& rows_;
  const GraphCatalog& catalog_;
  const std::regex* filter_;
  CacheControl cache_;
  ReplayPlans plans_;
  std::string broken_;     // set when a restore failed: no graph is replayed again
  std::mutex kept_mutex_;  // held by count() and release()
  std::map<CUcontext, std::unique_ptr<Checkpoint>> kept_;
};

}  // namespace roofline::inject
