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
  for (PcSample& pc : pcs) pc.sass = instruction(pc.cubin_crc, pc.function, pc.pc_offset);
}

std::string StallSources::instruction(std::uint64_t crc, const std::string& function,
                                      std::uint64_t offset) {
  const auto it = listings_.find({crc, function});
  if (it == listings_.end() || !it->second.valid()) return "";
  const Disassembly& done = it->second.get();
  if (!done.why.empty() && why_.empty()) why_ = done.why;
  const auto f = done.listing.find(function);
  if (f == done.listing.end()) return "";
  const auto i = f->second.find(offset);
  return i == f->second.end() ? "" : i->second;
}

}  // namespace roofline::gpu
