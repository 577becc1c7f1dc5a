#include "lib/gpu/cupti/counter_data_image.hpp"

#include <cupti_profiler_host.h>

#include <cstring>

#include "lib/gpu/cupti/call.hpp"

namespace roofline::gpu::cupti {
namespace {

// Counter-data images. CUPTI's parser trusts the image: cuptiRangeProfilerGetCounterDataInfo
// (NVPW_CounterData_GetNumRanges) follows an offset in the header and crashes on garbage, and
// cuptiProfilerHostGetRangeName does not check the image at all. So an image from a file is
// checked before CUPTI sees it, against the layout that CUPTI 13.0 writes (read off an image
// recorded on an H200, GH100; the names are ours, all fields little-endian):
//   0x00         char[8]  "LOPDATA\0"
//   0x08         u32 24, u32 1     layout words: any other pair is rejected
//   0x10..0x3b   u32 x 11          offsets and sizes of header sections, each < image size
//   0x38         u32               offset T of the range table
//   T + 0x08     u64               offset of the first range's counters
//   T + 0x10     u64               bytes per range
//   T + 0x20     u32               number of ranges recorded (what CUPTI reports)
//   image size = first-range offset + max ranges x bytes per range
// Only the fields the parser follows are checked: corruption inside the counters is for the
// caller's checksum to catch. Images straight from the RangeProfiler skip the check.
constexpr char kCounterDataMagic[8] = {'L', 'O', 'P', 'D', 'A', 'T', 'A', '\0'};
constexpr std::uint32_t kLayoutWords[2] = {24, 1};
constexpr std::size_t kHeaderBytes = 0x3c;
constexpr std::size_t kRangeTableBytes = 0x28;
constexpr std::size_t kMaxCounterDataBytes = std::size_t{1} << 30;

struct CounterDataLayout {
  std::size_t first_range_offset = 0;
  std::size_t bytes_per_range = 0;
};

[[noreturn]] void bad_counter_data(const std::string& why) {
  throw ProfilerError(ProfilerErrorKind::kBadCounterData, "counter-data image rejected: " + why);
}

template <class T>
T read_le(const std::vector<std::uint8_t>& image, std::size_t offset) {
  T value{};
  std::memcpy(&value, image.data() + offset, sizeof value);
  return value;
}

CounterDataLayout validate_counter_data(const std::vector<std::uint8_t>& image) {
  const std::size_t size = image.size();
  if (size < kHeaderBytes + kRangeTableBytes) {
    bad_counter_data(std::to_string(size) + " bytes, too small to hold a header");
  }
  if (size > kMaxCounterDataBytes) bad_counter_data(std::to_string(size) + " bytes, over 1 GiB");
  if (std::memcmp(image.data(), kCounterDataMagic, sizeof kCounterDataMagic) != 0) {
    bad_counter_data("no LOPDATA signature: not a CUPTI counter-data image");
  }
  const auto w0 = read_le<std::uint32_t>(image, 8);
  const auto w1 = read_le<std::uint32_t>(image, 12);
  if (w0 != kLayoutWords[0] || w1 != kLayoutWords[1]) {
    bad_counter_data("layout words " + std::to_string(w0) + "/" + std::to_string(w1) +
                     " differ from the " + std::to_string(kLayoutWords[0]) + "/" +
                     std::to_string(kLayoutWords[1]) +
                     " of CUPTI 13.0; re-record the image with this CUPTI");
  }
  for (std::size_t offset = 0x10; offset < kHeaderBytes; offset += 4) {
    if (read_le<std::uint32_t>(image, offset) >= size) {
      bad_counter_data("header field at byte " + std::to_string(offset) +
                       " points outside the image");
    }
  }
  const std::size_t table = read_le<std::uint32_t>(image, 0x38);
  if (table > size - kRangeTableBytes) bad_counter_data("range table outside the image");
  CounterDataLayout layout;
  const auto first = read_le<std::uint64_t>(image, table + 0x08);
  const auto per_range = read_le<std::uint64_t>(image, table + 0x10);
  if (first > size || per_range == 0 || per_range > size) {
    bad_counter_data("range table sizes do not fit the image (" + std::to_string(size) + " bytes)");
  }
  layout.first_range_offset = static_cast<std::size_t>(first);
  layout.bytes_per_range = static_cast<std::size_t>(per_range);
  return layout;
}

std::size_t range_count(const std::vector<std::uint8_t>& image) {
  auto params = make_params<CUpti_RangeProfiler_GetCounterDataInfo_Params>(
      CUpti_RangeProfiler_GetCounterDataInfo_Params_STRUCT_SIZE);
  params.pCounterDataImage = image.data();
  params.counterDataImageSize = image.size();
  ROOFLINE_CUPTI_CALL(cuptiRangeProfilerGetCounterDataInfo(&params));
  return params.numTotalRanges;
}

std::string range_name(const std::vector<std::uint8_t>& image, std::size_t index) {
  auto params = make_params<CUpti_Profiler_Host_GetRangeName_Params>(
      CUpti_Profiler_Host_GetRangeName_Params_STRUCT_SIZE);
  params.pCounterDataImage = image.data();
  params.counterDataImageSize = image.size();
  params.rangeIndex = index;
  params.delimiter = "/";
  ROOFLINE_CUPTI_CALL(cuptiProfilerHostGetRangeName(&params));
  return params.pRangeName != nullptr ? std::string(params.pRangeName) : std::string();
}

}  // namespace

CounterDataImage sized_image(CUpti_RangeProfiler_Object* object,
                             const std::vector<std::string>& metrics, std::size_t ranges,
                             Collection collection) {
  auto names = c_strings(metrics);
  auto size = make_params<CUpti_RangeProfiler_GetCounterDataSize_Params>(
      CUpti_RangeProfiler_GetCounterDataSize_Params_STRUCT_SIZE);
  size.pRangeProfilerObject = object;
  size.pMetricNames = names.data();
  size.numMetrics = names.size();
  size.maxNumOfRanges = ranges;
  size.maxNumRangeTreeNodes = static_cast<std::uint32_t>(ranges);
  ROOFLINE_CUPTI_CALL(cuptiRangeProfilerGetCounterDataSize(&size));
  CounterDataImage image;
  image.ranges = ranges;
  image.collection = collection;
  image.data.assign(size.counterDataSize, 0);
  return image;
}

void initialize_image(CUpti_RangeProfiler_Object* object, CounterDataImage& image) {
  auto init = make_params<CUpti_RangeProfiler_CounterDataImage_Initialize_Params>(
      CUpti_RangeProfiler_CounterDataImage_Initialize_Params_STRUCT_SIZE);
  init.pRangeProfilerObject = object;
  init.counterDataSize = image.data.size();
  init.pCounterData = image.data.data();
  ROOFLINE_CUPTI_CALL(cuptiRangeProfilerCounterDataImageInitialize(&init));
}

std::vector<RangeValues> evaluate_image(const HostObject& host,
                                        const std::vector<std::uint8_t>& image,
                                        const std::vector<std::string>& metrics, bool checked) {
  CounterDataLayout layout;
  if (checked) layout = validate_counter_data(image);
  auto names = c_strings(metrics);
  std::vector<RangeValues> ranges;
  try {
    const std::size_t count = range_count(image);
    if (checked && count > (image.size() - layout.first_range_offset) / layout.bytes_per_range) {
      bad_counter_data("it claims " + std::to_string(count) + " ranges, more than its " +
                       std::to_string(image.size()) + " bytes can hold");
    }
    ranges.reserve(count);
    for (std::size_t index = 0; index < count; ++index) {
      RangeValues range;
      range.name = range_name(image, index);
      range.values.assign(metrics.size(), 0.0);
      auto params = make_params<CUpti_Profiler_Host_EvaluateToGpuValues_Params>(
          CUpti_Profiler_Host_EvaluateToGpuValues_Params_STRUCT_SIZE);
      params.pHostObject = host.get();
      params.pCounterDataImage = image.data();
      params.counterDataImageSize = image.size();
      params.rangeIndex = index;
      params.ppMetricNames = names.data();
      params.numMetrics = names.size();
      params.pMetricValues = range.values.data();
      ROOFLINE_CUPTI_CALL(cuptiProfilerHostEvaluateToGpuValues(&params));
      ranges.push_back(std::move(range));
    }
  } catch (const ProfilerError& error) {
    if (error.kind() != ProfilerErrorKind::kOther) throw;
    throw ProfilerError(ProfilerErrorKind::kBadCounterData,
                        std::string("counter-data image could not be evaluated: ") + error.what());
  }
  return ranges;
}

}  // namespace roofline::gpu::cupti
