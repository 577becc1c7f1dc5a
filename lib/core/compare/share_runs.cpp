#include "lib/core/compare/share_runs.hpp"

#include "lib/core/base/errors.hpp"
#include "lib/core/compare/row_match.hpp"
#include "lib/core/verdict/analysis.hpp"

namespace roofline {

Report with_share_runs(Report measured, const Report& few, const std::string& few_origin,
                       const std::string& origin) {
  const int sms = few.context.green_context_sms;
  if (sms <= 0 || !few.context.device)
    throw InputError("--share-run " + few_origin +
                     ": not measured on a share of the SMs (run --sms N writes one)");
  if (!measured.context.device || measured.context.device->name != few.context.device->name)
    throw InputError("--share-run " + few_origin + ": measured on " + few.context.device->name +
                     ", not on " +
                     (measured.context.device ? measured.context.device->name : "a device") +
                     " as " + origin + " was");
  if (measured.context.green_context_sms > 0 || sms >= measured.context.device->sm_count)
    throw InputError("--share-run " + few_origin + ": on " + std::to_string(sms) + " SMs; " +
                     origin + " must be measured on all " +
                     std::to_string(measured.context.device->sm_count) + " and it on fewer");
  const RowMatching matching = match_rows(measured, few, {}, origin, few_origin);
  std::size_t attached = 0;
  for (const RowMatch& match : matching.matched) {
    const Row& row = few.rows[match.head_index];
    if (!row.timing || row.timing->samples_seconds.empty()) continue;
    ShareRun run;
    run.sms = sms;
    run.seconds = row.timing->median_seconds();
    run.source = few_origin;
    for (const LevelAnalysis& level : analyze(row, few).levels)
      if (level.bytes_source == Source::kMeasured && level.bytes > 0)
        run.bytes[level.level] = level.bytes;
    measured.rows[match.base_index].share_run = std::move(run);
    ++attached;
  }
  if (attached == 0)
    throw InputError("--share-run " + few_origin + ": no timed row matches a row of " + origin);
  return measured;
}

}  // namespace roofline
