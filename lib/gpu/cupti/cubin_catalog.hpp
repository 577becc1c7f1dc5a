// The cubins the process loads, kept from CUPTI's module-load callback, by the CRC that PC
// sampling records name (cuptiGetCubinCrc): what maps a sampled PC to its source line
// (cuptiGetSassToSourceCorrelation, for code built with line information) and to its SASS.
//
// By default it subscribes to CUPTI's callbacks, of which a process has one subscriber:
// construct it before the first kernel launch (modules load lazily, at a function's first use),
// and expect ProfilerError(kMultipleSubscribers) under another CUPTI tool. Owner of the
// subscription; not copyable. A process that has its own subscriber (the injection library of
// `profile`) constructs it with NoSubscription and hands it each module from its own callback.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>

namespace roofline::gpu::cupti {

struct SourceLocation {
  std::string file;  // directory and file, as the line table names them; empty when none
  int line = 0;
};

// The CRC that PC sampling records name a module by (cuptiGetCubinCrc); nullopt when CUPTI
// cannot read the cubin. Host-only: no GPU needed.
std::optional<std::uint64_t> cubin_crc(const char* cubin, std::size_t size);

// Where the PC of `function` (mangled) at `pc_offset` of `cubin` came from
// (cuptiGetSassToSourceCorrelation, host-only); empty without line information.
SourceLocation source_in_cubin(const std::string& cubin, const std::string& function,
                               std::uint64_t pc_offset);

class CubinCatalog {
 public:
  struct NoSubscription {};
  CubinCatalog();
  explicit CubinCatalog(NoSubscription) {}
  ~CubinCatalog();
  CubinCatalog(const CubinCatalog&) = delete;
  CubinCatalog& operator=(const CubinCatalog&) = delete;

  // The cubin of that CRC; nullptr when no module with it was loaded since construction.
  const std::string* cubin(std::uint64_t crc) const;
  // Where the PC of `function` (mangled) at `pc_offset` came from; empty without line
  // information or without the cubin.
  SourceLocation source(std::uint64_t crc, const std::string& function,
                        std::uint64_t pc_offset) const;

  // The module-load callback's entry (CUPTI calls it on the loading thread). Returns the
  // module's CRC (nullopt: CUPTI could not read it, and the module stays without lines).
  std::optional<std::uint64_t> add(const char* cubin, std::size_t size);

 private:
  void* subscriber_ = nullptr;  // CUpti_SubscriberHandle
  mutable std::mutex mutex_;
  std::map<std::uint64_t, std::string> cubins_;
};

}  // namespace roofline::gpu::cupti
