// Writing results: "-" is standard output; anything else is written atomically (a temporary
// file beside the target, then rename), so a failed run never leaves a half-written file.
#pragma once

#include <filesystem>
#include <string>

namespace roofline {

// Throws InputError("cannot write <path>: <reason>") before any work is done when the
// directory of `path` does not exist or is not writable, or `path` is a directory.
void check_output_path(const std::string& path);

void write_output(const std::string& path, const std::string& content);

// Whole file as text; throws InputError("cannot read <path>: <reason>").
std::string read_text_file(const std::filesystem::path& path);

}  // namespace roofline
