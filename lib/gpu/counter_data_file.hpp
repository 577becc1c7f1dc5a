// Recorded counter data: the counter-data image of a sweep with its metric list, chip, counter
// set and checksum, saved by `run --save-counter-data DIR` and evaluated offline by the host
// half of CUPTI (no GPU needed). CI tests the whole analysis path on such recordings.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "lib/core/domain/metric_catalog.hpp"

namespace roofline::gpu {

struct RecordedCounters {
  std::string chip;
  CounterSet counter_set = CounterSet::kFull;
  std::vector<std::string> metrics;
  std::vector<std::uint8_t> image;
  std::vector<std::size_t> range_rows;  // report row of each range, in range order
  int counter_passes = 0;
};

// Writes DIR/counter_data.bin and DIR/fixture.json (atomically).
void save_counter_data(const std::filesystem::path& dir, const RecordedCounters& recorded);

// Reads both files and checks the image's size and FNV-1a checksum before anything parses it
// (a corrupt image can crash CUPTI's parser). Throws InputError naming the file and the fault.
RecordedCounters load_counter_data(const std::filesystem::path& dir);

// Evaluates every range with the host API and combines the metrics into the set's quantities.
// Throws ProfilerError when the image does not match the metric list or chip.
std::vector<std::map<std::string, double>> evaluate_counter_data(const RecordedCounters& recorded);

}  // namespace roofline::gpu
