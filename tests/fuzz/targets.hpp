// Fuzz targets: each takes one input (a spec file or a report, as bytes), feeds it through the
// reader and, when it reads, through what the tool does with it next. Input errors
// (InputError) are the expected outcome for most inputs; anything else (another exception, a
// sanitizer report, a failed round trip, a hang) is a finding and aborts.
//
// The libFuzzer entry points (fuzz_*.cpp, ROOFLINE_ENABLE_FUZZ) and the unit test that replays
// every input of tests/data/fuzz/ (test_fuzz_regressions.cpp) call the same functions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace roofline::fuzz {

// A spec file: read, written back and read again, then a model report on it rendered by every
// writer (table, CSV, JSON, terminal chart, SVG).
void spec_reader(const std::uint8_t* data, std::size_t size);
// A report: read as a whole document and streaming (the same report or the same error), written
// back and read again (the same rows).
void report_reader(const std::uint8_t* data, std::size_t size);
// A report compared with itself, with the recorded fixtures base.json/head.json (both ways),
// and kernel against kernel; every comparison writer.
void compare(const std::uint8_t* data, std::size_t size);
// A report through every report and chart writer.
void writers(const std::uint8_t* data, std::size_t size);

// By name ("spec_reader", ...); nullptr when unknown.
using Target = void (*)(const std::uint8_t*, std::size_t);
Target find_target(std::string_view name);

}  // namespace roofline::fuzz
