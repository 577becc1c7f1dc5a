#include "app/profile_stalls.hpp"

#include <map>
#include <memory>
#include <string>

#include <spdlog/spdlog.h>

#include "lib/core/base/errors.hpp"
#include "lib/core/base/input.hpp"
#include "lib/core/base/text.hpp"
#include "lib/gpu/stall_sources.hpp"

namespace roofline::app {

void resolve_stall_pcs(std::vector<ProcessRecords>& processes,
                       const std::filesystem::path& record_dir) {
  // Each saved cubin read once, when a PC first names it (nullptr: none saved).
  std::map<std::uint64_t, std::unique_ptr<std::string>> cubins;
  gpu::StallSources sources([&](std::uint64_t crc) -> const std::string* {
    auto [it, added] = cubins.try_emplace(crc);
    if (added) {
      const std::filesystem::path file = record_dir / cubin_file_name(crc);
      std::error_code error;
      try {
        if (std::filesystem::is_regular_file(file, error))
          it->second = std::make_unique<std::string>(read_text_file(file));  // bytes as they are
      } catch (const InputError&) {
        // Unreadable: that module's PCs keep their offsets, and summarize_stalls says so.
      }
    }
    return it->second.get();
  });
  // Every function's disassembly started first, then each record's PCs filled.
  for (const ProcessRecords& p : processes)
    for (const StallRecord& record : p.stalls) sources.request(record.pcs);
  for (ProcessRecords& p : processes)
    for (StallRecord& record : p.stalls) {
      if (record.pcs.empty()) continue;
      sources.fill(record.pcs);
      if (!sources.why().empty() && record.note.find(sources.why()) == std::string::npos)
        record.note += (record.note.empty() ? "" : "; ") + sources.why();
    }
  spdlog::debug("stall PCs named after the program: {} s of source lines, {} s waiting for SASS",
                format_fixed(sources.source_seconds(), 3), format_fixed(sources.sass_seconds(), 3));
}

}  // namespace roofline::app
