#include "lib/inject/kernel_activity.hpp"

#include <cupti.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>

#include "lib/inject/cache_flush.hpp"

namespace roofline::inject {
namespace {

// Activity buffers: CUPTI fills one, hands it back, asks for the next. 8 MiB holds about 40,000
// kernel records; the buffers are freed once read.
constexpr std::size_t kBufferBytes = std::size_t{8} << 20;
constexpr std::size_t kBufferAlign = 8;
// Records of no expected id kept for the window match: enough for the kernel nodes of the
// largest graphs, bounded so that a long program's other kernels cannot grow it.
constexpr std::size_t kUnexpectedKept = std::size_t{1} << 16;

void CUPTIAPI buffer_requested(std::uint8_t** buffer, std::size_t* size, std::size_t* max_records) {
  *buffer = static_cast<std::uint8_t*>(std::aligned_alloc(kBufferAlign, kBufferBytes));
  *size = *buffer != nullptr ? kBufferBytes : 0;
  *max_records = 0;  // as many as fit
}

const char* copy_kind_name(std::uint8_t kind) {
  switch (kind) {
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD:
      return "HtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH:
      return "DtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD:
      return "DtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOH:
      return "HtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_PTOP:
      return "PtoP";
    default:
      return "";
  }
}

// A memcpy or memset record (the two share these fields) as an execution of `kind`.
template <class Record>
KernelExecution memory_node(const Record& m, ExecutionKind kind) {
  KernelExecution e;
  e.kind = kind;
  e.start_ns = m.start;
  e.end_ns = m.end;
  e.correlation = m.correlationId;
  e.graph_node = m.graphNodeId;
  e.graph_id = m.graphId;
  e.bytes = static_cast<std::int64_t>(m.bytes);
  return e;
}

void CUPTIAPI buffer_completed(CUcontext context, std::uint32_t stream, std::uint8_t* buffer,
                               std::size_t, std::size_t valid) {
  KernelActivity& activity = KernelActivity::instance();
  CUpti_Activity* record = nullptr;
  while (cuptiActivityGetNextRecord(buffer, valid, &record) == CUPTI_SUCCESS) {
    KernelExecution e;
    if (record->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL ||
        record->kind == CUPTI_ACTIVITY_KIND_KERNEL) {
      const auto* k = reinterpret_cast<const CUpti_ActivityKernel10*>(record);
      e.start_ns = k->start;
      e.end_ns = k->end;
      e.submitted_ns = k->submitted;
      e.correlation = k->correlationId;
      e.graph_node = k->graphNodeId;
      e.graph_id = k->graphId;
      if (k->name != nullptr) e.name = k->name;
      e.grid = {k->gridX, k->gridY, k->gridZ};
      e.block = {k->blockX, k->blockY, k->blockZ};
      e.registers_per_thread = k->registersPerThread;
      e.static_shared_bytes = k->staticSharedMemory;
      e.dynamic_shared_bytes = k->dynamicSharedMemory;
    } else if (record->kind == CUPTI_ACTIVITY_KIND_MEMCPY) {
      const auto* m = reinterpret_cast<const CUpti_ActivityMemcpy6*>(record);
      if (m->graphNodeId == 0) continue;  // the program's own copies: not a launch's
      e = memory_node(*m, ExecutionKind::kMemcpy);
      e.copy_kind = copy_kind_name(m->copyKind);
    } else if (record->kind == CUPTI_ACTIVITY_KIND_MEMSET) {
      const auto* m = reinterpret_cast<const CUpti_ActivityMemset4*>(record);
      if (m->graphNodeId == 0) continue;
      e = memory_node(*m, ExecutionKind::kMemset);
    } else {
      continue;
    }
    activity.add(e);
  }
  std::size_t dropped = 0;
  if (cuptiActivityGetNumDroppedRecords(context, stream, &dropped) == CUPTI_SUCCESS && dropped > 0)
    activity.add_dropped(dropped);
  std::free(buffer);
}

}  // namespace

bool KernelActivity::enable(std::string* why) {
  auto failed = [why](const char* call, CUptiResult r) {
    const char* text = nullptr;
    if (cuptiGetResultString(r, &text) != CUPTI_SUCCESS || text == nullptr) text = "";
    *why = std::string(call) + " failed: " + text;
    return false;
  };
  // The submission timestamps are asked before kernel records are enabled (during cuInit).
  cuptiActivityEnableLatencyTimestamps(1);
  if (CUptiResult r = cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed);
      r != CUPTI_SUCCESS)
    return failed("cuptiActivityRegisterCallbacks", r);
  // Concurrent kernel records leave the program's kernels free to overlap (the plain kernel
  // kind would serialise every launch of the program).
  if (CUptiResult r = cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
      r != CUPTI_SUCCESS)
    return failed("cuptiActivityEnable(CONCURRENT_KERNEL)", r);
  // A graph's memcpy and memset nodes; without them those nodes have no row (not an error).
  cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMCPY);
  cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMSET);
  return true;
}

KernelActivity& KernelActivity::instance() {
  static KernelActivity* activity = new KernelActivity();  // never freed: used until exit
  return *activity;
}

std::uint64_t KernelActivity::now_ns() {
  std::uint64_t t = 0;
  cuptiGetTimestamp(&t);
  return t;
}

void KernelActivity::expect(std::uint32_t correlation) {
  std::lock_guard<std::mutex> lock(mutex_);
  expected_.insert(correlation);
}

void KernelActivity::flush() {
  cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
}

void KernelActivity::add(const KernelExecution& execution) {
  if (execution.name == kFlushL2Kernel || execution.name == kFlushIcacheKernel) return;
  std::lock_guard<std::mutex> lock(mutex_);
  if (expected_.count(execution.correlation) != 0) {
    by_correlation_[execution.correlation].push_back(execution);
    return;
  }
  unexpected_.push_back(execution);
  if (unexpected_.size() > kUnexpectedKept) unexpected_.pop_front();
}

std::optional<LaunchActivity> KernelActivity::take(std::uint32_t correlation,
                                                   const std::string& kernel,
                                                   std::uint64_t window_start_ns,
                                                   std::uint64_t window_end_ns) {
  std::lock_guard<std::mutex> lock(mutex_);
  expected_.erase(correlation);
  auto has_kernel = [](const LaunchActivity& a) {
    return std::any_of(a.executions.begin(), a.executions.end(), [](const KernelExecution& e) {
      return e.kind == ExecutionKind::kKernel && e.end_ns > e.start_ns;
    });
  };
  if (auto it = by_correlation_.find(correlation); it != by_correlation_.end()) {
    LaunchActivity own;
    for (const KernelExecution& e : it->second)
      if (belongs_to(e, kernel))
        own.executions.push_back(e);
      else if (kernel.empty() && e.kind == ExecutionKind::kKernel)
        own.replays.push_back(e);
    by_correlation_.erase(it);
    if (has_kernel(own)) return own;
  }
  LaunchActivity inside;
  inside.by_window = true;
  auto kept = std::remove_if(unexpected_.begin(), unexpected_.end(), [&](const KernelExecution& e) {
    const bool in =
        e.start_ns >= window_start_ns && e.end_ns <= window_end_ns && belongs_to(e, kernel);
    if (in) inside.executions.push_back(e);
    return in || e.end_ns < window_start_ns;  // older records can match no later launch
  });
  unexpected_.erase(kept, unexpected_.end());
  if (!has_kernel(inside)) return std::nullopt;
  return inside;
}

std::uint64_t KernelActivity::dropped() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return dropped_;
}

void KernelActivity::add_dropped(std::uint64_t count) {
  std::lock_guard<std::mutex> lock(mutex_);
  dropped_ += count;
}

bool belongs_to(const KernelExecution& e, const std::string& kernel) {
  if (kernel.empty()) return e.graph_node != 0;
  return e.kind == ExecutionKind::kKernel && e.name == kernel;
}

std::vector<KernelExecution> nodes_in_order(const LaunchActivity& activity) {
  // Per node: its shortest run with a duration (kernel replay's passes gave start = end on the
  // H200); a node seen only without one keeps that record.
  std::map<std::pair<std::uint64_t, std::string>, const KernelExecution*> shortest;
  for (const KernelExecution& e : activity.executions) {
    auto [it, inserted] = shortest.try_emplace({e.graph_node, e.name}, &e);
    const KernelExecution& kept = *it->second;
    const bool timed = e.end_ns > e.start_ns;
    const bool kept_timed = kept.end_ns > kept.start_ns;
    if (!inserted && timed && (!kept_timed || e.end_ns - e.start_ns < kept.end_ns - kept.start_ns))
      it->second = &e;
  }
  std::vector<KernelExecution> out;
  for (const auto& [key, e] : shortest) out.push_back(*e);
  std::stable_sort(out.begin(), out.end(), [](const KernelExecution& a, const KernelExecution& b) {
    return a.start_ns < b.start_ns;
  });
  return out;
}

LaunchGpuTime gpu_time_of(const LaunchActivity& activity) {
  LaunchGpuTime time;
  for (const KernelExecution& e : nodes_in_order(activity)) {
    if (e.end_ns <= e.start_ns) continue;
    if (time.nodes_start_ns == 0 || e.start_ns < time.nodes_start_ns)
      time.nodes_start_ns = e.start_ns;
    time.nodes_end_ns = std::max(time.nodes_end_ns, e.end_ns);
    if (e.kind != ExecutionKind::kKernel) continue;
    time.seconds += static_cast<double>(e.end_ns - e.start_ns) * 1e-9;
    time.seconds_from_submission +=
        e.submitted_ns > 0 && e.submitted_ns <= e.start_ns && e.submitted_ns != ~0ull
            ? static_cast<double>(e.end_ns - e.submitted_ns) * 1e-9
            : std::nan("");
    if (time.kernels == 0 || e.start_ns < time.first_start_ns) time.first_start_ns = e.start_ns;
    time.last_end_ns = std::max(time.last_end_ns, e.end_ns);
    ++time.kernels;
  }
  time.executions = static_cast<int>(activity.executions.size());
  time.by_window = activity.by_window;
  return time;
}

}  // namespace roofline::inject
