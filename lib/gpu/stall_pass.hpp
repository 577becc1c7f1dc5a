// The stall pass of a sweep (`run --stalls`): each ok point launched once more, after an L2
// flush, with its warps sampled (cupti/pc_sampler.hpp), and its row given the samples by stall
// reason, by SASS instruction and by source line (Row::stalls).
//
// The sampling period is chosen per point from its measured time, so that every launch gets
// about RunOptions::stall_samples samples (`--stall-samples`; a 20 µs launch on an H200 gets
// tens of thousands at the shortest period, 2^5 cycles) and a long one does not fill the
// hardware buffer.
#pragma once

#include <memory>
#include <string>

#include "lib/gpu/point_launcher.hpp"
#include "lib/gpu/runner.hpp"

namespace roofline::gpu {

namespace cupti {
class CubinCatalog;
}

// What the stall pass needs from before the first launch: the modules' cubins, which the
// driver hands over once, when it loads them. Construct before the sweep's first launch.
class StallSetup {
 public:
  StallSetup();
  ~StallSetup();
  StallSetup(const StallSetup&) = delete;
  StallSetup& operator=(const StallSetup&) = delete;
  // Null when the process cannot subscribe (another CUPTI tool): samples without source lines.
  const cupti::CubinCatalog* catalog() const { return catalog_.get(); }
  const std::string& why_no_catalog() const { return why_; }

 private:
  std::unique_ptr<cupti::CubinCatalog> catalog_;
  std::string why_;
};

// Samples every ok row of `result` (one per point of `launcher`, in order) and says what it did
// in result.stalls. When the device cannot sample, no row gets stalls and the provenance
// says why (a warning too); a point that fails gets a StallSampling with no samples and a note.
void collect_stalls(RunResult& result, PointLauncher& launcher, const RunOptions& options,
                    const StallSetup& setup);

}  // namespace roofline::gpu
