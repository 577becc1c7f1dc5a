// The pieces of `profile --graph-nodes counted` that need no GPU: reading a graph's nodes for
// their replays (through a fake driver), following a node's clones, and the NVTX ranges a node
// captured on a thread without any takes from the thread waiting on it.
#include <doctest/doctest.h>

#include <cstdint>
#include <cstring>
#include <map>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "lib/inject/graph_catalog.hpp"
#include "lib/inject/node_replay.hpp"
#include "lib/inject/nvtx_ranges.hpp"

namespace roofline::inject {
namespace {

// A graph as the fake driver lists it.
struct FakeGraph {
  std::vector<CUgraphNode> nodes;
  std::vector<std::pair<CUgraphNode, CUgraphNode>> edges;  // from, to
  std::map<CUgraphNode, CUgraphNodeType> types;
  std::map<CUgraphNode, CUDA_KERNEL_NODE_PARAMS_v2> kernels;
  std::map<CUgraphNode, CUDA_MEMSET_NODE_PARAMS> memsets;
  std::map<CUgraphNode, CUlaunchAttributeValue> clusters;
  std::vector<std::size_t> param_sizes;  // of every kernel's parameters, packed in order
};
FakeGraph g_graph;

// What the fake driver was asked to launch.
struct Launched {
  CUlaunchConfig config{};
  std::vector<CUlaunchAttribute> attributes;
  std::vector<std::vector<std::byte>> arguments;  // each parameter's bytes
  std::vector<std::byte> buffer;                  // an `extra` launch's buffer
  std::size_t memset_pitch = 0;
};
Launched g_launched;

CUgraphNode handle(int i) {
  return reinterpret_cast<CUgraphNode>(static_cast<std::uintptr_t>(i + 1) * 16);
}

CUresult get_nodes(CUgraph, CUgraphNode* out, size_t* count) {
  if (out != nullptr) std::copy(g_graph.nodes.begin(), g_graph.nodes.begin() + *count, out);
  *count = g_graph.nodes.size();
  return CUDA_SUCCESS;
}

CUresult get_edges(CUgraph, CUgraphNode* from, CUgraphNode* to, CUgraphEdgeData*, size_t* count) {
  if (from != nullptr)
    for (std::size_t e = 0; e < *count; ++e) {
      from[e] = g_graph.edges[e].first;
      to[e] = g_graph.edges[e].second;
    }
  *count = g_graph.edges.size();
  return CUDA_SUCCESS;
}

CUresult get_type(CUgraphNode node, CUgraphNodeType* type) {
  *type = g_graph.types.at(node);
  return CUDA_SUCCESS;
}

CUresult get_kernel(CUgraphNode node, CUDA_KERNEL_NODE_PARAMS_v2* p) {
  *p = g_graph.kernels.at(node);
  return CUDA_SUCCESS;
}

CUresult get_attribute(CUgraphNode node, CUkernelNodeAttrID id, CUkernelNodeAttrValue* value) {
  const auto it = g_graph.clusters.find(node);
  if (id != CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION || it == g_graph.clusters.end()) {
    *value = {};
    return id == CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
  }
  *value = it->second;
  return CUDA_SUCCESS;
}

CUresult get_memcpy(CUgraphNode, CUDA_MEMCPY3D* p) {
  *p = {};
  return CUDA_SUCCESS;
}

CUresult get_memset(CUgraphNode node, CUDA_MEMSET_NODE_PARAMS* p) {
  *p = g_graph.memsets.at(node);
  return CUDA_SUCCESS;
}

CUresult param_info(CUfunction, size_t index, size_t* offset, size_t* size) {
  if (index >= g_graph.param_sizes.size()) return CUDA_ERROR_INVALID_VALUE;
  *offset = 0;
  for (std::size_t i = 0; i < index; ++i) *offset += g_graph.param_sizes[i];
  *size = g_graph.param_sizes[index];
  return CUDA_SUCCESS;
}

CUresult launch_ex(const CUlaunchConfig* config, CUfunction, void** params, void** extra) {
  g_launched = {};
  g_launched.config = *config;
  g_launched.attributes.assign(config->attrs, config->attrs + config->numAttrs);
  for (std::size_t i = 0; params != nullptr && i < g_graph.param_sizes.size(); ++i) {
    const auto* bytes = static_cast<const std::byte*>(params[i]);
    g_launched.arguments.emplace_back(bytes, bytes + g_graph.param_sizes[i]);
  }
  if (extra != nullptr) {
    CHECK(extra[0] == CU_LAUNCH_PARAM_BUFFER_POINTER);
    CHECK(extra[2] == CU_LAUNCH_PARAM_BUFFER_SIZE);
    CHECK(extra[4] == CU_LAUNCH_PARAM_END);
    const auto* bytes = static_cast<const std::byte*>(extra[1]);
    g_launched.buffer.assign(bytes, bytes + *static_cast<const std::size_t*>(extra[3]));
  }
  return CUDA_SUCCESS;
}

CUresult memcpy_async(const CUDA_MEMCPY3D*, CUstream) {
  return CUDA_SUCCESS;
}

CUresult memset32(CUdeviceptr, size_t pitch, unsigned, size_t, size_t, CUstream) {
  g_launched.memset_pitch = pitch;
  return CUDA_SUCCESS;
}
CUresult memset16(CUdeviceptr, size_t, unsigned short, size_t, size_t, CUstream) {
  return CUDA_SUCCESS;
}
CUresult memset8(CUdeviceptr, size_t, unsigned char, size_t, size_t, CUstream) {
  return CUDA_SUCCESS;
}

Driver fake_driver() {
  Driver d;
  d.graph_get_nodes = get_nodes;
  d.graph_get_edges = get_edges;
  d.graph_node_get_type = get_type;
  d.graph_kernel_node_get_params = get_kernel;
  d.graph_kernel_node_get_attribute = get_attribute;
  d.graph_memcpy_node_get_params = get_memcpy;
  d.graph_memset_node_get_params = get_memset;
  d.func_get_param_info = param_info;
  d.launch_kernel_ex = launch_ex;
  d.memcpy_3d_async = memcpy_async;
  d.memset_d2d8_async = memset8;
  d.memset_d2d16_async = memset16;
  d.memset_d2d32_async = memset32;
  return d;
}

// Node i's clone is 100 + i.
std::uint64_t clone_of(CUgraphNode node) {
  for (std::size_t i = 0; i < g_graph.nodes.size(); ++i)
    if (g_graph.nodes[i] == node) return 100 + i;
  return 0;
}

CUfunction some_function() {
  return reinterpret_cast<CUfunction>(std::uintptr_t{0x1000});
}

// A graph of `types.size()` nodes, kernels with two parameters (a pointer and an int).
void make_graph(const std::vector<CUgraphNodeType>& types) {
  g_graph = {};
  g_graph.param_sizes = {8, 4};
  for (std::size_t i = 0; i < types.size(); ++i) {
    const CUgraphNode node = handle(static_cast<int>(i));
    g_graph.nodes.push_back(node);
    g_graph.types[node] = types[i];
  }
}

}  // namespace

TEST_CASE("node replay: the nodes in an order their edges allow, the earlier-listed first") {
  make_graph({CU_GRAPH_NODE_TYPE_MEMCPY, CU_GRAPH_NODE_TYPE_MEMCPY, CU_GRAPH_NODE_TYPE_MEMCPY,
              CU_GRAPH_NODE_TYPE_MEMCPY});
  // 2 before 0, 1 before 3: ready at first 1 and 2.
  g_graph.edges = {{handle(2), handle(0)}, {handle(1), handle(3)}};
  const ReplayPlan plan = plan_replay(fake_driver(), nullptr, clone_of);
  REQUIRE(plan.why.empty());
  std::vector<std::uint64_t> order;
  for (const ReplayNode& node : plan.nodes) order.push_back(node.node_id);
  CHECK(order == std::vector<std::uint64_t>{101, 102, 100, 103});

  g_graph.edges.emplace_back(handle(0), handle(2));  // a cycle
  CHECK(plan_replay(fake_driver(), nullptr, clone_of).why == "the graph's edges hold a cycle");
}

TEST_CASE("node replay: a kernel node's arguments are copied and launched as captured") {
  make_graph({CU_GRAPH_NODE_TYPE_KERNEL, CU_GRAPH_NODE_TYPE_EMPTY, CU_GRAPH_NODE_TYPE_EVENT_RECORD,
              CU_GRAPH_NODE_TYPE_MEMSET});
  std::uint64_t pointer = 0xdeadbeef00;
  int count = 4096;
  void* values[] = {&pointer, &count};
  CUDA_KERNEL_NODE_PARAMS_v2 p{};
  p.func = some_function();
  p.gridDimX = 132;
  p.gridDimY = 2;
  p.gridDimZ = 1;
  p.blockDimX = 384;
  p.blockDimY = p.blockDimZ = 1;
  p.sharedMemBytes = 200 * 1024;
  p.kernelParams = values;
  g_graph.kernels[handle(0)] = p;
  CUlaunchAttributeValue cluster{};
  cluster.clusterDim.x = 2;
  cluster.clusterDim.y = cluster.clusterDim.z = 1;
  g_graph.clusters[handle(0)] = cluster;
  CUDA_MEMSET_NODE_PARAMS set{};
  set.dst = 0x5000;
  set.elementSize = 4;
  set.width = 1000;
  set.height = 1;
  set.pitch = 0;
  g_graph.memsets[handle(3)] = set;

  const ReplayPlan plan = plan_replay(fake_driver(), nullptr, clone_of);
  REQUIRE(plan.why.empty());
  REQUIRE(plan.nodes.size() == 2);  // the empty and event nodes do no work of their own
  // The graph may be destroyed after its instantiation: the plan holds its own copy.
  pointer = 0;
  count = -1;
  const Driver driver = fake_driver();
  REQUIRE(replay_node(driver, plan.nodes[0], nullptr) == CUDA_SUCCESS);
  CHECK(g_launched.config.gridDimX == 132);
  CHECK(g_launched.config.gridDimY == 2);
  CHECK(g_launched.config.blockDimX == 384);
  CHECK(g_launched.config.sharedMemBytes == 200 * 1024);
  REQUIRE(g_launched.arguments.size() == 2);
  std::uint64_t pointer_back = 0;
  int count_back = 0;
  std::memcpy(&pointer_back, g_launched.arguments[0].data(), 8);
  std::memcpy(&count_back, g_launched.arguments[1].data(), 4);
  CHECK(pointer_back == 0xdeadbeef00);
  CHECK(count_back == 4096);
  REQUIRE(g_launched.attributes.size() == 1);
  CHECK(g_launched.attributes[0].id == CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION);
  CHECK(g_launched.attributes[0].value.clusterDim.x == 2);
  // A one-row memset: its pitch at least the row, as the driver checks.
  CHECK(plan.nodes[1].node_id == 103);
  REQUIRE(replay_node(driver, plan.nodes[1], nullptr) == CUDA_SUCCESS);
  CHECK(g_launched.memset_pitch == 4000);
}

TEST_CASE("node replay: arguments passed as one buffer (`extra`) are copied too") {
  make_graph({CU_GRAPH_NODE_TYPE_KERNEL});
  std::vector<std::byte> buffer(24, std::byte{7});
  std::size_t size = buffer.size();
  void* extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, buffer.data(), CU_LAUNCH_PARAM_BUFFER_SIZE,
                   &size, CU_LAUNCH_PARAM_END};
  CUDA_KERNEL_NODE_PARAMS_v2 p{};
  p.func = some_function();
  p.gridDimX = p.gridDimY = p.gridDimZ = 1;
  p.blockDimX = p.blockDimY = p.blockDimZ = 32;
  p.extra = extra;
  g_graph.kernels[handle(0)] = p;
  const ReplayPlan plan = plan_replay(fake_driver(), nullptr, clone_of);
  REQUIRE(plan.why.empty());
  buffer.assign(24, std::byte{0});
  REQUIRE(replay_node(fake_driver(), plan.nodes[0], nullptr) == CUDA_SUCCESS);
  CHECK(g_launched.buffer == std::vector<std::byte>(24, std::byte{7}));

  void* no_size[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, buffer.data(), CU_LAUNCH_PARAM_END};
  g_graph.kernels[handle(0)].extra = no_size;
  CHECK(plan_replay(fake_driver(), nullptr, clone_of).why ==
        "a kernel node's argument buffer (`extra`) has no pointer or size");
}

TEST_CASE("node replay: a graph that cannot run node by node says why") {
  SUBCASE("a host function") {
    make_graph({CU_GRAPH_NODE_TYPE_MEMCPY, CU_GRAPH_NODE_TYPE_HOST});
    CHECK(plan_replay(fake_driver(), nullptr, clone_of).why ==
          "the graph holds a host function node, which cannot run alone");
  }
  SUBCASE("a child graph") {
    make_graph({CU_GRAPH_NODE_TYPE_GRAPH});
    CHECK(plan_replay(fake_driver(), nullptr, clone_of).why ==
          "the graph holds a child graph node, which cannot run alone");
  }
  SUBCASE("a node whose clone CUPTI did not report") {
    make_graph({CU_GRAPH_NODE_TYPE_MEMCPY});
    CHECK(plan_replay(fake_driver(), nullptr, [](CUgraphNode) { return std::uint64_t{0}; }).why ==
          "the instantiation's clone of a node was not reported by CUPTI");
  }
  SUBCASE("a memset of 8-byte elements") {
    make_graph({CU_GRAPH_NODE_TYPE_MEMSET});
    CUDA_MEMSET_NODE_PARAMS set{};
    set.elementSize = 8;
    g_graph.memsets[handle(0)] = set;
    CHECK(plan_replay(fake_driver(), nullptr, clone_of).why == "a memset node of 8-byte elements");
  }
  SUBCASE("a driver older than CUDA 12.4") {
    make_graph({CU_GRAPH_NODE_TYPE_MEMCPY});
    Driver old = fake_driver();
    old.func_get_param_info = nullptr;
    CHECK(plan_replay(old, nullptr, clone_of).why.find("CUDA 12.4") != std::string::npos);
  }
}

TEST_CASE("node replay: plans by executable graph, none for a graph changed after instantiation") {
  ReplayPlans plans;
  CHECK(plans.find(7)->why == "the executable graph's instantiation was not seen");
  make_graph({CU_GRAPH_NODE_TYPE_MEMCPY});
  plans.add(7, plan_replay(fake_driver(), nullptr, clone_of));
  CHECK(plans.find(7)->why.empty());
  CHECK(plans.find(7)->nodes.size() == 1);
  plans.changed(7, "cuGraphExecKernelNodeSetParams");
  CHECK(plans.find(7)->why ==
        "the executable graph was changed after its instantiation "
        "(cuGraphExecKernelNodeSetParams): its nodes are not replayed");
  CHECK(plans.find(7)->nodes.empty());
}

TEST_CASE("graph catalog: a node's latest clone, through clones of clones") {
  GraphCatalog catalog;
  catalog.created(1, {"layer 0", "gemm"});
  catalog.cloned(2, 1, true);
  catalog.cloned(3, 2, true);
  CHECK(catalog.latest_clone(1) == 3);
  CHECK(catalog.latest_clone(2) == 3);
  CHECK(catalog.latest_clone(3) == 0);
  CHECK(catalog.latest_clone(9) == 0);
  REQUIRE(catalog.origin(3).has_value());
  CHECK(catalog.origin(3)->nvtx_range == "layer 0");
  // A graph instantiated again: the newest clone is the one its replays will carry.
  catalog.cloned(4, 1, true);
  CHECK(catalog.latest_clone(1) == 4);
}

namespace {

void push(const char* name) {
  nvtxRangePushA_params params{name};
  CUpti_NvtxData data{};
  data.functionParams = &params;
  NvtxRanges::on_callback(CUPTI_CBID_NVTX_nvtxRangePushA, &data);
}

void pop() {
  CUpti_NvtxData data{};
  NvtxRanges::on_callback(CUPTI_CBID_NVTX_nvtxRangePop, &data);
}

// The ranges a thread with none of its own sees.
std::string seen_from_another_thread() {
  std::string seen;
  std::thread([&seen] { seen = NvtxRanges::current_or_only_other(); }).join();
  return seen;
}

}  // namespace

TEST_CASE("NVTX ranges: a thread without ranges takes those of the one thread that has some") {
  CHECK(NvtxRanges::current().empty());
  push("train 0");
  push("backward");
  CHECK(NvtxRanges::current() == "train 0 / backward");
  CHECK(NvtxRanges::current_or_only_other() == "train 0 / backward");
  CHECK(seen_from_another_thread() == "train 0 / backward");
  // Two threads with ranges: whose work it is cannot be told.
  std::string seen;
  std::thread other([&seen] {
    push("decode");
    seen = seen_from_another_thread();
    pop();
  });
  other.join();
  CHECK(seen.empty());
  pop();
  pop();
  pop();  // one pop too many: nothing to take
  CHECK(NvtxRanges::current().empty());
  CHECK(seen_from_another_thread().empty());
}

}  // namespace roofline::inject
