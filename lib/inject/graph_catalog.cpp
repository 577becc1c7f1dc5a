#include "lib/inject/graph_catalog.hpp"

#include <utility>

namespace roofline::inject {
namespace {

// Origins kept: PyTorch's graph trees and servers capture a bounded number of graphs, but a
// program that captures in a loop must not grow this without end (the oldest ids go first).
constexpr std::size_t kMaxOrigins = std::size_t{1} << 20;

// The executable graph the calling thread is instantiating, if any.
thread_local std::optional<GraphExecNodes> t_building;

}  // namespace

void GraphCatalog::created(std::uint64_t node, NodeOrigin origin) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (origins_.size() >= kMaxOrigins) origins_.erase(origins_.begin());
  // Instantiation creates the clones too, and their clone callback may come first: the origin a
  // clone carries is kept.
  origins_.try_emplace(node, std::move(origin));
}

void GraphCatalog::cloned(std::uint64_t node, std::uint64_t original, bool kernel_node) {
  std::lock_guard<std::mutex> lock(mutex_);
  std::string kernel;
  if (auto it = origins_.find(original); it != origins_.end()) {
    NodeOrigin copy = it->second;  // copied first: the insertion may move the map's nodes
    kernel = copy.kernel;
    if (origins_.size() >= kMaxOrigins) origins_.erase(origins_.begin());
    origins_[node] = std::move(copy);
  }
  // A clone whose original the capture named is a kernel node whatever its reported type (the
  // type is not relied on alone).
  if (t_building && (kernel_node || !kernel.empty())) t_building->kernels.push_back(kernel);
  if (clones_.size() >= kMaxOrigins) clones_.erase(clones_.begin());
  clones_[original] = node;
}

void GraphCatalog::exec_starting() {
  t_building = GraphExecNodes{};
}

void GraphCatalog::exec_created(std::uint32_t exec) {
  if (!t_building) return;
  std::lock_guard<std::mutex> lock(mutex_);
  execs_[exec] = std::move(*t_building);
  t_building.reset();
}

std::optional<NodeOrigin> GraphCatalog::origin(std::uint64_t node) const {
  std::lock_guard<std::mutex> lock(mutex_);
  if (auto it = origins_.find(node); it != origins_.end()) return it->second;
  return std::nullopt;
}

std::optional<GraphExecNodes> GraphCatalog::exec_nodes(std::uint32_t exec) const {
  std::lock_guard<std::mutex> lock(mutex_);
  if (auto it = execs_.find(exec); it != execs_.end()) return it->second;
  return std::nullopt;
}

std::uint64_t GraphCatalog::latest_clone(std::uint64_t node) const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::uint64_t latest = 0;
  // A few hops at most: a chain is as long as the clones one instantiation makes.
  for (int hop = 0; hop < 8; ++hop) {
    const auto it = clones_.find(node);
    if (it == clones_.end() || it->second == node) break;
    latest = node = it->second;
  }
  return latest;
}

}  // namespace roofline::inject
