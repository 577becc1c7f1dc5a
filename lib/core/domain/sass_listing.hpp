// The SASS of a cubin as `nvdisasm -c` prints it, by function and offset: what names the
// instruction at a sampled PC. Pure text parsing; running nvdisasm is lib/gpu's.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

namespace roofline {

// function (mangled) -> byte offset -> instruction text without its trailing " ;"
// ("@!P0 BRA `(.L_x_3)", "HGMMA.64x128x16.F32 gdesc[UR4], RZ, !UPT").
using SassListing = std::map<std::string, std::map<std::uint64_t, std::string>>;

// Reads nvdisasm's listing: a function starts at its ".text.NAME:" label, each instruction
// line carries its offset as "/*0a40*/". Lines it does not recognise are skipped.
SassListing parse_sass_listing(std::string_view text);

// The mbarrier wait (Hopper's SYNCS.PHASECHK...TRYWAIT, what mbarrier.try_wait compiles to) that
// the instruction at `offset` of `function` is: itself, or a branch on the predicate such a wait
// set within the kMbarrierWaitReach instructions before it (the loop `SYNCS.PHASECHK.TRANS64.
// TRYWAIT P0, [UR10], R0` then `@!P0 BRA`, where the warp's stall lands on the branch). Empty
// when it is neither.
inline constexpr int kMbarrierWaitReach = 4;
std::string mbarrier_wait_of(const std::map<std::uint64_t, std::string>& function,
                             std::uint64_t offset);

}  // namespace roofline
