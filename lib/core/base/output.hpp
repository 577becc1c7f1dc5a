// Writing results: "-" is standard output. A regular file (or a path that does not exist yet)
// is written atomically: a temporary file beside the target, then rename, so a failed run
// never leaves a half-written file. Character devices and FIFOs (/dev/null, /dev/stdout on a
// terminal or pipe) are written through and never replaced. Other kinds of files are refused.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace roofline {

// Throws InputError("cannot write <path>: <reason>") before any work is done when `path` is
// empty, a directory or another unwritable kind of file, or its directory does not exist or is
// not writable.
void check_output_path(const std::string& path);

// An output of a command: the option that names it and the path.
struct OutputPath {
  std::string option;  // "--json"
  std::string path;    // empty when not requested
};

// Throws InputError when two outputs name the same file (or both "-"), or an output is one of
// the command's `inputs` (writing would destroy it before or while it is read).
void check_output_paths(const std::vector<OutputPath>& outputs,
                        const std::vector<std::string>& inputs);

void write_output(const std::string& path, const std::string& content);

}  // namespace roofline
