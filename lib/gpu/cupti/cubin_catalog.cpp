#include "lib/gpu/cupti/cubin_catalog.hpp"

#include <cupti.h>
#include <cupti_pcsampling.h>

#include <cstdlib>

#include "lib/gpu/cupti/call.hpp"

namespace roofline::gpu::cupti {
namespace {

void CUPTIAPI on_callback(void* user, CUpti_CallbackDomain domain, CUpti_CallbackId id,
                          const void* data) {
  if (domain != CUPTI_CB_DOMAIN_RESOURCE || id != CUPTI_CBID_RESOURCE_MODULE_LOADED) return;
  const auto* resource = static_cast<const CUpti_ResourceData*>(data);
  const auto* module = static_cast<const CUpti_ModuleResourceData*>(resource->resourceDescriptor);
  if (module == nullptr || module->pCubin == nullptr || module->cubinSize == 0) return;
  static_cast<CubinCatalog*>(user)->add(module->pCubin, module->cubinSize);
}

}  // namespace

CubinCatalog::CubinCatalog() {
  CUpti_SubscriberHandle handle = nullptr;
  ROOFLINE_CUPTI_CALL(cuptiSubscribe(&handle, on_callback, this));
  subscriber_ = handle;
  const CUptiResult enabled =
      cuptiEnableCallback(1, handle, CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_MODULE_LOADED);
  if (enabled != CUPTI_SUCCESS) {
    cuptiUnsubscribe(handle);
    subscriber_ = nullptr;
    check_cupti(enabled, "cuptiEnableCallback(MODULE_LOADED)", __FILE__, __LINE__);
  }
}

CubinCatalog::~CubinCatalog() {
  if (subscriber_ != nullptr) cuptiUnsubscribe(static_cast<CUpti_SubscriberHandle>(subscriber_));
}

std::optional<std::uint64_t> cubin_crc(const char* cubin, std::size_t size) {
  CUpti_GetCubinCrcParams params{};
  params.size = CUpti_GetCubinCrcParamsSize;
  params.cubin = cubin;
  params.cubinSize = size;
  if (cuptiGetCubinCrc(&params) != CUPTI_SUCCESS) return std::nullopt;
  return params.cubinCrc;
}

std::optional<std::uint64_t> CubinCatalog::add(const char* cubin, std::size_t size) {
  const std::optional<std::uint64_t> crc = cubin_crc(cubin, size);
  if (!crc) return std::nullopt;  // that module stays without lines
  const std::lock_guard<std::mutex> lock(mutex_);
  cubins_.try_emplace(*crc, cubin, size);
  return crc;
}

const std::string* CubinCatalog::cubin(std::uint64_t crc) const {
  const std::lock_guard<std::mutex> lock(mutex_);
  const auto it = cubins_.find(crc);
  return it == cubins_.end() ? nullptr : &it->second;
}

SourceLocation CubinCatalog::source(std::uint64_t crc, const std::string& function,
                                    std::uint64_t pc_offset) const {
  const std::string* bytes = cubin(crc);
  if (bytes == nullptr) return {};
  return source_in_cubin(*bytes, function, pc_offset);
}

SourceLocation source_in_cubin(const std::string& cubin, const std::string& function,
                               std::uint64_t pc_offset) {
  CUpti_GetSassToSourceCorrelationParams params{};
  params.size = CUpti_GetSassToSourceCorrelationParamsSize;
  params.cubin = cubin.data();
  params.cubinSize = cubin.size();
  params.functionName = function.c_str();
  params.pcOffset = pc_offset;
  // Fails for code without line information: no location, not an error.
  if (cuptiGetSassToSourceCorrelation(&params) != CUPTI_SUCCESS) return {};
  SourceLocation out;
  if (params.fileName != nullptr) {
    const std::string dir = params.dirName != nullptr ? params.dirName : "";
    const std::string file = params.fileName;
    out.file = dir.empty() || file.front() == '/' ? file : dir + "/" + file;
    out.line = static_cast<int>(params.lineNumber);
  }
  std::free(params.fileName);  // CUPTI allocates both; the caller frees them
  std::free(params.dirName);
  return out;
}

}  // namespace roofline::gpu::cupti
