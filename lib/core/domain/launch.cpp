#include "lib/core/domain/launch.hpp"

#include <cxxabi.h>

#include <cstdlib>

namespace roofline {

std::string demangle(const char* name) {
  if (name == nullptr) return "";
  int status = 0;
  char* text = abi::__cxa_demangle(name, nullptr, nullptr, &status);
  if (status != 0 || text == nullptr) return name;
  std::string out(text);
  std::free(text);
  return out;
}

std::string dims_text(const std::array<int, 3>& d) {
  return std::to_string(d[0]) + "x" + std::to_string(d[1]) + "x" + std::to_string(d[2]);
}

namespace {

// Index one past the bracket that closes the one opening at `open` (for '<' or '(').
std::size_t skip_group(std::string_view text, std::size_t open) {
  const char opening = text[open];
  const char closing = opening == '<' ? '>' : ')';
  int depth = 0;
  for (std::size_t i = open; i < text.size(); ++i) {
    if (text[i] == opening) ++depth;
    if (text[i] == closing && --depth == 0) return i + 1;
  }
  return text.size();
}

}  // namespace

std::string KernelLaunch::shape_label() const {
  // A graph node shares its graph launch's index; its place in the launch tells it apart.
  return "grid " + dims_text(grid) + " block " + dims_text(block) + " #" + std::to_string(index) +
         (is_graph_node() ? "." + std::to_string(node_position) : "");
}

std::string short_kernel_name(std::string_view demangled) {
  // Drop the parameter list: the last top-level '(' group.
  std::string_view text = demangled;
  if (!text.empty() && text.back() == ')') {
    int depth = 0;
    for (std::size_t i = text.size(); i-- > 0;) {
      if (text[i] == ')') ++depth;
      if (text[i] == '(' && --depth == 0) {
        text = text.substr(0, i);
        break;
      }
    }
  }
  // Keep the last top-level word (drops the return type), without template arguments.
  std::string out;
  std::string word;
  for (std::size_t i = 0; i < text.size();) {
    const char c = text[i];
    if (c == '<') {
      // "operator<" and friends aside, '<' opens template arguments: skip them.
      i = skip_group(text, i);
      continue;
    }
    if (c == '(') {  // "(anonymous namespace)" is part of the name
      const std::size_t end = skip_group(text, i);
      word += text.substr(i, end - i);
      i = end;
      continue;
    }
    if (c == ' ') {
      if (!word.empty()) out = word;
      word.clear();
      ++i;
      continue;
    }
    word += c;
    ++i;
  }
  if (!word.empty()) out = word;
  return out.empty() ? std::string(demangled) : out;
}

bool same_launch_shape(const KernelLaunch& a, const KernelLaunch& b) {
  return a.grid == b.grid && a.block == b.block;
}

}  // namespace roofline
