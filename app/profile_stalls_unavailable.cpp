#include "app/profile_stalls.hpp"

namespace roofline::app {

void resolve_stall_pcs(std::vector<ProcessRecords>& processes, const std::filesystem::path&) {
  for (ProcessRecords& p : processes)
    for (StallRecord& record : p.stalls)
      if (!record.pcs.empty())
        record.note += std::string(record.note.empty() ? "" : "; ") +
                       "no SASS or source lines: this build of cuflash-roofline has no CUDA "
                       "toolkit (offsets only)";
}

}  // namespace roofline::app
