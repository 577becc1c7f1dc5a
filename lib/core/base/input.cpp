#include "lib/core/base/input.hpp"

#include <cerrno>
#include <cstring>
#include <fstream>

#include "lib/core/base/errors.hpp"
#include "lib/core/base/text.hpp"

namespace roofline {

std::string read_text_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(one_line("cannot read " + path.string() + ": " + std::strerror(errno)));
  // In blocks into one string: a report of several hundred MB is copied once, not three times.
  std::string content;
  constexpr std::size_t kBlock = std::size_t{1} << 20;
  for (std::size_t size = 0;; size += static_cast<std::size_t>(in.gcount())) {
    content.resize(size + kBlock);
    in.read(content.data() + size, static_cast<std::streamsize>(kBlock));
    if (in.gcount() < static_cast<std::streamsize>(kBlock)) {
      content.resize(size + static_cast<std::size_t>(in.gcount()));
      break;
    }
  }
  if (in.bad()) throw InputError(one_line("cannot read " + path.string() + ": read error"));
  return content;
}

}  // namespace roofline
