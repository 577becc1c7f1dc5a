// Reading inputs: whole files as text. JSON inputs (reports, specs, calibrations) go through
// json_reader.hpp, which also checks their kind and size first.
#pragma once

#include <filesystem>
#include <string>

namespace roofline {

// Whole file as text; throws InputError("cannot read <path>: <reason>"). Anything but a regular
// file is refused without blocking (a FIFO is opened non-blocking, then refused).
std::string read_text_file(const std::filesystem::path& path);

}  // namespace roofline
