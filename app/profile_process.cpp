#include "app/profile_process.hpp"

#include <elf.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <string_view>

#include "lib/core/base/errors.hpp"
#include "lib/core/base/input.hpp"
#include "lib/core/base/output.hpp"
#include "lib/core/base/text.hpp"

namespace roofline::app {
namespace {

constexpr const char* kInjectionName = "libcuflash_roofline_inject.so";

bool is_regular_file(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

// True when `image` is a 64-bit ELF shared object whose dynamic symbol table defines the
// function `symbol`. Every offset is checked against the image before it is read.
bool elf_exports(std::string_view image, std::string_view symbol) {
  auto fits = [&](std::uint64_t offset, std::uint64_t size) {
    return offset <= image.size() && size <= image.size() - offset;
  };
  Elf64_Ehdr header;
  if (!fits(0, sizeof header)) return false;
  std::memcpy(&header, image.data(), sizeof header);
  if (std::memcmp(header.e_ident, ELFMAG, SELFMAG) != 0 || header.e_ident[EI_CLASS] != ELFCLASS64 ||
      header.e_ident[EI_DATA] != ELFDATA2LSB || header.e_type != ET_DYN ||
      header.e_shentsize != sizeof(Elf64_Shdr))
    return false;
  auto section = [&](std::uint64_t index, Elf64_Shdr* out) {
    if (index >= header.e_shnum ||
        !fits(header.e_shoff + index * sizeof(Elf64_Shdr), sizeof(Elf64_Shdr)))
      return false;
    std::memcpy(out, image.data() + header.e_shoff + index * sizeof(Elf64_Shdr), sizeof *out);
    return true;
  };
  if (header.e_shoff > image.size()) return false;
  for (std::uint64_t i = 0; i < header.e_shnum; ++i) {
    Elf64_Shdr symbols, names;
    if (!section(i, &symbols)) return false;
    if (symbols.sh_type != SHT_DYNSYM || !fits(symbols.sh_offset, symbols.sh_size) ||
        !section(symbols.sh_link, &names) || !fits(names.sh_offset, names.sh_size))
      continue;
    const std::string_view strings(image.data() + names.sh_offset, names.sh_size);
    for (std::uint64_t at = 0; at + sizeof(Elf64_Sym) <= symbols.sh_size; at += sizeof(Elf64_Sym)) {
      Elf64_Sym entry;
      std::memcpy(&entry, image.data() + symbols.sh_offset + at, sizeof entry);
      if (entry.st_shndx == SHN_UNDEF || ELF64_ST_TYPE(entry.st_info) != STT_FUNC ||
          entry.st_name >= strings.size())
        continue;
      const std::string_view name = strings.substr(entry.st_name);
      if (name.substr(0, name.find('\0')) == symbol) return true;
    }
  }
  return false;
}

// `path` itself, once checked to be an injection library.
std::filesystem::path checked_injection(const std::filesystem::path& path,
                                        const std::string& shown) {
  if (!elf_exports(read_text_file(path), "InitializeInjection"))
    throw InputError(shown +
                     " is not an injection library (an ELF shared object exporting "
                     "InitializeInjection)");
  return path;
}

}  // namespace

std::string resolve_program(const std::string& name) {
  if (name.empty()) throw InputError("profile: no program given");
  auto check = [&](const std::string& path) {
    if (!is_regular_file(path)) return false;
    if (::access(path.c_str(), X_OK) != 0) throw InputError(name + ": not executable");
    return true;
  };
  if (name.find('/') != std::string::npos) {
    if (!check(name)) throw InputError(name + ": not found");
    return name;
  }
  const char* path_variable = std::getenv("PATH");
  for (const std::string& dir :
       split(path_variable != nullptr ? path_variable : "/usr/bin:/bin", ':')) {
    const std::string candidate = (dir.empty() ? "." : dir) + "/" + name;
    if (is_regular_file(candidate) && ::access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  throw InputError(name + ": not found on PATH");
}

std::filesystem::path find_injection_library(const std::string& option) {
  namespace fs = std::filesystem;
  if (!option.empty()) {
    if (!is_regular_file(option)) throw InputError("--injection " + option + ": no such file");
    return checked_injection(fs::absolute(option), "--injection " + option);
  }
  std::error_code error;
  const fs::path self = fs::read_symlink("/proc/self/exe", error);
  std::vector<fs::path> candidates;
  if (!error) {
    candidates.push_back(self.parent_path() / kInjectionName);
    candidates.push_back(self.parent_path().parent_path() / "lib" / kInjectionName);
  }
  for (const fs::path& candidate : candidates)
    if (is_regular_file(candidate.string()))
      return checked_injection(candidate, candidate.string());
  std::string looked;
  for (const fs::path& candidate : candidates)
    looked += (looked.empty() ? "" : ", ") + candidate.string();
  throw InputError(std::string(kInjectionName) + " not found (looked in " + looked +
                   "; a build without CUDA has none): pass --injection PATH");
}

ChildStatus run_program(const std::string& program, const std::vector<std::string>& argv,
                        const std::map<std::string, std::string>& environment) {
  SpawnOptions options;
  options.argv = argv;
  options.argv.at(0) = program;
  for (const auto& [name, value] : environment) options.env.push_back(name + "=" + value);
  ChildProcess child(options);
  return child.wait();
}

}  // namespace roofline::app
