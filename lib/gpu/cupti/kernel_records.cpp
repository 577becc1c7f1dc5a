#include "lib/gpu/cupti/kernel_records.hpp"

#include <cupti.h>

#include <algorithm>
#include <cstdlib>
#include <mutex>
#include <stdexcept>

#include "lib/core/domain/launch.hpp"
#include "lib/gpu/cupti/call.hpp"

namespace roofline::gpu {
namespace {

// 1 MiB holds about 5,000 kernel records: far more than one launch of a point runs.
constexpr std::size_t kBufferBytes = std::size_t{1} << 20;
constexpr std::size_t kBufferAlign = 8;

// What the buffer callbacks (called on CUPTI's threads) hand over.
struct Store {
  std::mutex mutex;
  std::vector<KernelRecord> records;
  std::size_t dropped = 0;
  bool exists = false;  // a KernelRecords is alive
};

Store& store() {
  static Store* s = new Store();  // never freed: CUPTI may call back until the process ends
  return *s;
}

void CUPTIAPI buffer_requested(std::uint8_t** buffer, std::size_t* size, std::size_t* max_records) {
  *buffer = static_cast<std::uint8_t*>(std::aligned_alloc(kBufferAlign, kBufferBytes));
  *size = *buffer != nullptr ? kBufferBytes : 0;
  *max_records = 0;  // as many as fit
}

void CUPTIAPI buffer_completed(CUcontext context, std::uint32_t stream, std::uint8_t* buffer,
                               std::size_t, std::size_t valid) {
  std::vector<KernelRecord> read;
  CUpti_Activity* record = nullptr;
  while (cuptiActivityGetNextRecord(buffer, valid, &record) == CUPTI_SUCCESS) {
    if (record->kind != CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL &&
        record->kind != CUPTI_ACTIVITY_KIND_KERNEL)
      continue;
    const auto* k = reinterpret_cast<const CUpti_ActivityKernel10*>(record);
    KernelRecord r;
    r.name = demangle(k->name);
    r.grid = {k->gridX, k->gridY, k->gridZ};
    r.block = {k->blockX, k->blockY, k->blockZ};
    r.registers_per_thread = k->registersPerThread;
    r.shared_bytes = static_cast<std::int64_t>(k->staticSharedMemory) +
                     static_cast<std::int64_t>(k->dynamicSharedMemory);
    r.start_ns = k->start;
    r.end_ns = std::max(k->start, k->end);
    read.push_back(std::move(r));
  }
  std::size_t dropped = 0;
  cuptiActivityGetNumDroppedRecords(context, stream, &dropped);
  std::free(buffer);
  Store& s = store();
  const std::lock_guard<std::mutex> lock(s.mutex);
  s.dropped += dropped;
  s.records.insert(s.records.end(), std::make_move_iterator(read.begin()),
                   std::make_move_iterator(read.end()));
}

}  // namespace

KernelRecords::KernelRecords() {
  Store& s = store();
  {
    const std::lock_guard<std::mutex> lock(s.mutex);
    if (s.exists) throw std::runtime_error("kernel activity records are already being taken");
    s.exists = true;
    s.records.clear();
    s.dropped = 0;
  }
  try {
    static const CUptiResult registered =
        cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed);
    cupti::check_cupti(registered, "cuptiActivityRegisterCallbacks", __FILE__, __LINE__);
    // Concurrent kernel records leave kernels free to overlap (the plain kernel kind would
    // serialise them).
    ROOFLINE_CUPTI_CALL(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
  } catch (...) {
    const std::lock_guard<std::mutex> lock(s.mutex);
    s.exists = false;
    throw;
  }
}

KernelRecords::~KernelRecords() {
  cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  Store& s = store();
  const std::lock_guard<std::mutex> lock(s.mutex);
  s.records.clear();
  s.exists = false;
}

std::vector<KernelRecord> KernelRecords::take() {
  ROOFLINE_CUPTI_CALL(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED));
  Store& s = store();
  std::vector<KernelRecord> out;
  {
    const std::lock_guard<std::mutex> lock(s.mutex);
    if (s.dropped > 0) {
      const std::size_t dropped = s.dropped;
      s.dropped = 0;
      s.records.clear();
      throw std::runtime_error("CUPTI dropped " + std::to_string(dropped) +
                               " kernel activity records");
    }
    out.swap(s.records);
  }
  std::sort(out.begin(), out.end(),
            [](const KernelRecord& a, const KernelRecord& b) { return a.start_ns < b.start_ns; });
  return out;
}

}  // namespace roofline::gpu
