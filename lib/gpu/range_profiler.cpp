// The target half of CUPTI's Range Profiler (CUDA 13: cupti_range_profiler.h) behind
// RangeProfiler and KernelRangeProfiler, both on one ProfilerSession (cupti/profiler_session.hpp:
// open, device and chip checks, host object, config, teardown). The host half (MetricHost) is
// cupti/metric_host.cpp; counter-data images are cupti/counter_data_image.cpp. What CUDA 13.0's
// CUPTI taught us is written beside the code it shaped, in those files' headers.
//
// Target calls crash without a driver, so the runtime API is asked for a device first
// (require_device). Without libcuda linked, the current CUcontext comes from the runtime's
// driver entry points, so binaries built with this file still start on machines without a
// driver.
#include "lib/gpu/range_profiler.hpp"

#include <cuda.h>
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "lib/gpu/cupti/call.hpp"
#include "lib/gpu/cupti/counter_data_image.hpp"
#include "lib/gpu/cupti/profiler_session.hpp"

namespace roofline::gpu {
namespace {

using cupti::Collection;
using cupti::CounterDataImage;
using cupti::moved_from;
using cupti::ProfilerSession;

// Throws kNoDevice unless the runtime sees a device with this ordinal. Target calls crash
// without a driver, so this runs before any of them.
void require_device(int device) {
  int count = 0;
  const cudaError_t error = cudaGetDeviceCount(&count);
  if (error != cudaSuccess) {
    cudaGetLastError();
    throw ProfilerError(ProfilerErrorKind::kNoDevice,
                        std::string("no usable CUDA device: cudaGetDeviceCount: ") +
                            cudaGetErrorName(error) + ": " + cudaGetErrorString(error));
  }
  if (device < 0 || device >= count) {
    throw ProfilerError(ProfilerErrorKind::kNoDevice, "no CUDA device with ordinal " +
                                                          std::to_string(device) + " (" +
                                                          std::to_string(count) + " present)");
  }
}

}  // namespace

std::string device_chip_name(int device) {
  require_device(device);
  cupti::ProfilerInitLease lease;
  return cupti::chip_name_of(device);
}

std::string chip_name_of_loaded_device(int device) {
  cupti::ProfilerInitLease lease;
  return cupti::chip_name_of(device);
}

// =============================================================================================
// RangeProfiler

struct RangeProfiler::Impl {
  enum class State { kIdle, kInPass, kBetweenPasses, kAllSubmitted, kDecoded };

  void open(int device_ordinal, const std::vector<std::string>& metrics, int ranges) {
    session = std::make_unique<ProfilerSession>("RangeProfiler");
    if (ranges < 1) {
      throw ProfilerError(ProfilerErrorKind::kOther,
                          "max_ranges must be at least 1, got " + std::to_string(ranges));
    }
    device = device_ordinal;
    max_ranges = ranges;

    require_device(device);
    using CtxGetCurrent = CUresult (*)(CUcontext*);
    using CtxGetDevice = CUresult (*)(CUdevice*);
    CUcontext context = nullptr;
    CUdevice cu_device = 0;
    // The context current on this thread when it is the device's: a green context (`run --sms`)
    // is profiled where its launches run (CUPTI's range profiler takes the CUcontext that
    // cuCtxFromGreenCtx gives). cudaSetDevice would make the primary context current instead.
    int current = -1;
    if (cupti::driver_function<CtxGetCurrent>("cuCtxGetCurrent")(&context) != CUDA_SUCCESS ||
        context == nullptr || cudaGetDevice(&current) != cudaSuccess || current != device) {
      ROOFLINE_PROFILER_CUDA_CALL(cudaSetDevice(device));
      ROOFLINE_PROFILER_CUDA_CALL(cudaFree(nullptr));  // the primary context exists from here on
    }
    if (cupti::driver_function<CtxGetCurrent>("cuCtxGetCurrent")(&context) != CUDA_SUCCESS ||
        cupti::driver_function<CtxGetDevice>("cuCtxGetDevice")(&cu_device) != CUDA_SUCCESS ||
        context == nullptr) {
      throw ProfilerError(ProfilerErrorKind::kNoDevice,
                          "no current CUDA context on device " + std::to_string(device));
    }
    session->open(context, cu_device, device, metrics);
    image = session->image(static_cast<std::size_t>(max_ranges), Collection::kUserRanges);
    configure();
  }

  // Fresh counter data and config: before the first pass and before each reuse.
  void configure() {
    session->initialize(image);
    session->set_config(image);
    state = State::kIdle;
    passes_done = 0;
    ranges_in_pass = 0;
    ranges_first_pass = 0;
  }

  void require_state(bool ok, const char* call, const char* expected) const {
    if (!ok) {
      throw ProfilerError(ProfilerErrorKind::kOther, std::string("RangeProfiler::") + call +
                                                         " called out of order: " + expected);
    }
  }

  std::unique_ptr<ProfilerSession> session;
  int device = 0;
  int max_ranges = 0;
  CounterDataImage image;
  State state = State::kIdle;
  int passes_done = 0;
  std::size_t ranges_in_pass = 0;
  std::size_t ranges_first_pass = 0;
};

RangeProfiler::RangeProfiler(int device, const std::vector<std::string>& metrics, int max_ranges)
    : impl_(std::make_unique<Impl>()) {
  // On a throw, impl_ (a member already built) is destroyed with the half-built object.
  impl_->open(device, metrics, max_ranges);
}

RangeProfiler::~RangeProfiler() = default;
RangeProfiler::RangeProfiler(RangeProfiler&& other) noexcept = default;
RangeProfiler& RangeProfiler::operator=(RangeProfiler&& other) noexcept = default;

int RangeProfiler::num_passes() const {
  if (impl_ == nullptr) moved_from("RangeProfiler");
  return impl_->session->passes();
}

const std::string& RangeProfiler::chip() const {
  if (impl_ == nullptr) moved_from("RangeProfiler");
  return impl_->session->chip();
}

void RangeProfiler::begin_pass() {
  if (impl_ == nullptr) moved_from("RangeProfiler");
  Impl& s = *impl_;
  using State = Impl::State;
  if (s.state == State::kDecoded) s.configure();  // the next sweep reuses enable and config
  s.require_state(s.state == State::kIdle || s.state == State::kBetweenPasses, "begin_pass",
                  "after construction, after end_pass() returned false, or after "
                  "decode_and_evaluate()");
  s.session->start();
  s.state = State::kInPass;
  s.ranges_in_pass = 0;
}

void RangeProfiler::push_range(const std::string& name) {
  if (impl_ == nullptr) moved_from("RangeProfiler");
  Impl& s = *impl_;
  s.require_state(s.state == Impl::State::kInPass, "push_range", "between begin_pass and end_pass");
  s.require_state(!s.session->range_open(), "push_range",
                  "ranges do not nest: pop_range() the open range first");
  s.session->push_range(name);
  ++s.ranges_in_pass;
}

void RangeProfiler::pop_range() {
  if (impl_ == nullptr) moved_from("RangeProfiler");
  Impl& s = *impl_;
  s.require_state(s.state == Impl::State::kInPass && s.session->range_open(), "pop_range",
                  "after a push_range() in the same pass");
  s.session->pop_range();
}

bool RangeProfiler::end_pass() {
  if (impl_ == nullptr) moved_from("RangeProfiler");
  Impl& s = *impl_;
  s.require_state(s.state == Impl::State::kInPass && !s.session->range_open(), "end_pass",
                  "after begin_pass(), with every pushed range popped");
  const bool all = s.session->stop();
  ++s.passes_done;
  if (s.passes_done == 1) {
    s.ranges_first_pass = s.ranges_in_pass;
  } else if (s.ranges_in_pass != s.ranges_first_pass) {
    s.state = Impl::State::kBetweenPasses;
    throw ProfilerError(ProfilerErrorKind::kOther,
                        "pass " + std::to_string(s.passes_done) + " pushed " +
                            std::to_string(s.ranges_in_pass) + " ranges, the first pass " +
                            std::to_string(s.ranges_first_pass) +
                            ": every pass must replay the same ranges");
  }
  s.state = all ? Impl::State::kAllSubmitted : Impl::State::kBetweenPasses;
  if (!all && s.passes_done >= s.session->passes() + 1) {
    throw ProfilerError(ProfilerErrorKind::kOther,
                        "CUPTI still asks for passes after " + std::to_string(s.passes_done) +
                            " of the " + std::to_string(s.session->passes()) + " the config needs");
  }
  return all;
}

std::vector<RangeValues> RangeProfiler::decode_and_evaluate() {
  if (impl_ == nullptr) moved_from("RangeProfiler");
  Impl& s = *impl_;
  s.require_state(s.state == Impl::State::kAllSubmitted, "decode_and_evaluate",
                  "after end_pass() returned true");
  const std::size_t dropped = s.session->decode();
  s.state = Impl::State::kDecoded;
  if (dropped > 0) {
    throw ProfilerError(ProfilerErrorKind::kOther,
                        std::to_string(dropped) + " of " + std::to_string(s.ranges_first_pass) +
                            " ranges were dropped: max_ranges (" + std::to_string(s.max_ranges) +
                            ") is too small for one pass");
  }
  return s.session->evaluate(s.image);
}

const std::vector<std::uint8_t>& RangeProfiler::counter_data_image() const {
  if (impl_ == nullptr) moved_from("RangeProfiler");
  return impl_->image.data;
}

// =============================================================================================
// KernelRangeProfiler

namespace {
// Ranges one start() can hold: a kernel launch is one range (kernel replay). The counter-data
// image is sized for them, and CUPTI initialises the whole image before each start (about
// 150 KB a range with the default set: 512 ranges took ~12 ms a launch on the H200's host, more
// than the evaluation), so each kind of pass has an image of its own, made on first use.
constexpr std::size_t kRangesPerKernelLaunch = 4;
}  // namespace

struct KernelRangeProfiler::Impl {
  void open(CUcontext context, int cu_device, const std::vector<std::string>& metrics) {
    session = std::make_unique<ProfilerSession>("range profiler");
    session->open(context, static_cast<CUdevice>(cu_device), cu_device, metrics);
    kernel_image = make_image(kRangesPerKernelLaunch, Collection::kKernelReplay);
    use(kernel_image);
  }

  // An initialised image for `ranges` ranges, collected as `collection` says.
  CounterDataImage make_image(std::size_t ranges, Collection collection) {
    CounterDataImage image = session->image(ranges, collection);
    session->initialize(image);
    return image;
  }

  // An image of `collection` with room for `ranges` in `slot`, made anew when it has another
  // size, made current (SetConfig) either way: every user-replay pass needs SetConfig before
  // its start (see begin_batch).
  void use_sized(std::unique_ptr<CounterDataImage>& slot, std::size_t ranges,
                 Collection collection) {
    if (slot == nullptr || slot->ranges != ranges) {
      auto image = std::make_unique<CounterDataImage>(make_image(ranges, collection));
      if (current == slot.get()) current = nullptr;
      slot = std::move(image);
    }
    use(*slot);
  }

  // Makes `image` (initialised) the one the next start() collects into, in its collection
  // mode.
  void use(CounterDataImage& image) {
    session->set_config(image);
    current = &image;
  }

  void initialize(CounterDataImage& image) { session->initialize(image); }

  void require_idle(const char* call) const {
    if (session->started() || stopped || decoded) {
      throw ProfilerError(ProfilerErrorKind::kOther,
                          std::string("KernelRangeProfiler::") + call +
                              " called before the last pass's stop, decode and evaluate");
    }
  }

  // User replay cannot replay another program's work: its passes must be one.
  void require_one_pass(const std::string& what) const {
    if (session->passes() != 1) {
      throw ProfilerError(ProfilerErrorKind::kOther,
                          what + " needs a one-pass counter set; this one needs " +
                              std::to_string(session->passes()) + " passes (use kernel replay)");
    }
  }

  std::unique_ptr<ProfilerSession> session;
  CounterDataImage kernel_image;
  std::unique_ptr<CounterDataImage> batch_image;  // made for the first batch
  CounterDataImage* current = nullptr;            // the image SetConfig was last given
  bool batch = false;                             // the started pass is a batch (begin_batch)
  std::size_t batch_pushed = 0;                   // ranges pushed in the open batch
  bool stopped = false;                           // stopped, not decoded yet
  bool decoded = false;                           // decoded, not evaluated yet
};

KernelRangeProfiler::KernelRangeProfiler(void* context, int device,
                                         const std::vector<std::string>& metrics)
    : impl_(std::make_unique<Impl>()) {
  // On a throw, impl_ (a member already built) is destroyed with the half-built object.
  impl_->open(static_cast<CUcontext>(context), device, metrics);
}

KernelRangeProfiler::~KernelRangeProfiler() = default;
KernelRangeProfiler::KernelRangeProfiler(KernelRangeProfiler&& other) noexcept = default;
KernelRangeProfiler& KernelRangeProfiler::operator=(KernelRangeProfiler&& other) noexcept = default;

int KernelRangeProfiler::num_passes() const {
  if (impl_ == nullptr) moved_from("KernelRangeProfiler");
  return impl_->session->passes();
}

const std::string& KernelRangeProfiler::chip() const {
  if (impl_ == nullptr) moved_from("KernelRangeProfiler");
  return impl_->session->chip();
}

void KernelRangeProfiler::start() {
  if (impl_ == nullptr) moved_from("KernelRangeProfiler");
  Impl& s = *impl_;
  s.require_idle("start");
  if (s.current != &s.kernel_image) s.use(s.kernel_image);
  s.session->start();
  s.batch = false;
}

void KernelRangeProfiler::begin_batch(std::size_t ranges) {
  if (impl_ == nullptr) moved_from("KernelRangeProfiler");
  Impl& s = *impl_;
  s.require_idle("begin_batch");
  s.require_one_pass("a batch");
  if (ranges < 1)
    throw ProfilerError(ProfilerErrorKind::kOther, "a batch needs room for at least one range");
  // SetConfig before every batch, as RangeProfiler does before every sweep of user replay:
  // with SetConfig only before the first, every later batch came back on the H200 with its
  // ranges named but no values (a session whose passes were all submitted seems to collect
  // nothing more until it is configured again).
  s.use_sized(s.batch_image, ranges, Collection::kUserRanges);
  s.session->start();
  s.batch = true;
  s.batch_pushed = 0;
}

bool KernelRangeProfiler::batch_open() const {
  if (impl_ == nullptr) moved_from("KernelRangeProfiler");
  return impl_->session->started() && impl_->batch;
}

bool KernelRangeProfiler::batch_full() const {
  if (impl_ == nullptr) moved_from("KernelRangeProfiler");
  const Impl& s = *impl_;
  return s.session->started() && s.batch && s.batch_pushed >= s.batch_image->ranges;
}

void KernelRangeProfiler::push_range(const std::string& name) {
  if (impl_ == nullptr) moved_from("KernelRangeProfiler");
  Impl& s = *impl_;
  if (!s.session->started() || !s.batch || s.session->range_open() ||
      s.batch_pushed >= s.batch_image->ranges) {
    throw ProfilerError(ProfilerErrorKind::kOther,
                        "KernelRangeProfiler::push_range called outside an open batch with "
                        "room left, or inside another range");
  }
  s.session->push_range(name);
  ++s.batch_pushed;
}

void KernelRangeProfiler::pop_range() {
  if (impl_ == nullptr) moved_from("KernelRangeProfiler");
  Impl& s = *impl_;
  if (!s.session->range_open()) {
    throw ProfilerError(ProfilerErrorKind::kOther,
                        "KernelRangeProfiler::pop_range called without a pushed range");
  }
  s.session->pop_range();
}

void KernelRangeProfiler::stop() {
  if (impl_ == nullptr) moved_from("KernelRangeProfiler");
  Impl& s = *impl_;
  if (!s.session->started()) {
    throw ProfilerError(ProfilerErrorKind::kOther,
                        "KernelRangeProfiler::stop called without start");
  }
  const bool all = s.session->stop();  // pops the range of a launch whose exit never came
  s.stopped = true;
  if (s.batch && !all) {
    s.stopped = false;
    s.initialize(*s.current);
    throw ProfilerError(ProfilerErrorKind::kOther,
                        "CUPTI asks for another pass of a one-pass batch: its ranges are lost");
  }
}

void KernelRangeProfiler::decode() {
  if (impl_ == nullptr) moved_from("KernelRangeProfiler");
  Impl& s = *impl_;
  if (!s.stopped) {
    throw ProfilerError(ProfilerErrorKind::kOther,
                        "KernelRangeProfiler::decode called without a stop before it");
  }
  s.stopped = false;
  if (const std::size_t dropped = s.session->decode(); dropped > 0) {
    s.initialize(*s.current);
    throw ProfilerError(
        ProfilerErrorKind::kOther,
        std::to_string(dropped) + " kernel ranges were dropped: more than " +
            std::to_string(s.current->ranges) +
            (s.current->collection == Collection::kUserRanges ? " ranges in one batch"
                                                              : " kernels in one launch"));
  }
  s.decoded = true;
}

std::vector<RangeValues> KernelRangeProfiler::evaluate() {
  if (impl_ == nullptr) moved_from("KernelRangeProfiler");
  Impl& s = *impl_;
  if (!s.decoded) {
    throw ProfilerError(ProfilerErrorKind::kOther,
                        "KernelRangeProfiler::evaluate called without a decode before it");
  }
  s.decoded = false;
  std::vector<RangeValues> values;
  try {
    values = s.session->evaluate(*s.current);
  } catch (...) {
    s.initialize(*s.current);  // the next start() begins with an empty image either way
    throw;
  }
  s.initialize(*s.current);
  return values;
}

}  // namespace roofline::gpu
