#include "lib/gpu/counter_data_file.hpp"

#include <nlohmann/json.hpp>

#include "lib/core/base/checksum.hpp"
#include "lib/core/base/errors.hpp"
#include "lib/core/base/input.hpp"
#include "lib/core/base/output.hpp"
#include "lib/gpu/range_profiler.hpp"

namespace roofline::gpu {

void save_counter_data(const std::filesystem::path& dir, const RecordedCounters& recorded) {
  nlohmann::json meta;
  meta["chip"] = recorded.chip;
  meta["counter_set"] = to_string(recorded.counter_set);
  meta["metrics"] = recorded.metrics;
  meta["image_bytes"] = recorded.image.size();
  meta["fnv1a64"] = fnv1a64_hex(recorded.image);
  meta["range_rows"] = recorded.range_rows;
  meta["counter_passes"] = recorded.counter_passes;
  write_output((dir / "counter_data.bin").string(),
               std::string(recorded.image.begin(), recorded.image.end()));
  write_output((dir / "fixture.json").string(), meta.dump(2) + "\n");
}

RecordedCounters load_counter_data(const std::filesystem::path& dir) {
  const std::filesystem::path meta_path = dir / "fixture.json";
  const std::filesystem::path image_path = dir / "counter_data.bin";
  nlohmann::json meta;
  try {
    meta = nlohmann::json::parse(read_text_file(meta_path));
    RecordedCounters recorded;
    recorded.chip = meta.at("chip").get<std::string>();
    // Recordings made before counter sets existed hold the full set.
    const std::string set = meta.value("counter_set", std::string("full"));
    if (set != "full" && set != "roofline")
      throw InputError(meta_path.string() + ": counter_set: must be roofline or full");
    recorded.counter_set = set == "full" ? CounterSet::kFull : CounterSet::kRoofline;
    recorded.metrics = meta.at("metrics").get<std::vector<std::string>>();
    recorded.range_rows = meta.at("range_rows").get<std::vector<std::size_t>>();
    recorded.counter_passes = meta.at("counter_passes").get<int>();
    const std::string text = read_text_file(image_path);
    recorded.image.assign(text.begin(), text.end());
    const auto expected_bytes = meta.at("image_bytes").get<std::size_t>();
    if (recorded.image.size() != expected_bytes)
      throw InputError(image_path.string() + ": " + std::to_string(recorded.image.size()) +
                       " bytes, fixture.json says " + std::to_string(expected_bytes));
    const std::string checksum = fnv1a64_hex(recorded.image);
    if (checksum != meta.at("fnv1a64").get<std::string>())
      throw InputError(image_path.string() + ": checksum " + checksum + " does not match " +
                       meta.at("fnv1a64").get<std::string>() + " in fixture.json (corrupt image)");
    return recorded;
  } catch (const nlohmann::json::exception& error) {
    throw InputError(meta_path.string() + ": " + error.what());
  }
}

std::vector<std::map<std::string, double>> evaluate_counter_data(const RecordedCounters& recorded) {
  MetricHost host(recorded.chip);
  const std::vector<RangeValues> ranges = host.evaluate(recorded.image, recorded.metrics);
  std::vector<std::map<std::string, double>> out;
  for (const RangeValues& range : ranges)
    out.push_back(
        combine_metrics(recorded.chip, recorded.counter_set, recorded.metrics, range.values));
  return out;
}

}  // namespace roofline::gpu
