#include "lib/core/base/input.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "lib/core/base/errors.hpp"
#include "lib/core/base/text.hpp"

namespace roofline {

std::string read_text_file(const std::filesystem::path& path) {
  auto cannot_read = [&](const std::string& why) -> std::string {
    throw InputError(one_line("cannot read " + path.string() + ": " + why));
  };
  // Non-blocking, so that opening a FIFO returns at once; refused below.
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) return cannot_read(std::strerror(errno));
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat info {};
  if (::fstat(fd, &info) != 0) return cannot_read(std::strerror(errno));
  if (S_ISDIR(info.st_mode)) return cannot_read("is a directory");
  if (!S_ISREG(info.st_mode))
    return cannot_read("not a regular file (FIFOs and devices are refused)");
  // One allocation of the file's size (plus one byte, to see its end), more only if it grows.
  std::string content(static_cast<std::size_t>(info.st_size) + 1, '\0');
  constexpr std::size_t kBlock = std::size_t{1} << 20;
  std::size_t size = 0;
  while (true) {
    if (size == content.size()) content.resize(size + kBlock);
    const ssize_t got = ::read(fd, content.data() + size, content.size() - size);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) return cannot_read(std::strerror(errno));
    if (got == 0) break;
    size += static_cast<std::size_t>(got);
  }
  content.resize(size);
  return content;
}

}  // namespace roofline
