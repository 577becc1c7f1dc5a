#include "lib/gpu/input_arena.hpp"

#include <algorithm>
#include <array>
#include <numeric>
#include <random>
#include <utility>
#include <vector>

#include "lib/gpu/cuda_check.hpp"

namespace roofline::gpu {
namespace {

// Every buffer a point needs, with its size.
std::vector<std::pair<DeviceBuffer*, std::size_t>> plan(InputArena& a, const PointSizes& s) {
  std::vector<std::pair<DeviceBuffer*, std::size_t>> out = {
      {&a.q, s.tensor},      {&a.k, s.kv_tensor},
      {&a.v, s.kv_tensor},   {&a.o, s.tensor},
      {&a.lse, s.row_stats}, {&a.workspace, std::max<std::size_t>(s.workspace, 256)}};
  if (s.kv_lens > 0) out.emplace_back(&a.kv_lens, s.kv_lens);
  if (s.block_table > 0) out.emplace_back(&a.block_table, s.block_table);
  if (s.backward)
    for (DeviceBuffer* b : {&a.d_o, &a.d_q, &a.d_k, &a.d_v}) out.emplace_back(b, s.tensor);
  if (s.verify) {
    for (DeviceBuffer* b : {&a.ref_o, &a.ref16_o}) out.emplace_back(b, s.tensor * 2);
    for (DeviceBuffer* b : {&a.ref_lse, &a.ref16_lse}) out.emplace_back(b, s.row_stats);
    if (s.backward)
      for (DeviceBuffer* b :
           {&a.ref_dq, &a.ref16_dq, &a.ref_dk, &a.ref16_dk, &a.ref_dv, &a.ref16_dv})
        out.emplace_back(b, s.tensor * 2);
  }
  return out;
}

}  // namespace

kernels::DType kernel_dtype(DType dtype) {
  return dtype == DType::kBf16 ? kernels::DType::kBf16 : kernels::DType::kFp16;
}

kernels::AttentionShape shape_of(const Workload& w) {
  kernels::AttentionShape shape;
  shape.batch = w.batch;
  shape.heads = w.heads;
  shape.seq_len = w.seq_len;
  shape.head_dim = w.head_dim;
  shape.causal = w.causal;
  shape.dtype = kernel_dtype(w.dtype);
  shape.q_len = w.q_len;
  shape.kv_heads = w.decode() ? w.key_heads() : 0;
  shape.page_size = w.page_size;
  shape.kv_splits = w.kv_splits;
  return shape;
}

kernels::Pass kernel_pass(Pass pass) {
  return pass == Pass::kForward ? kernels::Pass::kForward : kernels::Pass::kBackward;
}

std::size_t PointSizes::total() const {
  std::size_t bytes = 2 * tensor + 2 * kv_tensor + row_stats + workspace;  // q, k, v, o, lse
  bytes += kv_lens + block_table;
  if (backward) bytes += 4 * tensor;                                     // d_o, d_q, d_k, d_v
  if (verify) bytes += (backward ? 6 : 2) * tensor * 2 + 2 * row_stats;  // FP32 references
  return bytes;
}

PointSizes sizes_of(const std::string& kernel, const Workload& w, bool verify) {
  PointSizes s;
  const std::size_t rows =
      std::size_t(w.batch) * std::size_t(w.heads) * std::size_t(w.decode() ? w.q_len : w.seq_len);
  s.tensor = rows * std::size_t(w.head_dim) * 2;
  s.kv_tensor = s.tensor;
  s.row_stats = rows * 4;
  if (w.decode()) {
    // The cache: every sequence's keys (a paged cache: its pages) for each K/V head.
    std::size_t tokens = std::size_t(w.batch) * std::size_t(w.seq_len);
    if (w.page_size > 0) {
      tokens = 0;
      for (int b = 0; b < w.batch; ++b)
        tokens +=
            std::size_t((w.kv_len(b) + w.page_size - 1) / w.page_size) * std::size_t(w.page_size);
      const std::size_t blocks = std::size_t((w.seq_len + w.page_size - 1) / w.page_size);
      s.block_table = std::size_t(w.batch) * blocks * sizeof(int);
    }
    s.kv_tensor = tokens * std::size_t(w.key_heads()) * std::size_t(w.head_dim) * 2;
    s.kv_lens = std::size_t(w.batch) * sizeof(int);
  }
  s.workspace = kernels::workspace_bytes(kernel, shape_of(w));
  s.backward = w.pass == Pass::kBackward;
  s.verify = verify;
  return s;
}

std::array<DeviceBuffer*, 22> InputArena::all() {
  return {&q,      &k,         &v,       &o,           &lse,    &d_o,     &d_q,     &d_k,
          &d_v,    &workspace, &kv_lens, &block_table, &ref_o,  &ref16_o, &ref_lse, &ref16_lse,
          &ref_dq, &ref16_dq,  &ref_dk,  &ref16_dk,    &ref_dv, &ref16_dv};
}

std::size_t InputArena::held() {
  std::size_t bytes = 0;
  for (DeviceBuffer* b : all()) bytes += b->bytes();
  return bytes;
}

void InputArena::release() {
  for (DeviceBuffer* b : all()) b->reset();
  filled_for_.reset();
}

void InputArena::ensure(const PointSizes& s) {
  std::size_t free_bytes = 0, total_bytes = 0;
  ROOFLINE_CUDA_CALL(cudaMemGetInfo(&free_bytes, &total_bytes));
  // Buffers that must grow are freed and allocated anew.
  std::size_t growth = 0;
  for (const auto& [buffer, need] : plan(*this, s))
    if (need > buffer->bytes()) growth += need;
  if (growth + kMemoryMargin > free_bytes) release();
  for (const auto& [buffer, need] : plan(*this, s)) buffer->ensure(need);
}

void InputArena::fill_inputs(const Workload& workload, const PointSizes& s, std::uint64_t seed,
                             cudaStream_t stream, bool only_if_changed) {
  if (only_if_changed && filled_for_ && *filled_for_ == workload) return;
  filled_for_ = workload;
  const std::size_t elements = s.tensor / 2;
  const std::size_t kv_elements = s.kv_tensor / 2;
  // Inputs depend on the workload only, so every kernel sees the same data.
  const std::uint64_t base = seed ^ (std::uint64_t(workload.seq_len) << 20);
  const kernels::DType dtype = kernel_dtype(workload.dtype);
  ROOFLINE_CUDA_CALL(kernels::fill_random(q.get(), dtype, elements, base + 1, 1.0f, stream));
  ROOFLINE_CUDA_CALL(kernels::fill_random(k.get(), dtype, kv_elements, base + 2, 1.0f, stream));
  ROOFLINE_CUDA_CALL(kernels::fill_random(v.get(), dtype, kv_elements, base + 3, 1.0f, stream));
  if (s.backward)
    ROOFLINE_CUDA_CALL(kernels::fill_random(d_o.get(), dtype, elements, base + 4, 1.0f, stream));
  if (workload.decode()) fill_decode_tables(workload, s, base + 5, stream);
}

void InputArena::fill_decode_tables(const Workload& w, const PointSizes& s, std::uint64_t seed,
                                    cudaStream_t stream) {
  std::vector<int> lengths(static_cast<std::size_t>(w.batch));
  for (int b = 0; b < w.batch; ++b) lengths[static_cast<std::size_t>(b)] = w.kv_len(b);
  // Pageable host memory: cudaMemcpyAsync returns once the bytes are staged, so the vectors may
  // go out of scope; the copies stay ordered on `stream` behind earlier kernels that read them.
  ROOFLINE_CUDA_CALL(
      cudaMemcpyAsync(kv_lens.get(), lengths.data(), s.kv_lens, cudaMemcpyHostToDevice, stream));
  kv_pages_ = 0;
  if (w.page_size <= 0) return;
  const int blocks = (w.seq_len + w.page_size - 1) / w.page_size;
  int pages = 0;
  for (int n : lengths) pages += (n + w.page_size - 1) / w.page_size;
  kv_pages_ = pages;
  std::vector<int> order(static_cast<std::size_t>(pages));
  std::iota(order.begin(), order.end(), 0);
  std::mt19937_64 random(seed);
  std::shuffle(order.begin(), order.end(), random);
  std::vector<int> table(static_cast<std::size_t>(w.batch) * static_cast<std::size_t>(blocks), 0);
  std::size_t next = 0;
  for (int b = 0; b < w.batch; ++b)
    for (int j = 0; j < (lengths[static_cast<std::size_t>(b)] + w.page_size - 1) / w.page_size; ++j)
      table[static_cast<std::size_t>(b) * static_cast<std::size_t>(blocks) +
            static_cast<std::size_t>(j)] = order[next++];
  ROOFLINE_CUDA_CALL(cudaMemcpyAsync(block_table.get(), table.data(), s.block_table,
                                     cudaMemcpyHostToDevice, stream));
}

kernels::AttentionBuffers InputArena::view() const {
  kernels::AttentionBuffers b;
  b.q = q.get();
  b.k = k.get();
  b.v = v.get();
  b.o = o.get();
  b.lse = lse.as<float>();
  b.d_o = d_o.get();
  b.d_q = d_q.get();
  b.d_k = d_k.get();
  b.d_v = d_v.get();
  b.workspace = workspace.get();
  if (kv_lens.bytes() > 0) b.kv_lens = kv_lens.as<int>();
  if (block_table.bytes() > 0) {
    b.block_table = block_table.as<int>();
    b.kv_pages = kv_pages_;
  }
  return b;
}

}  // namespace roofline::gpu
