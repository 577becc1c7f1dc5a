#include "lib/inject/nvtx_ranges.hpp"

#include <cupti.h>

#include <mutex>
#include <set>
#include <vector>

namespace roofline::inject {
namespace {

struct Stack {
  std::vector<std::string> ranges;
};

std::mutex& table_mutex() {
  static std::mutex* mutex = new std::mutex;  // never destroyed: threads may end after exit
  return *mutex;
}

std::set<const Stack*>& table() {
  static auto* stacks = new std::set<const Stack*>;
  return *stacks;
}

// The calling thread's stack, in the table from its first range to the thread's end.
struct Registered {
  Stack stack;
  Registered() {
    std::lock_guard<std::mutex> lock(table_mutex());
    table().insert(&stack);
  }
  ~Registered() {
    std::lock_guard<std::mutex> lock(table_mutex());
    table().erase(&stack);
  }
};

Stack& own() {
  thread_local Registered registered;
  return registered.stack;
}

std::string joined(const std::vector<std::string>& ranges) {
  std::string out;
  for (std::size_t i = 0; i < ranges.size(); ++i) out += (i == 0 ? "" : " / ") + ranges[i];
  return out;
}

std::string ascii(const nvtxEventAttributes_t* a) {
  if (a != nullptr && a->messageType == NVTX_MESSAGE_TYPE_ASCII && a->message.ascii != nullptr)
    return a->message.ascii;
  return "";
}

}  // namespace

void NvtxRanges::on_callback(CUpti_CallbackId id, const CUpti_NvtxData* data) {
  std::string pushed;
  switch (id) {
    case CUPTI_CBID_NVTX_nvtxRangePushA: {
      const auto* p = static_cast<const nvtxRangePushA_params*>(data->functionParams);
      pushed = p->message != nullptr ? p->message : "";
      break;
    }
    case CUPTI_CBID_NVTX_nvtxRangePushEx:
      pushed = ascii(static_cast<const nvtxRangePushEx_params*>(data->functionParams)->eventAttrib);
      break;
    case CUPTI_CBID_NVTX_nvtxDomainRangePushEx:
      pushed = ascii(
          static_cast<const nvtxDomainRangePushEx_params*>(data->functionParams)->core.eventAttrib);
      break;
    case CUPTI_CBID_NVTX_nvtxRangePop:
    case CUPTI_CBID_NVTX_nvtxDomainRangePop: {
      Stack& stack = own();
      std::lock_guard<std::mutex> lock(table_mutex());
      if (!stack.ranges.empty()) stack.ranges.pop_back();
      return;
    }
    default:
      return;
  }
  Stack& stack = own();
  std::lock_guard<std::mutex> lock(table_mutex());
  stack.ranges.push_back(std::move(pushed));
}

std::string NvtxRanges::current() {
  Stack& stack = own();
  std::lock_guard<std::mutex> lock(table_mutex());
  return joined(stack.ranges);
}

std::string NvtxRanges::current_or_only_other() {
  Stack& stack = own();
  std::lock_guard<std::mutex> lock(table_mutex());
  if (!stack.ranges.empty()) return joined(stack.ranges);
  const Stack* only = nullptr;
  for (const Stack* other : table()) {
    if (other == &stack || other->ranges.empty()) continue;
    if (only != nullptr) return "";  // several threads: whose work this is is not known
    only = other;
  }
  return only != nullptr ? joined(only->ranges) : "";
}

}  // namespace roofline::inject
