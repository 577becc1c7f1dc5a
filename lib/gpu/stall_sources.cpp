#include "lib/gpu/stall_sources.hpp"

#include "lib/core/base/stopwatch.hpp"
#include "lib/gpu/cupti/cubin_catalog.hpp"
#include "lib/gpu/sass_disassembler.hpp"

namespace roofline::gpu {

StallSources::StallSources(CubinLookup lookup) : lookup_(std::move(lookup)) {}

// Waits for the nvdisasm runs still going (a future of std::async does, too).
StallSources::~StallSources() = default;

void StallSources::request(const std::vector<PcSample>& pcs) {
  for (const PcSample& pc : pcs) {
    auto [it, added] = listings_.try_emplace({pc.cubin_crc, pc.function});
    if (!added) continue;
    const std::string* cubin = lookup_(pc.cubin_crc);
    if (cubin == nullptr) continue;  // no future: no listing
    it->second = std::async(std::launch::async, [bytes = *cubin, function = pc.function] {
                   Disassembly out;
                   out.listing = disassemble_cubin(bytes, function, &out.why);
                   return out;
                 }).share();
  }
}

void StallSources::fill(std::vector<PcSample>& pcs) {
  {
    const Stopwatch watch(source_s_);
    for (PcSample& pc : pcs)
      if (const std::string* cubin = lookup_(pc.cubin_crc); cubin != nullptr) {
        const cupti::SourceLocation at = cupti::source_in_cubin(*cubin, pc.function, pc.pc_offset);
        pc.file = at.file;
        pc.line = at.line;
      }
  }
  const Stopwatch watch(sass_s_);
  for (PcSample& pc : pcs) {
    const auto* listing = function_listing(pc.cubin_crc, pc.function);
    if (listing == nullptr) continue;
    if (const auto i = listing->find(pc.pc_offset); i != listing->end()) pc.sass = i->second;
    pc.waits_on = mbarrier_wait_of(*listing, pc.pc_offset);
  }
}

const std::map<std::uint64_t, std::string>* StallSources::function_listing(
    std::uint64_t crc, const std::string& function) {
  const auto it = listings_.find({crc, function});
  if (it == listings_.end() || !it->second.valid()) return nullptr;
  const Disassembly& done = it->second.get();
  if (!done.why.empty() && why_.empty()) why_ = done.why;
  const auto f = done.listing.find(function);
  return f == done.listing.end() ? nullptr : &f->second;
}

}  // namespace roofline::gpu
