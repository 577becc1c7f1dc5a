#include "lib/inject/checkpoint.hpp"

#include <cupti.h>
#include <cupti_checkpoint.h>
#include <dlfcn.h>

#include <stdexcept>

namespace roofline::inject {
namespace {

using NV::Cupti::Checkpoint::CUpti_Checkpoint;
using Call = CUptiResult (*)(CUpti_Checkpoint*);

// Device memory the copy leaves free (MB): the program's own allocations must not fail for
// the copy's sake while it lives; beyond it the copy goes to pinned host memory.
constexpr std::size_t kReserveDeviceMB = 1024;

struct Api {
  Call save = nullptr;
  Call restore = nullptr;
  Call free = nullptr;
  std::string missing;
};

// libcheckpoint from the directory of the libcupti this library uses.
const Api& api() {
  static const Api loaded = [] {
    Api a;
    Dl_info info{};
    std::string path = "libcheckpoint.so";
    if (dladdr(reinterpret_cast<void*>(&cuptiSubscribe), &info) != 0 && info.dli_fname != nullptr) {
      const std::string cupti = info.dli_fname;
      const auto slash = cupti.rfind('/');
      if (slash != std::string::npos) path = cupti.substr(0, slash + 1) + path;
    }
    void* library = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (library == nullptr) library = dlopen("libcheckpoint.so", RTLD_NOW | RTLD_LOCAL);
    if (library == nullptr) {
      a.missing = "CUPTI's checkpoint library (libcheckpoint.so) was not found beside libcupti";
      return a;
    }
    a.save = reinterpret_cast<Call>(dlsym(library, "cuptiCheckpointSave"));
    a.restore = reinterpret_cast<Call>(dlsym(library, "cuptiCheckpointRestore"));
    a.free = reinterpret_cast<Call>(dlsym(library, "cuptiCheckpointFree"));
    if (a.save == nullptr || a.restore == nullptr || a.free == nullptr)
      a.missing = "CUPTI's checkpoint library lacks cuptiCheckpointSave/Restore/Free";
    return a;
  }();
  return loaded;
}

std::string failure(const char* call, CUptiResult result) {
  const char* text = nullptr;
  if (cuptiGetResultString(result, &text) != CUPTI_SUCCESS || text == nullptr) text = "";
  return std::string(call) + " failed: " + text + " (" + std::to_string(int(result)) + ")";
}

}  // namespace

struct Checkpoint::Handle {
  CUpti_Checkpoint cp{};
};

Checkpoint::Checkpoint(CUcontext context) : handle_(std::make_unique<Handle>()) {
  const Api& a = api();
  if (!a.missing.empty()) throw std::runtime_error(a.missing);
  CUpti_Checkpoint& cp = handle_->cp;
  cp.structSize = CUpti_Checkpoint_STRUCT_SIZE;
  cp.ctx = context;
  cp.reserveDeviceMB = kReserveDeviceMB;
  cp.reserveHostMB = 0;
  cp.allowOverwrite = 1;
  cp.optimizations = 0;
  cp.pPriv = nullptr;
  if (const CUptiResult r = a.save(&cp); r != CUPTI_SUCCESS) {
    a.free(&cp);
    handle_.reset();
    throw std::runtime_error(failure("cuptiCheckpointSave", r));
  }
}

Checkpoint::~Checkpoint() {
  if (handle_) api().free(&handle_->cp);
}

void Checkpoint::save() {
  if (const CUptiResult r = api().save(&handle_->cp); r != CUPTI_SUCCESS)
    throw std::runtime_error(failure("cuptiCheckpointSave", r));
}

void Checkpoint::restore() {
  if (const CUptiResult r = api().restore(&handle_->cp); r != CUPTI_SUCCESS)
    throw std::runtime_error(failure("cuptiCheckpointRestore", r));
}

}  // namespace roofline::inject
