// Writing results: the one output policy of every command.
//
// Targets: "-" is standard output. A path naming a descriptor (/dev/stdout, /dev/stderr,
// /dev/fd/N, /proc/self/fd/N) is written through that descriptor, in its mode (a file opened
// for appending is appended to), never replaced. Character devices and FIFOs are written
// through. A regular file (or a path that does not exist yet) is staged in a temporary file
// beside it (".cfr.XXXXXX": the target's name may use all of NAME_MAX) and renamed over it.
// Other kinds of files are refused.
//
// A command's outputs are written together (OutputSet): every file is staged first, then the
// streams are written in order, then the staged files are renamed; a failure before the renames
// leaves no file behind and the old ones untouched. Every write is checked: a failed write (a
// full disk, a closed pipe, a closed stdout) is an InputError (exit 2).
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace roofline {

// Throws InputError("cannot write <path>: <reason>") before any work is done when `path` is
// empty, a directory or another unwritable kind of file, a descriptor that is not open for
// writing, or its directory does not exist or is not writable.
void check_output_path(const std::string& path);

// An output of a command: the option that names it and the path.
struct OutputPath {
  std::string option;  // "--json"
  std::string path;    // empty when not requested
};

// Throws InputError when two outputs name the same file or descriptor ("-" and /dev/stdout
// alike), or an output is one of the command's `inputs` (writing would destroy it before or
// while it is read). The same file: the same device and inode where the file exists, else the
// same path once its directory is resolved (realpath of the parent, then the name), so that
// "o.json", "./o.json" and "$PWD/o.json" are one file.
void check_output_paths(const std::vector<OutputPath>& outputs,
                        const std::vector<std::string>& inputs);

// True when `path` writes to standard output ("-", /dev/stdout, /dev/fd/1, /proc/self/fd/1).
bool writes_stdout(const std::string& path);

// What a Markdown output writes: `markdown` alone, or, when `path` is the regular file that
// $GITHUB_STEP_SUMMARY names (GitHub Actions' job summary, which steps append to), what the
// file holds already, a blank line and `markdown`. Throws InputError when that file cannot be
// read.
std::string markdown_for(const std::string& path, std::string markdown);

// The outputs of one command, written together by commit() (see above). Each path is checked
// again (check_output_path) when committed.
class OutputSet {
 public:
  void add(const std::string& path, std::string content);
  void commit();

 private:
  struct Output {
    std::string path;
    std::string content;
  };
  std::vector<Output> outputs_;
};

// One output, as an OutputSet of one.
void write_output(const std::string& path, const std::string& content);

// Writes `text` to std::cout and flushes it; InputError("cannot write to standard output: ...")
// when that fails.
void write_stdout(std::string_view text);

// Async-signal-safe: removes the temporary files of the outputs being staged now (a signal
// handler calls it before the process ends).
void remove_staged_files() noexcept;

}  // namespace roofline
