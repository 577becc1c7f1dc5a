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

}  // namespace roofline
