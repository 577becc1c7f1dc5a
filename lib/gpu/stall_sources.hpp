// What names a sampled PC: its SASS instruction (nvdisasm, sass_disassembler.hpp) and its
// source line (CUPTI's SASS-to-source correlation, cubin_catalog.hpp), from the cubin of its
// module. Used by the stall pass of `run` (cubins from the process's own catalogue) and by
// `profile --stalls` (cubins the injected process saved, read after the program exited), so
// that both name instructions and lines the same way.
//
// Each function's SASS is disassembled once, in the background: nvdisasm runs (one process per
// function, several at once) as soon as a function is requested, and fill() waits for it.
#pragma once

#include <cstdint>
#include <functional>
#include <future>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "lib/core/domain/sass_listing.hpp"
#include "lib/core/domain/stalls.hpp"

namespace roofline::gpu {

class StallSources {
 public:
  // The cubin of a module by its CRC; nullptr when it is not known. Called on the thread that
  // calls request() and fill(); the bytes must outlive the StallSources.
  using CubinLookup = std::function<const std::string*(std::uint64_t crc)>;
  explicit StallSources(CubinLookup lookup);
  ~StallSources();
  StallSources(const StallSources&) = delete;
  StallSources& operator=(const StallSources&) = delete;

  // Starts disassembling the functions `pcs` name, unless under way or done.
  void request(const std::vector<PcSample>& pcs);
  // Each PC's source file and line (when its cubin has line information) and, once nvdisasm is
  // done with its function, its instruction ("" when unknown) and the mbarrier wait it is or
  // branches on (mbarrier_wait_of).
  void fill(std::vector<PcSample>& pcs);
  // Why instructions are missing (no nvdisasm, a failure); empty when none is.
  const std::string& why() const { return why_; }
  // Seconds spent in fill() on source lines and on waiting for SASS.
  double source_seconds() const { return source_s_; }
  double sass_seconds() const { return sass_s_; }

 private:
  struct Disassembly {
    SassListing listing;
    std::string why;
  };
  // The function's instructions by offset; nullptr when they are not known.
  const std::map<std::uint64_t, std::string>* function_listing(std::uint64_t crc,
                                                               const std::string& function);

  CubinLookup lookup_;
  std::map<std::pair<std::uint64_t, std::string>, std::shared_future<Disassembly>> listings_;
  std::string why_;
  double source_s_ = 0, sass_s_ = 0;
};

}  // namespace roofline::gpu
