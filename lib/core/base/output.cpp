#include "lib/core/base/output.hpp"

#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <memory>
#include <optional>
#include <stdexcept>

#include "lib/core/base/errors.hpp"
#include "lib/core/base/input.hpp"
#include "lib/core/base/text.hpp"

namespace roofline {
namespace {

namespace fs = std::filesystem;

[[noreturn]] void cannot_write(const std::string& path, const std::string& why) {
  throw InputError(one_line("cannot write " + path + ": " + why));
}

// The descriptor that the name `path` spells, if it spells one: /dev/stdin, /dev/stdout,
// /dev/stderr, /dev/fd/N, /proc/self/fd/N and /proc/PID/fd/N with this process's PID.
std::optional<int> descriptor_named(const std::string& path) {
  const std::string normal = fs::path(path).lexically_normal().string();
  if (normal == "/dev/stdin") return STDIN_FILENO;
  if (normal == "/dev/stdout") return STDOUT_FILENO;
  if (normal == "/dev/stderr") return STDERR_FILENO;
  const std::string own = "/proc/" + std::to_string(::getpid()) + "/fd/";
  for (const std::string_view prefix :
       {std::string_view("/dev/fd/"), std::string_view("/proc/self/fd/"), std::string_view(own)}) {
    if (normal.rfind(prefix, 0) != 0) continue;
    const std::string number = normal.substr(prefix.size());
    if (number.empty() || number.size() > 9 ||
        number.find_first_not_of("0123456789") != std::string::npos)
      return std::nullopt;
    return std::stoi(number);
  }
  return std::nullopt;
}

// The descriptor that `path` names ("-" is 1), if it names one: by its name, or through
// symbolic links whose chain ends at such a name (a link to /dev/stdout writes through the
// descriptor, as /dev/stdout does, never replacing the file behind it).
std::optional<int> descriptor_of(const std::string& path) {
  if (path == "-") return STDOUT_FILENO;
  fs::path at(path);
  for (int hop = 0; hop < 16; ++hop) {
    if (const std::optional<int> fd = descriptor_named(at.string())) return fd;
    std::error_code error;
    if (!fs::is_symlink(at, error)) return std::nullopt;
    const fs::path target = fs::read_symlink(at, error);
    if (error) return std::nullopt;
    at = target.is_absolute() ? target : at.parent_path() / target;
  }
  return std::nullopt;
}

// What kind of thing `path` names (following symbolic links).
enum class Kind { kMissing, kRegular, kStream, kDirectory, kOther };

Kind kind_of(const std::string& path) {
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0) return Kind::kMissing;
  if (S_ISREG(info.st_mode)) return Kind::kRegular;
  if (S_ISCHR(info.st_mode) || S_ISFIFO(info.st_mode)) return Kind::kStream;
  if (S_ISDIR(info.st_mode)) return Kind::kDirectory;
  return Kind::kOther;
}

// `path` absolute, its directory resolved (symbolic links, "..") where it exists.
std::string normalised(const std::string& path) {
  std::error_code error;
  const fs::path absolute = fs::absolute(path, error).lexically_normal();
  if (error) return path;
  const fs::path parent = fs::canonical(absolute.parent_path(), error);
  return ((error ? absolute.parent_path() : parent) / absolute.filename()).string();
}

// What an output or input is, for telling whether two of them are one file.
struct Identity {
  std::optional<int> descriptor;
  bool exists = false;
  bool regular = false;
  dev_t device = 0;
  ino_t inode = 0;
  std::string path;  // normalised, where the file does not exist
};

Identity identity_of(const std::string& path) {
  Identity id;
  id.descriptor = descriptor_of(path);
  struct stat info {};
  id.exists =
      id.descriptor ? ::fstat(*id.descriptor, &info) == 0 : ::stat(path.c_str(), &info) == 0;
  if (id.exists) {
    id.regular = S_ISREG(info.st_mode);
    id.device = info.st_dev;
    id.inode = info.st_ino;
  } else if (!id.descriptor) {
    id.path = normalised(path);
  }
  return id;
}

// One file: the same descriptor; the same inode where both exist (for a descriptor, only when
// it is a regular file: stdout and --json on /dev/null are no conflict); else the same path.
bool same_file(const Identity& a, const Identity& b) {
  if (a.descriptor && b.descriptor) return *a.descriptor == *b.descriptor;
  if (a.exists != b.exists) return false;
  if (a.exists) {
    if ((a.descriptor && !a.regular) || (b.descriptor && !b.regular)) return false;
    return a.device == b.device && a.inode == b.inode;
  }
  return !a.descriptor && !b.descriptor && a.path == b.path;
}

void write_all(int fd, std::string_view content, const std::string& path) {
  std::size_t written = 0;
  while (written < content.size()) {
    const ssize_t n = ::write(fd, content.data() + written, content.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) cannot_write(path, std::strerror(n < 0 ? errno : EIO));
    written += static_cast<std::size_t>(n);
  }
}

void write_stream(std::ostream& stream, std::string_view text, const char* name) {
  errno = 0;
  stream.write(text.data(), static_cast<std::streamsize>(text.size()));
  stream.flush();
  if (!stream) {
    const int saved = errno;
    stream.clear();
    throw InputError(std::string("cannot write to ") + name + ": " +
                     (saved != 0 ? std::strerror(saved) : "write error"));
  }
}

// Streams: standard output and error through their C++ streams (in order with everything else
// printed there), other descriptors, character devices and FIFOs through write(2).
void write_through(const std::string& path, std::string_view content) {
  const std::optional<int> fd = descriptor_of(path);
  if (fd == STDOUT_FILENO) return write_stdout(content);
  if (fd == STDERR_FILENO) return write_stream(std::cerr, content, "standard error");
  if (fd) return write_all(*fd, content, path);
  const int opened = ::open(path.c_str(), O_WRONLY | O_NOCTTY | O_CLOEXEC);
  if (opened < 0) cannot_write(path, std::strerror(errno));
  try {
    write_all(opened, content, path);
  } catch (...) {
    ::close(opened);
    throw;
  }
  if (::close(opened) != 0) cannot_write(path, std::strerror(errno));
}

// The temporary files being staged, where a signal handler can find them: a slot is in use
// while `used` is set, and its name is complete before that.
constexpr std::size_t kStagingSlots = 16;
char staged_names[kStagingSlots][PATH_MAX];
std::atomic<bool> staged_used[kStagingSlots];
static_assert(std::atomic<bool>::is_always_lock_free);

// A temporary file beside `target`, removed unless renamed over it; its name is registered
// before the file is created, so that a signal never leaves it behind.
class StagedFile {
 public:
  StagedFile(const std::string& target, const std::string& shown) : target_(target) {
    fs::path dir = fs::path(target).parent_path();
    const std::string pattern = (dir.empty() ? std::string(".") : dir.string()) + "/.cfr.XXXXXX";
    if (pattern.size() >= PATH_MAX) cannot_write(shown, "the path is too long");
    for (std::size_t i = 0; i < kStagingSlots && slot_ < 0; ++i)
      if (!staged_used[i].load()) slot_ = static_cast<int>(i);
    if (slot_ < 0) throw std::logic_error("more than 16 outputs staged at once");
    // Named before it is published, published before the file exists (mkostemp fills in the
    // name in place).
    char* name = staged_names[slot_];
    std::memcpy(name, pattern.c_str(), pattern.size() + 1);
    staged_used[slot_].store(true);
    fd_ = ::mkostemp(name, O_CLOEXEC);
    if (fd_ < 0) {
      const int saved = errno;
      release();
      cannot_write(shown, std::strerror(saved));
    }
  }
  ~StagedFile() {
    if (fd_ >= 0) ::close(fd_);
    if (slot_ >= 0) ::unlink(staged_names[slot_]);
    release();
  }
  StagedFile(const StagedFile&) = delete;
  StagedFile& operator=(const StagedFile&) = delete;

  void write(std::string_view content, const std::string& shown) {
    write_all(fd_, content, shown);
    // The mode a new file gets (mkstemp creates 0600), or the replaced file's.
    struct stat info {};
    mode_t mode = 0666 & ~current_umask();
    if (::stat(target_.c_str(), &info) == 0) mode = info.st_mode & 07777;
    ::fchmod(fd_, mode);
    const bool synced = ::fsync(fd_) == 0;
    const int saved = errno;
    const bool closed = ::close(fd_) == 0;
    fd_ = -1;
    if (!synced || !closed) cannot_write(shown, std::strerror(synced ? errno : saved));
  }
  void commit(const std::string& shown) {
    if (std::rename(staged_names[slot_], target_.c_str()) != 0)
      cannot_write(shown, std::strerror(errno));
    release();
  }

 private:
  static mode_t current_umask() {
    const mode_t mask = ::umask(022);
    ::umask(mask);
    return mask;
  }
  void release() {
    if (slot_ >= 0) staged_used[slot_].store(false);
    slot_ = -1;
  }
  std::string target_;
  int slot_ = -1;
  int fd_ = -1;
};

// Where a regular file's staged copy goes: a symbolic link stays a link, its target replaced.
std::string staging_target(const std::string& path) {
  std::error_code error;
  if (!fs::is_symlink(path, error)) return path;
  const fs::path resolved = fs::canonical(path, error);
  if (error) cannot_write(path, error.message());
  return resolved.string();
}

}  // namespace

bool writes_stdout(const std::string& path) {
  return descriptor_of(path) == STDOUT_FILENO;
}

void check_output_path(const std::string& path) {
  if (path.empty()) throw InputError("cannot write to an empty path");
  if (const std::optional<int> fd = descriptor_of(path)) {
    const int flags = ::fcntl(*fd, F_GETFL);
    const std::string shown = path == "-" ? std::string("standard output") : path;
    if (flags < 0) cannot_write(shown, "descriptor " + std::to_string(*fd) + " is not open");
    if ((flags & O_ACCMODE) == O_RDONLY)
      cannot_write(shown, "descriptor " + std::to_string(*fd) + " is not open for writing");
    return;
  }
  switch (kind_of(path)) {
    case Kind::kDirectory:
      cannot_write(path, "is a directory");
    case Kind::kOther:
      cannot_write(path, "not a regular file, character device or FIFO");
    case Kind::kStream:
      if (::access(path.c_str(), W_OK) != 0) cannot_write(path, std::strerror(errno));
      return;
    case Kind::kRegular:
    case Kind::kMissing:
      break;
  }
  std::error_code error;
  fs::path dir = fs::path(path).parent_path();
  if (dir.empty()) dir = ".";
  if (!fs::is_directory(dir, error))
    cannot_write(path, "directory " + dir.string() + " does not exist");
  if (::access(dir.c_str(), W_OK) != 0) cannot_write(path, std::strerror(errno));
  if (fs::exists(path, error) && ::access(path.c_str(), W_OK) != 0)
    cannot_write(path, std::strerror(errno));
  if (fs::path(path).filename().string().size() > NAME_MAX)
    cannot_write(path, std::strerror(ENAMETOOLONG));
}

void check_output_paths(const std::vector<OutputPath>& outputs,
                        const std::vector<std::string>& inputs) {
  std::vector<Identity> ids;
  for (const OutputPath& out : outputs) ids.push_back(identity_of(out.path));
  std::vector<Identity> input_ids;
  for (const std::string& input : inputs)
    input_ids.push_back(input == "-" ? Identity{} : identity_of(input));
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    const OutputPath& out = outputs[i];
    if (out.path.empty()) continue;
    for (std::size_t j = 0; j < i; ++j) {
      const OutputPath& other = outputs[j];
      if (!other.path.empty() && same_file(ids[i], ids[j]))
        throw InputError(one_line(other.option + " " + other.path + " and " + out.option + " " +
                                  out.path + " name the same output"));
    }
    for (std::size_t k = 0; k < inputs.size(); ++k)
      if (inputs[k] != "-" && input_ids[k].exists && same_file(ids[i], input_ids[k]))
        throw InputError(
            one_line(out.option + " " + out.path + " would overwrite the input " + inputs[k]));
  }
}

void OutputSet::add(const std::string& path, std::string content) {
  outputs_.push_back({path, std::move(content)});
}

void OutputSet::commit() {
  for (const Output& out : outputs_) check_output_path(out.path);
  // Files first, staged; streams second; the renames last.
  std::vector<std::unique_ptr<StagedFile>> staged(outputs_.size());
  std::vector<std::string> targets(outputs_.size());
  for (std::size_t i = 0; i < outputs_.size(); ++i) {
    const Output& out = outputs_[i];
    if (descriptor_of(out.path) || kind_of(out.path) == Kind::kStream) continue;
    targets[i] = staging_target(out.path);
    staged[i] = std::make_unique<StagedFile>(targets[i], out.path);
    staged[i]->write(out.content, out.path);
  }
  for (std::size_t i = 0; i < outputs_.size(); ++i)
    if (!staged[i]) write_through(outputs_[i].path, outputs_[i].content);
  for (std::size_t i = 0; i < outputs_.size(); ++i)
    if (staged[i]) staged[i]->commit(outputs_[i].path);
  outputs_.clear();
}

void write_output(const std::string& path, const std::string& content) {
  OutputSet set;
  set.add(path, content);
  set.commit();
}

void write_stdout(std::string_view text) {
  write_stream(std::cout, text, "standard output");
}

void remove_staged_files() noexcept {
  for (std::size_t i = 0; i < kStagingSlots; ++i)
    if (staged_used[i].load()) ::unlink(staged_names[i]);
}

std::string markdown_for(const std::string& path, std::string markdown) {
  const char* summary = std::getenv("GITHUB_STEP_SUMMARY");
  if (summary == nullptr || *summary == '\0' || path.empty() || writes_stdout(path))
    return markdown;
  std::error_code error;
  if (!std::filesystem::is_regular_file(path, error) ||
      !std::filesystem::equivalent(path, summary, error) || error)
    return markdown;
  std::string before = read_text_file(path);
  if (before.empty()) return markdown;
  if (before.back() != '\n') before += '\n';
  return before + "\n" + markdown;
}

}  // namespace roofline
