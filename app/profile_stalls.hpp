// `profile --stalls`, after the program exited: each sampled PC named by its SASS instruction and
// source line, from the cubins the injected processes saved into the record directory
// (cubin_file_name), through the stall pass's own resolver (lib/gpu/stall_sources.hpp), so that
// the program never waits for nvdisasm. A build without CUDA has neither nvdisasm's caller nor
// CUPTI's line table: its records keep offsets and say so.
#pragma once

#include <filesystem>
#include <vector>

#include "lib/profile/profile_protocol.hpp"

namespace roofline::app {

// Fills the SASS, file and line of every PC of `processes`' stall records (those whose cubin was
// saved in `record_dir`); what could not be filled is added to each record's note.
void resolve_stall_pcs(std::vector<ProcessRecords>& processes,
                       const std::filesystem::path& record_dir);

}  // namespace roofline::app
