// Counter-data images: what the range profiler collects into and what the host half evaluates.
// Internal to roofline_profiler.
//
// Learnt on CUDA 13.0's CUPTI:
//   - The evaluation calls crash on malformed images, so an image from a file is checked against
//     the header layout before CUPTI sees it (counter_data_image.cpp).
//   - cuptiRangeProfilerCounterDataGetRangeInfo hangs without a GPU; range names come from
//     cuptiProfilerHostGetRangeName, which works offline.
#pragma once

#include <cupti_range_profiler.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "lib/gpu/cupti/metric_host.hpp"
#include "lib/gpu/range_profiler.hpp"

namespace roofline::gpu::cupti {

// How a pass collects into an image (the range and replay modes of SetConfig).
enum class Collection {
  kKernelReplay,  // auto range (one range per kernel), kernel replay inside each launch
  kUserRanges,    // user range (pushed and popped by the caller), user replay
};

// An image with room for `ranges` ranges, collected as `collection` says.
struct CounterDataImage {
  std::size_t ranges = 0;
  Collection collection = Collection::kKernelReplay;
  std::vector<std::uint8_t> data;
};

// An image sized by `object` for `metrics` and `ranges` ranges; zeroed, not initialised.
CounterDataImage sized_image(CUpti_RangeProfiler_Object* object,
                             const std::vector<std::string>& metrics, std::size_t ranges,
                             Collection collection);
// Readies `image` for collection (before each pass that collects into it).
void initialize_image(CUpti_RangeProfiler_Object* object, CounterDataImage& image);

// Every range of `image`: its name and one value per metric. `checked`: the image comes from a
// file and must pass the layout check first (ProfilerError kBadCounterData otherwise). `host`
// must be alive: CUPTI's counter-data parser is set up by cuptiProfilerHostInitialize (without
// one, GetCounterDataInfo answers NOT_INITIALIZED).
std::vector<RangeValues> evaluate_image(const HostObject& host,
                                        const std::vector<std::uint8_t>& image,
                                        const std::vector<std::string>& metrics, bool checked);

}  // namespace roofline::gpu::cupti
