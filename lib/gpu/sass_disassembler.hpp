// The SASS of a cubin, from the CUDA toolkit's nvdisasm when one is installed (beside the nvcc
// this tool was built with, under $CUDA_HOME, or on PATH): what names the instruction at a
// sampled PC. Without nvdisasm, stall rows keep offsets and source lines and say so.
#pragma once

#include <string>

#include "lib/core/domain/sass_listing.hpp"

namespace roofline::gpu {

// The listing of every function in `cubin`; empty, with `why` set, when nvdisasm is missing or
// fails on it.
SassListing disassemble_cubin(const std::string& cubin, std::string* why);

}  // namespace roofline::gpu
