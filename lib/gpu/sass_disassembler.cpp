#include "lib/gpu/sass_disassembler.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <vector>

#include "lib/gpu/sass_cache.hpp"

namespace roofline::gpu {
namespace {

std::string find_nvdisasm() {
  std::vector<std::filesystem::path> candidates;
#ifdef ROOFLINE_CUDA_BIN_DIR
  candidates.emplace_back(std::filesystem::path(ROOFLINE_CUDA_BIN_DIR) / "nvdisasm");
#endif
  if (const char* home = std::getenv("CUDA_HOME"); home != nullptr && *home != '\0')
    candidates.emplace_back(std::filesystem::path(home) / "bin" / "nvdisasm");
  candidates.emplace_back("/usr/local/cuda/bin/nvdisasm");
  if (const char* path = std::getenv("PATH"); path != nullptr) {
    std::string dirs = path;
    for (std::size_t at = 0; at <= dirs.size();) {
      const std::size_t colon = std::min(dirs.find(':', at), dirs.size());
      if (colon > at)
        candidates.emplace_back(std::filesystem::path(dirs.substr(at, colon - at)) / "nvdisasm");
      at = colon + 1;
    }
  }
  for (const auto& c : candidates) {
    std::error_code ec;
    if (std::filesystem::is_regular_file(c, ec) && access(c.c_str(), X_OK) == 0) return c;
  }
  return "";
}

// A temporary file holding `bytes`, removed with the object.
class TempCubin {
 public:
  explicit TempCubin(const std::string& bytes) {
    std::string pattern =
        (std::filesystem::temp_directory_path() / "cuflash-roofline-XXXXXX.cubin").string();
    const int fd = mkstemps(pattern.data(), 6);
    if (fd < 0) return;
    path_ = pattern;
    const bool ok = write(fd, bytes.data(), bytes.size()) == static_cast<ssize_t>(bytes.size());
    close(fd);
    if (!ok) {
      std::remove(path_.c_str());
      path_.clear();
    }
  }
  ~TempCubin() {
    if (!path_.empty()) std::remove(path_.c_str());
  }
  TempCubin(const TempCubin&) = delete;
  TempCubin& operator=(const TempCubin&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// nvdisasm's listing of `path` (restricted to `function` when not empty); nullopt when it fails.
std::optional<std::string> run_nvdisasm(const std::string& nvdisasm, const std::string& path,
                                        const std::string& function) {
  // The paths are ours (the toolkit's binary, a mkstemps name) and a mangled name holds no
  // quote: no shell quoting issue.
  std::string command = "'" + nvdisasm + "' -c ";
  if (!function.empty()) command += "-fun '" + function + "' ";
  command += "'" + path + "' 2>/dev/null";
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return std::nullopt;
  std::string text;
  std::array<char, 1 << 16> chunk{};
  for (std::size_t n; (n = std::fread(chunk.data(), 1, chunk.size(), pipe)) > 0;)
    text.append(chunk.data(), n);
  if (pclose(pipe) != 0) return std::nullopt;
  return text;
}

}  // namespace

SassListing disassemble_cubin(const std::string& cubin, const std::string& function,
                              std::string* why) {
  static const std::string nvdisasm = find_nvdisasm();
  if (nvdisasm.empty()) {
    if (why) *why = "no nvdisasm (CUDA toolkit) found: instructions by offset only";
    return {};
  }
  static const SassListingCache cache;
  const std::string key = SassListingCache::key(cubin, function, nvdisasm);
  if (const std::optional<std::string> cached = cache.find(key)) return parse_sass_listing(*cached);
  const TempCubin file(cubin);
  if (file.path().empty()) {
    if (why) *why = "could not write a temporary cubin for nvdisasm";
    return {};
  }
  const bool safe_name = function.find('\'') == std::string::npos;
  std::optional<std::string> text;
  if (!function.empty() && safe_name) text = run_nvdisasm(nvdisasm, file.path(), function);
  if (!text || text->empty()) text = run_nvdisasm(nvdisasm, file.path(), "");
  if (!text) {
    if (why) *why = "nvdisasm failed on a sampled module";
    return {};
  }
  cache.store(key, *text);
  return parse_sass_listing(*text);
}

}  // namespace roofline::gpu
