#include "lib/core/base/output.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>

#include "lib/core/base/errors.hpp"
#include "lib/core/base/text.hpp"

namespace roofline {
namespace {

[[noreturn]] void cannot_write(const std::string& path, const std::string& why) {
  throw InputError(one_line("cannot write " + path + ": " + why));
}

// What kind of thing `path` names (following symbolic links).
enum class Kind { kMissing, kRegular, kStream, kDirectory, kOther };

Kind kind_of(const std::string& path, struct stat* info) {
  if (::stat(path.c_str(), info) != 0) return Kind::kMissing;
  if (S_ISREG(info->st_mode)) return Kind::kRegular;
  if (S_ISCHR(info->st_mode) || S_ISFIFO(info->st_mode)) return Kind::kStream;
  if (S_ISDIR(info->st_mode)) return Kind::kDirectory;
  return Kind::kOther;
}

void write_all(int fd, const std::string& content, const std::string& path) {
  std::size_t written = 0;
  while (written < content.size()) {
    const ssize_t n = ::write(fd, content.data() + written, content.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int saved = errno;
      ::close(fd);
      cannot_write(path, std::strerror(saved));
    }
    written += static_cast<std::size_t>(n);
  }
}

// Character devices and FIFOs: write into them, never replace them.
void write_through(const std::string& path, const std::string& content) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) cannot_write(path, std::strerror(errno));
  write_all(fd, content, path);
  if (::close(fd) != 0) cannot_write(path, std::strerror(errno));
}

// Regular files: a temporary file beside the target, then rename. A symbolic link to a regular
// file stays a link: its target is replaced.
void write_atomically(const std::string& path, const std::string& content) {
  std::error_code error;
  std::string target = path;
  if (std::filesystem::is_symlink(path, error)) {
    const auto resolved = std::filesystem::canonical(path, error);
    if (error) cannot_write(path, error.message());
    target = resolved.string();
  }
  std::string temp = target + ".tmp.XXXXXX";
  const int fd = mkstemp(temp.data());
  if (fd < 0) cannot_write(path, std::strerror(errno));
  try {
    write_all(fd, content, path);
  } catch (...) {
    std::remove(temp.c_str());
    throw;
  }
  if (::fsync(fd) != 0 || ::close(fd) != 0 || std::rename(temp.c_str(), target.c_str()) != 0) {
    const int saved = errno;
    std::remove(temp.c_str());
    cannot_write(path, std::strerror(saved));
  }
  // mkstemp creates 0600; give the file the usual permissions.
  ::chmod(target.c_str(), 0644);
}

// The same file: the same inode when both exist, else the same normalised path.
bool same_file(const std::string& a, const std::string& b) {
  struct stat ia {};
  struct stat ib {};
  const bool a_exists = ::stat(a.c_str(), &ia) == 0;
  const bool b_exists = ::stat(b.c_str(), &ib) == 0;
  if (a_exists && b_exists) return ia.st_dev == ib.st_dev && ia.st_ino == ib.st_ino;
  if (a_exists != b_exists) return false;
  std::error_code error;
  const auto ca = std::filesystem::weakly_canonical(a, error);
  if (error) return a == b;
  const auto cb = std::filesystem::weakly_canonical(b, error);
  if (error) return a == b;
  return ca == cb;
}

}  // namespace

void check_output_path(const std::string& path) {
  if (path == "-") return;
  if (path.empty()) throw InputError("cannot write to an empty path");
  struct stat info {};
  switch (kind_of(path, &info)) {
    case Kind::kDirectory:
      cannot_write(path, "is a directory");
    case Kind::kOther:
      cannot_write(path, "not a regular file, character device or FIFO");
    case Kind::kStream:
      if (access(path.c_str(), W_OK) != 0) cannot_write(path, std::strerror(errno));
      return;
    case Kind::kRegular:
    case Kind::kMissing:
      break;
  }
  namespace fs = std::filesystem;
  std::error_code error;
  fs::path dir = fs::path(path).parent_path();
  if (dir.empty()) dir = ".";
  if (!fs::is_directory(dir, error))
    cannot_write(path, "directory " + dir.string() + " does not exist");
  if (access(dir.c_str(), W_OK) != 0) cannot_write(path, std::strerror(errno));
  if (fs::exists(path, error) && access(path.c_str(), W_OK) != 0)
    cannot_write(path, std::strerror(errno));
}

void check_output_paths(const std::vector<OutputPath>& outputs,
                        const std::vector<std::string>& inputs) {
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    const OutputPath& out = outputs[i];
    if (out.path.empty()) continue;
    for (std::size_t j = 0; j < i; ++j) {
      const OutputPath& other = outputs[j];
      if (other.path.empty()) continue;
      const bool both_stdout = out.path == "-" && other.path == "-";
      if (both_stdout || (out.path != "-" && other.path != "-" && same_file(out.path, other.path)))
        throw InputError(one_line(other.option + " " + other.path + " and " + out.option + " " +
                                  out.path + " name the same output"));
    }
    if (out.path == "-") continue;
    for (const std::string& input : inputs)
      if (input != "-" && same_file(out.path, input))
        throw InputError(
            one_line(out.option + " " + out.path + " would overwrite the input " + input));
  }
}

void write_output(const std::string& path, const std::string& content) {
  if (path == "-") {
    std::cout << content << std::flush;
    return;
  }
  check_output_path(path);
  struct stat info {};
  if (kind_of(path, &info) == Kind::kStream)
    write_through(path, content);
  else
    write_atomically(path, content);
}

}  // namespace roofline
