// The SASS of a cubin, from the CUDA toolkit's nvdisasm when one is installed (beside the nvcc
// this tool was built with, under $CUDA_HOME, or on PATH): what names the instruction at a
// sampled PC. Without nvdisasm, stall rows keep offsets and source lines and say so. Listings
// are kept between runs (sass_cache.hpp).
#pragma once

#include <string>

#include "lib/core/domain/sass_listing.hpp"

namespace roofline::gpu {

// The listing of `function` (its mangled name) in `cubin`, or of every function when `function`
// is empty or nvdisasm cannot restrict itself to it; empty, with `why` set, when nvdisasm is
// missing or fails on the cubin.
SassListing disassemble_cubin(const std::string& cubin, const std::string& function,
                              std::string* why);

}  // namespace roofline::gpu
