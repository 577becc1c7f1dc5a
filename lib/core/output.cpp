#include "lib/core/output.hpp"

#include <sys/stat.h>
#include <unistd.h>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>

#include "lib/core/errors.hpp"

namespace roofline {

void check_output_path(const std::string& path) {
  if (path == "-") return;
  namespace fs = std::filesystem;
  const fs::path target(path);
  std::error_code error;
  if (fs::is_directory(target, error))
    throw InputError("cannot write " + path + ": is a directory");
  fs::path dir = target.parent_path();
  if (dir.empty()) dir = ".";
  if (!fs::is_directory(dir, error))
    throw InputError("cannot write " + path + ": directory " + dir.string() + " does not exist");
  if (access(dir.c_str(), W_OK) != 0)
    throw InputError("cannot write " + path + ": " + std::strerror(errno));
  if (fs::exists(target, error) && access(target.c_str(), W_OK) != 0)
    throw InputError("cannot write " + path + ": " + std::strerror(errno));
}

void write_output(const std::string& path, const std::string& content) {
  if (path == "-") {
    std::cout << content << std::flush;
    return;
  }
  check_output_path(path);
  std::string temp = path + ".tmp.XXXXXX";
  int fd = mkstemp(temp.data());
  if (fd < 0) throw InputError("cannot write " + path + ": " + std::strerror(errno));
  std::size_t written = 0;
  while (written < content.size()) {
    ssize_t n = ::write(fd, content.data() + written, content.size() - written);
    if (n < 0) {
      const int saved = errno;
      ::close(fd);
      std::remove(temp.c_str());
      throw InputError("cannot write " + path + ": " + std::strerror(saved));
    }
    written += static_cast<std::size_t>(n);
  }
  if (::fsync(fd) != 0 || ::close(fd) != 0 || std::rename(temp.c_str(), path.c_str()) != 0) {
    const int saved = errno;
    std::remove(temp.c_str());
    throw InputError("cannot write " + path + ": " + std::strerror(saved));
  }
  // mkstemp creates 0600; give the file the usual permissions.
  ::chmod(path.c_str(), 0644);
}

std::string read_text_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError("cannot read " + path.string() + ": " + std::strerror(errno));
  std::ostringstream content;
  content << in.rdbuf();
  if (in.bad()) throw InputError("cannot read " + path.string() + ": read error");
  return content.str();
}

}  // namespace roofline
