// The NVTX ranges open on each thread of the profiled program (push/pop ranges of any domain,
// as CUPTI's NVTX callbacks report them), kept in one process-wide table so that a thread can
// see another's: a CUDA graph node captured on a thread with no range open (PyTorch captures a
// compiled backward on autograd's own thread, while the thread that called backward() waits
// inside its range) takes the ranges of the one other thread that has some.
//
// Thread-safe; its mutex is a leaf of the library's lock order.
#pragma once

#include <cupti.h>

#include <string>

#include "generated_nvtx_meta.h"

namespace roofline::inject {

class NvtxRanges {
 public:
  // The NVTX callback `id` with its data: a push or a pop on the calling thread.
  static void on_callback(CUpti_CallbackId id, const CUpti_NvtxData* data);
  // The calling thread's open ranges, outermost first, joined with " / "; "" when none.
  static std::string current();
  // The calling thread's ranges; when it has none, those of the one other thread that has
  // some; "" when no thread, or several, have ranges open.
  static std::string current_or_only_other();
};

}  // namespace roofline::inject
