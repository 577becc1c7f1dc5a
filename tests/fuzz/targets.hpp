// Fuzz targets: each takes one input (a spec file, a report, paths or an option's value, as
// bytes), feeds it through the reader and, when it reads, through what the tool does with it
// next. Input errors (InputError) are the expected outcome for most inputs; anything else
// (another exception, a sanitizer report, a failed round trip, a hang) is a finding and aborts.
//
// The libFuzzer entry points (fuzz_*.cpp, ROOFLINE_ENABLE_FUZZ) and the unit test that replays
// every input of tests/data/fuzz/ (tests/unit/test_hardening.cpp) call the same functions.
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

// A report merged with itself and with the fixtures: a conflict is an input error, a merge
// reads back exactly as written.
void merge(const std::uint8_t* data, std::size_t size);
// Lines as output paths (up to three) and input paths, checked by the output policy
// (output.hpp) without writing: input errors only, the same verdict in either order.
void output_paths(const std::uint8_t* data, std::size_t size);
// Text as the value of the checked options: integers (decimal_in, kDecimalUint64), --devices,
// --points, --shard and --kernel-regex (a pattern the guard accepts compiles and its search of a
// kernel name ends).
void options(const std::uint8_t* data, std::size_t size);

// Lines as a command line (one argument a line), parsed but not run (app::parse_cli): exit 0
// or 2 only, and with `profile ... -- PROGRAM ARGS` the program's arguments never change the
// outcome (with or without --export or any other multi-value option before the `--`).
void command_line(const std::uint8_t* data, std::size_t size);
// Lines as `show`'s options on the recorded base.json, run (app::run_cli) with the output to
// stdout only: exit 0 or 2. Inputs naming an output, a spec or a path are skipped.
void show_options(const std::uint8_t* data, std::size_t size);

// By name ("spec_reader", ...); nullptr when unknown.
using Target = void (*)(const std::uint8_t*, std::size_t);
Target find_target(std::string_view name);

}  // namespace roofline::fuzz
