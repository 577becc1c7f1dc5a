#include "lib/inject/graph_counter.hpp"

#include <algorithm>
#include <iterator>
#include <memory>
#include <optional>
#include <utility>

#include "lib/inject/checkpoint.hpp"
#include "lib/inject/kernel_activity.hpp"

namespace roofline::inject {
namespace {

// The driver calls that instantiate an executable graph (their parameters begin with the
// executable graph's address and the graph), and those that change one after its
// instantiation (their parameters begin with the executable graph).
struct InstantiateParams {
  CUgraphExec* exec;
  CUgraph graph;
};
constexpr CUpti_CallbackId kInstantiateCallbacks[] = {
    CUPTI_DRIVER_TRACE_CBID_cuGraphInstantiate, CUPTI_DRIVER_TRACE_CBID_cuGraphInstantiate_v2,
    CUPTI_DRIVER_TRACE_CBID_cuGraphInstantiateWithFlags,
    CUPTI_DRIVER_TRACE_CBID_cuGraphInstantiateWithParams,
    CUPTI_DRIVER_TRACE_CBID_cuGraphInstantiateWithParams_ptsz};
constexpr CUpti_CallbackId kExecChangeCallbacks[] = {
    CUPTI_DRIVER_TRACE_CBID_cuGraphExecKernelNodeSetParams,
    CUPTI_DRIVER_TRACE_CBID_cuGraphExecKernelNodeSetParams_v2,
    CUPTI_DRIVER_TRACE_CBID_cuGraphExecUpdate,
    CUPTI_DRIVER_TRACE_CBID_cuGraphExecUpdate_v2,
    CUPTI_DRIVER_TRACE_CBID_cuGraphExecMemcpyNodeSetParams,
    CUPTI_DRIVER_TRACE_CBID_cuGraphExecMemsetNodeSetParams,
    CUPTI_DRIVER_TRACE_CBID_cuGraphExecHostNodeSetParams,
    CUPTI_DRIVER_TRACE_CBID_cuGraphExecChildGraphNodeSetParams,
    CUPTI_DRIVER_TRACE_CBID_cuGraphExecExternalSemaphoresSignalNodeSetParams,
    CUPTI_DRIVER_TRACE_CBID_cuGraphExecExternalSemaphoresWaitNodeSetParams,
    CUPTI_DRIVER_TRACE_CBID_cuGraphExecBatchMemOpNodeSetParams,
    CUPTI_DRIVER_TRACE_CBID_cuGraphExecNodeSetParams,
    CUPTI_DRIVER_TRACE_CBID_cuGraphNodeSetEnabled};

// The program's allocations of device and managed memory, and its question about free memory.
constexpr CUpti_CallbackId kMemoryCallbacks[] = {
    CUPTI_DRIVER_TRACE_CBID_cuMemAlloc,
    CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2,
    CUPTI_DRIVER_TRACE_CBID_cuMemAllocPitch,
    CUPTI_DRIVER_TRACE_CBID_cuMemAllocPitch_v2,
    CUPTI_DRIVER_TRACE_CBID_cuMemAllocManaged,
    CUPTI_DRIVER_TRACE_CBID_cuMemAllocAsync,
    CUPTI_DRIVER_TRACE_CBID_cuMemAllocAsync_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuMemAllocFromPoolAsync,
    CUPTI_DRIVER_TRACE_CBID_cuMemAllocFromPoolAsync_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuMemCreate,
    CUPTI_DRIVER_TRACE_CBID_cuMemGetInfo,
    CUPTI_DRIVER_TRACE_CBID_cuMemGetInfo_v2};

bool one_of(CUpti_CallbackId id, const auto& ids) {
  return std::find(std::begin(ids), std::end(ids), id) != std::end(ids);
}

std::uint32_t exec_id(CUgraphExec exec) {
  std::uint32_t id = 0;
  return exec != nullptr && cuptiGetGraphExecId(exec, &id) == CUPTI_SUCCESS ? id : 0;
}

}  // namespace

GraphCounter::GraphCounter(const Driver& driver, Recorder& recorder, BatchRecorder& batches,
                           LaunchRows& rows, const GraphCatalog& catalog, const std::regex* filter,
                           CacheControl cache)
    : driver_(driver),
      recorder_(recorder),
      batches_(batches),
      rows_(rows),
      catalog_(catalog),
      filter_(filter),
      cache_(cache) {}

std::vector<CUpti_CallbackId> GraphCounter::callbacks() {
  std::vector<CUpti_CallbackId> ids(std::begin(kInstantiateCallbacks),
                                    std::end(kInstantiateCallbacks));
  ids.insert(ids.end(), std::begin(kExecChangeCallbacks), std::end(kExecChangeCallbacks));
  return ids;
}

GraphCounter::~GraphCounter() = default;

std::vector<CUpti_CallbackId> GraphCounter::memory_callbacks() {
  return {std::begin(kMemoryCallbacks), std::end(kMemoryCallbacks)};
}

bool GraphCounter::takes_memory(CUpti_CallbackId id) {
  return one_of(id, kMemoryCallbacks);
}

bool GraphCounter::instantiates(CUpti_CallbackId id) {
  return one_of(id, kInstantiateCallbacks);
}

bool GraphCounter::changes_exec(CUpti_CallbackId id) {
  return one_of(id, kExecChangeCallbacks);
}

void GraphCounter::instantiated(const void* params) {
  const auto* p = static_cast<const InstantiateParams*>(params);
  if (p->exec == nullptr || p->graph == nullptr) return;
  const std::uint32_t exec = exec_id(*p->exec);
  if (exec == 0) return;
  const Clock::time_point t = Clock::now();
  const auto clone_of = [this](CUgraphNode node) -> std::uint64_t {
    std::uint64_t id = 0;
    return cuptiGetGraphNodeId(node, &id) == CUPTI_SUCCESS ? catalog_.latest_clone(id) : 0;
  };
  plans_.add(exec, plan_replay(driver_, p->graph, clone_of));
  recorder_.add_phase("plan", seconds_since(t));
}

void GraphCounter::changed(const void* params, const char* call) {
  if (const std::uint32_t exec = exec_id(*static_cast<const CUgraphExec*>(params)); exec != 0)
    plans_.changed(exec, call != nullptr ? call : "a driver call");
}

void GraphCounter::count(Session& session, const KernelLaunch& launch, CUstream stream,
                         std::uint32_t exec) {
  if (!broken_.empty()) {
    rows_.nodes_not_replayed(launch.index, broken_);
    return;
  }
  const std::shared_ptr<const ReplayPlan> plan = plans_.find(exec);
  if (!plan->why.empty()) {
    rows_.nodes_not_replayed(launch.index, plan->why);
    return;
  }
  const std::lock_guard<std::mutex> kept(kept_mutex_);
  Clock::time_point t = Clock::now();
  std::unique_ptr<Checkpoint>& saved = kept_[session.context];
  try {
    synchronize_context(driver_);
    if (saved)
      saved->save();
    else
      saved = std::make_unique<Checkpoint>(session.context);
  } catch (const std::exception& error) {
    saved.reset();
    rows_.nodes_not_replayed(launch.index, std::string("device memory not saved: ") + error.what());
    return;
  }
  recorder_.add_phase("checkpoint", seconds_since(t));
  std::string stopped;  // why the replays stopped before the last node
  for (const ReplayNode& node : plan->nodes) {
    std::optional<NodeOrigin> origin;
    const bool counted = node.kind == ReplayNode::Kind::kKernel &&
                         (filter_ == nullptr || !(origin = catalog_.origin(node.node_id)) ||
                          origin->kernel.empty() || std::regex_search(origin->kernel, *filter_));
    if (!counted) {
      if (const CUresult r = replay_node(driver_, node, stream); r != CUDA_SUCCESS) {
        stopped = driver_.describe("a node's replay", r);
        break;
      }
      continue;
    }
    try {
      if (cache_ == CacheControl::kCold && session.flush) {
        t = Clock::now();
        session.flush->run(stream);
        recorder_.add_phase("flush", seconds_since(t));
      }
      BatchedLaunch b;
      b.launch = launch;
      b.replayed_node = node.node_id;
      b.range = batches_.begin_range(session);
      b.window_start = KernelActivity::now_ns();
      b.result = replay_node(driver_, node, stream);
      if (b.result != CUDA_SUCCESS) {
        b.error = driver_.describe("a kernel node's replay (cuLaunchKernelEx)", b.result);
        stopped = b.error;
      }
      batches_.end_range(session, std::move(b));
    } catch (const std::exception& error) {
      stopped = error.what();
    }
    if (!stopped.empty()) break;
  }
  t = Clock::now();
  try {
    synchronize_context(driver_);
    saved->restore();
    synchronize_context(driver_);
  } catch (const std::exception& error) {
    // The program's memory may now hold a replay's writes: no graph is replayed again.
    broken_ = std::string("an earlier restore of the device memory failed: ") + error.what();
    saved.reset();
    recorder_.record(error_record(
        ProfileErrorKind::kInternal,
        "the device memory could not be restored after replaying the nodes of a CUDA graph "
        "(the program's results may differ from a run without profile; use --graph-nodes "
        "timed): " +
            std::string(error.what())));
  }
  recorder_.add_phase("restore", seconds_since(t));
  if (!stopped.empty()) rows_.nodes_not_replayed(launch.index, "the replays stopped: " + stopped);
}

void GraphCounter::release(CUcontext context) {
  const std::lock_guard<std::mutex> kept(kept_mutex_);
  if (kept_.empty()) return;
  const Clock::time_point t = Clock::now();
  if (context == nullptr)
    kept_.clear();
  else
    kept_.erase(context);
  recorder_.add_phase("checkpoint", seconds_since(t));
}

}  // namespace roofline::inject
