#include "lib/inject/node_replay.hpp"

#include <algorithm>
#include <cstring>
#include <functional>
#include <queue>
#include <utility>

namespace roofline::inject {
namespace {

const char* type_name(CUgraphNodeType type) {
  switch (type) {
    case CU_GRAPH_NODE_TYPE_HOST:
      return "host function";
    case CU_GRAPH_NODE_TYPE_GRAPH:
      return "child graph";
    case CU_GRAPH_NODE_TYPE_MEM_ALLOC:
      return "memory allocation";
    case CU_GRAPH_NODE_TYPE_MEM_FREE:
      return "memory free";
    case CU_GRAPH_NODE_TYPE_EXT_SEMAS_SIGNAL:
    case CU_GRAPH_NODE_TYPE_EXT_SEMAS_WAIT:
      return "external semaphore";
    case CU_GRAPH_NODE_TYPE_BATCH_MEM_OP:
      return "batch memory operation";
    case CU_GRAPH_NODE_TYPE_CONDITIONAL:
      return "conditional";
    default:
      return "unknown";
  }
}

ReplayPlan refused(std::string why) {
  return ReplayPlan{{}, std::move(why)};
}

// The graph's nodes in an order its edges allow, earlier-listed nodes first among the ready
// ones (the list is the order of creation: of capture, for a captured graph). Empty when the
// driver cannot list them or the edges hold a cycle.
std::vector<CUgraphNode> ordered_nodes(const Driver& driver, CUgraph graph, std::string* why) {
  std::size_t count = 0, edges = 0;
  CUresult r = driver.graph_get_nodes(graph, nullptr, &count);
  if (r == CUDA_SUCCESS) r = driver.graph_get_edges(graph, nullptr, nullptr, nullptr, &edges);
  std::vector<CUgraphNode> nodes(count);
  std::vector<CUgraphNode> from(edges), to(edges);
  std::vector<CUgraphEdgeData> data(edges);
  if (r == CUDA_SUCCESS && count > 0) r = driver.graph_get_nodes(graph, nodes.data(), &count);
  if (r == CUDA_SUCCESS && edges > 0)
    r = driver.graph_get_edges(graph, from.data(), to.data(), data.data(), &edges);
  if (r != CUDA_SUCCESS) {
    *why = driver.describe("listing the graph's nodes and edges", r);
    return {};
  }
  nodes.resize(count);
  std::map<CUgraphNode, std::size_t> index;
  for (std::size_t i = 0; i < nodes.size(); ++i) index[nodes[i]] = i;
  std::vector<std::vector<std::size_t>> next(nodes.size());
  std::vector<std::size_t> waiting(nodes.size(), 0);
  for (std::size_t e = 0; e < std::min({edges, from.size(), to.size()}); ++e) {
    const auto a = index.find(from[e]), b = index.find(to[e]);
    if (a == index.end() || b == index.end()) continue;
    next[a->second].push_back(b->second);
    ++waiting[b->second];
  }
  std::priority_queue<std::size_t, std::vector<std::size_t>, std::greater<>> ready;
  for (std::size_t i = 0; i < nodes.size(); ++i)
    if (waiting[i] == 0) ready.push(i);
  std::vector<CUgraphNode> order;
  while (!ready.empty()) {
    const std::size_t i = ready.top();
    ready.pop();
    order.push_back(nodes[i]);
    for (std::size_t j : next[i])
      if (--waiting[j] == 0) ready.push(j);
  }
  if (order.size() != nodes.size()) {
    *why = "the graph's edges hold a cycle";
    return {};
  }
  return order;
}

// The launch attributes of kernel node `node` that change how it runs, where set.
std::vector<CUlaunchAttribute> attributes_of(const Driver& driver, CUgraphNode node) {
  std::vector<CUlaunchAttribute> out;
  for (CUlaunchAttributeID id : {CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION,
                                 CU_LAUNCH_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE,
                                 CU_LAUNCH_ATTRIBUTE_COOPERATIVE, CU_LAUNCH_ATTRIBUTE_PRIORITY}) {
    CUkernelNodeAttrValue value{};
    if (driver.graph_kernel_node_get_attribute(node, id, &value) != CUDA_SUCCESS) continue;
    const bool set = id == CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION ? value.clusterDim.x != 0
                     : id == CU_LAUNCH_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE
                         ? value.clusterSchedulingPolicyPreference != 0
                     : id == CU_LAUNCH_ATTRIBUTE_COOPERATIVE ? value.cooperative != 0
                                                             : value.priority != 0;
    if (!set) continue;
    CUlaunchAttribute attribute{};
    attribute.id = id;
    attribute.value = value;
    out.push_back(attribute);
  }
  return out;
}

// Fills `out` with kernel node `node`'s launch; false with `why` when it cannot be replayed.
bool read_kernel(const Driver& driver, CUgraphNode node, ReplayNode& out, std::string* why) {
  CUDA_KERNEL_NODE_PARAMS_v2 p{};
  if (driver.graph_kernel_node_get_params(node, &p) != CUDA_SUCCESS) {
    *why = "the driver did not give a kernel node's parameters";
    return false;
  }
  out.function = p.func;
  if (out.function == nullptr && p.kern != nullptr && driver.kernel_get_function != nullptr)
    driver.kernel_get_function(&out.function, p.kern);
  if (out.function == nullptr) {
    *why = "a kernel node's function is not known to the driver";
    return false;
  }
  if (p.extra != nullptr && p.kernelParams == nullptr) {
    // The arguments as one buffer (CU_LAUNCH_PARAM_BUFFER_POINTER and _SIZE), copied.
    const void* buffer = nullptr;
    std::size_t size = 0;
    bool sized = false;
    for (std::size_t i = 0; i < 64 && p.extra[i] != CU_LAUNCH_PARAM_END; i += 2) {
      if (p.extra[i] == CU_LAUNCH_PARAM_BUFFER_POINTER) buffer = p.extra[i + 1];
      if (p.extra[i] == CU_LAUNCH_PARAM_BUFFER_SIZE && p.extra[i + 1] != nullptr) {
        size = *static_cast<const std::size_t*>(p.extra[i + 1]);
        sized = true;
      }
    }
    if (!sized || (buffer == nullptr && size > 0)) {
      *why = "a kernel node's argument buffer (`extra`) has no pointer or size";
      return false;
    }
    out.packed = true;
    out.arguments.resize(size);
    if (size > 0) std::memcpy(out.arguments.data(), buffer, size);
  }
  out.grid = {p.gridDimX, p.gridDimY, p.gridDimZ};
  out.block = {p.blockDimX, p.blockDimY, p.blockDimZ};
  out.shared_bytes = p.sharedMemBytes;
  out.attributes = attributes_of(driver, node);
  if (out.packed) return true;
  // The values of its parameters, copied: the graph that holds them may be destroyed.
  std::vector<std::pair<std::size_t, std::size_t>> params;  // offset, size
  for (std::size_t i = 0;; ++i) {
    std::size_t offset = 0, size = 0;
    if (driver.func_get_param_info(out.function, i, &offset, &size) != CUDA_SUCCESS) break;
    params.emplace_back(offset, size);
  }
  if (!params.empty() && p.kernelParams == nullptr) {
    *why = "a kernel node has no argument values";
    return false;
  }
  std::size_t total = 0;
  for (const auto& [offset, size] : params) total = std::max(total, offset + size);
  out.arguments.assign(total, std::byte{0});
  for (std::size_t i = 0; i < params.size(); ++i) {
    if (p.kernelParams[i] == nullptr) {
      *why = "a kernel node lacks an argument value";
      return false;
    }
    std::memcpy(out.arguments.data() + params[i].first, p.kernelParams[i], params[i].second);
    out.offsets.push_back(params[i].first);
  }
  return true;
}

}  // namespace

ReplayPlan plan_replay(const Driver& driver, CUgraph graph,
                       const std::function<std::uint64_t(CUgraphNode)>& clone_of) {
  if (driver.graph_get_nodes == nullptr || driver.graph_get_edges == nullptr ||
      driver.graph_node_get_type == nullptr || driver.graph_kernel_node_get_params == nullptr ||
      driver.graph_kernel_node_get_attribute == nullptr ||
      driver.graph_memcpy_node_get_params == nullptr ||
      driver.graph_memset_node_get_params == nullptr || driver.func_get_param_info == nullptr ||
      driver.launch_kernel_ex == nullptr || driver.memcpy_3d_async == nullptr ||
      driver.memset_d2d8_async == nullptr || driver.memset_d2d16_async == nullptr ||
      driver.memset_d2d32_async == nullptr)
    return refused("the CUDA driver lacks what replaying a node alone needs (CUDA 12.4 or newer)");
  std::string why;
  const std::vector<CUgraphNode> order = ordered_nodes(driver, graph, &why);
  if (!why.empty()) return refused(why);
  ReplayPlan plan;
  for (CUgraphNode node : order) {
    CUgraphNodeType type{};
    if (driver.graph_node_get_type(node, &type) != CUDA_SUCCESS)
      return refused("the driver did not give a node's type");
    if (type == CU_GRAPH_NODE_TYPE_EMPTY || type == CU_GRAPH_NODE_TYPE_EVENT_RECORD ||
        type == CU_GRAPH_NODE_TYPE_WAIT_EVENT)
      continue;  // no work on the device's memory: the graph launch itself records and waits
    if (type != CU_GRAPH_NODE_TYPE_KERNEL && type != CU_GRAPH_NODE_TYPE_MEMCPY &&
        type != CU_GRAPH_NODE_TYPE_MEMSET)
      return refused(std::string("the graph holds a ") + type_name(type) +
                     " node, which cannot run alone");
    ReplayNode r;
    r.node_id = clone_of(node);
    if (r.node_id == 0)
      return refused("the instantiation's clone of a node was not reported by CUPTI");
    if (type == CU_GRAPH_NODE_TYPE_KERNEL) {
      if (!read_kernel(driver, node, r, &why)) return refused(why);
    } else if (type == CU_GRAPH_NODE_TYPE_MEMCPY) {
      r.kind = ReplayNode::Kind::kMemcpy;
      if (driver.graph_memcpy_node_get_params(node, &r.copy) != CUDA_SUCCESS)
        return refused("the driver did not give a memcpy node's parameters");
    } else {
      r.kind = ReplayNode::Kind::kMemset;
      if (driver.graph_memset_node_get_params(node, &r.set) != CUDA_SUCCESS)
        return refused("the driver did not give a memset node's parameters");
      const unsigned element = r.set.elementSize;
      if (element != 1 && element != 2 && element != 4)
        return refused("a memset node of " + std::to_string(element) + "-byte elements");
    }
    plan.nodes.push_back(std::move(r));
  }
  return plan;
}

CUresult replay_node(const Driver& driver, const ReplayNode& node, CUstream stream) {
  switch (node.kind) {
    case ReplayNode::Kind::kKernel: {
      std::vector<std::byte> arguments = node.arguments;  // the driver reads them at the launch
      std::vector<void*> params;
      for (std::size_t offset : node.offsets) params.push_back(arguments.data() + offset);
      std::vector<CUlaunchAttribute> attributes = node.attributes;
      CUlaunchConfig config{};
      config.gridDimX = node.grid[0];
      config.gridDimY = node.grid[1];
      config.gridDimZ = node.grid[2];
      config.blockDimX = node.block[0];
      config.blockDimY = node.block[1];
      config.blockDimZ = node.block[2];
      config.sharedMemBytes = node.shared_bytes;
      config.hStream = stream;
      config.attrs = attributes.empty() ? nullptr : attributes.data();
      config.numAttrs = static_cast<unsigned>(attributes.size());
      if (node.packed) {
        std::size_t size = arguments.size();
        void* extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, arguments.data(),
                         CU_LAUNCH_PARAM_BUFFER_SIZE, &size, CU_LAUNCH_PARAM_END};
        return driver.launch_kernel_ex(&config, node.function, nullptr, extra);
      }
      return driver.launch_kernel_ex(&config, node.function,
                                     params.empty() ? nullptr : params.data(), nullptr);
    }
    case ReplayNode::Kind::kMemcpy:
      return driver.memcpy_3d_async(&node.copy, stream);
    case ReplayNode::Kind::kMemset: {
      const CUDA_MEMSET_NODE_PARAMS& s = node.set;
      // One row: the pitch is not read, but the driver checks it against the row's bytes.
      const std::size_t pitch =
          s.height <= 1 ? std::max<std::size_t>(s.pitch, s.width * s.elementSize) : s.pitch;
      if (s.elementSize == 1)
        return driver.memset_d2d8_async(s.dst, pitch, static_cast<unsigned char>(s.value), s.width,
                                        s.height, stream);
      if (s.elementSize == 2)
        return driver.memset_d2d16_async(s.dst, pitch, static_cast<unsigned short>(s.value),
                                         s.width, s.height, stream);
      return driver.memset_d2d32_async(s.dst, pitch, s.value, s.width, s.height, stream);
    }
  }
  return CUDA_ERROR_INVALID_VALUE;
}

void ReplayPlans::add(std::uint32_t exec, ReplayPlan plan) {
  std::lock_guard<std::mutex> lock(mutex_);
  plans_[exec] = std::make_shared<const ReplayPlan>(std::move(plan));
}

void ReplayPlans::changed(std::uint32_t exec, const std::string& call) {
  std::lock_guard<std::mutex> lock(mutex_);
  plans_[exec] = std::make_shared<const ReplayPlan>(
      refused("the executable graph was changed after its instantiation (" + call +
              "): its nodes are not replayed"));
}

std::shared_ptr<const ReplayPlan> ReplayPlans::find(std::uint32_t exec) const {
  std::lock_guard<std::mutex> lock(mutex_);
  if (auto it = plans_.find(exec); it != plans_.end()) return it->second;
  static const auto unseen = std::make_shared<const ReplayPlan>(
      refused("the executable graph's instantiation was not seen"));
  return unseen;
}

}  // namespace roofline::inject
