#include "lib/gpu/input_arena.hpp"

#include <algorithm>
#include <array>
#include <utility>
#include <vector>

#include "lib/gpu/cuda_check.hpp"

namespace roofline::gpu {
namespace {

// Every buffer a point needs, with its size.
std::vector<std::pair<DeviceBuffer*, std::size_t>> plan(InputArena& a, const PointSizes& s) {
  std::vector<std::pair<DeviceBuffer*, std::size_t>> out = {
      {&a.q, s.tensor},      {&a.k, s.tensor},
      {&a.v, s.tensor},      {&a.o, s.tensor},
      {&a.lse, s.row_stats}, {&a.workspace, std::max<std::size_t>(s.workspace, 256)}};
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
  return {w.batch, w.heads, w.seq_len, w.head_dim, w.causal, kernel_dtype(w.dtype)};
}

kernels::Pass kernel_pass(Pass pass) {
  return pass == Pass::kForward ? kernels::Pass::kForward : kernels::Pass::kBackward;
}

std::size_t PointSizes::total() const {
  std::size_t bytes = 4 * tensor + row_stats + workspace;                // q, k, v, o, lse
  if (backward) bytes += 4 * tensor;                                     // d_o, d_q, d_k, d_v
  if (verify) bytes += (backward ? 6 : 2) * tensor * 2 + 2 * row_stats;  // FP32 references
  return bytes;
}

PointSizes sizes_of(const std::string& kernel, const Workload& w, bool verify) {
  PointSizes s;
  const std::size_t rows = std::size_t(w.batch) * std::size_t(w.heads) * std::size_t(w.seq_len);
  s.tensor = rows * std::size_t(w.head_dim) * 2;
  s.row_stats = rows * 4;
  s.workspace = kernels::workspace_bytes(kernel, shape_of(w));
  s.backward = w.pass == Pass::kBackward;
  s.verify = verify;
  return s;
}

std::array<DeviceBuffer*, 20> InputArena::all() {
  return {&q,      &k,        &v,         &o,        &lse,     &d_o,     &d_q,
          &d_k,    &d_v,      &workspace, &ref_o,    &ref16_o, &ref_lse, &ref16_lse,
          &ref_dq, &ref16_dq, &ref_dk,    &ref16_dk, &ref_dv,  &ref16_dv};
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
  // Inputs depend on the workload only, so every kernel sees the same data.
  const std::uint64_t base = seed ^ (std::uint64_t(workload.seq_len) << 20);
  const kernels::DType dtype = kernel_dtype(workload.dtype);
  ROOFLINE_CUDA_CALL(kernels::fill_random(q.get(), dtype, elements, base + 1, 1.0f, stream));
  ROOFLINE_CUDA_CALL(kernels::fill_random(k.get(), dtype, elements, base + 2, 1.0f, stream));
  ROOFLINE_CUDA_CALL(kernels::fill_random(v.get(), dtype, elements, base + 3, 1.0f, stream));
  if (s.backward)
    ROOFLINE_CUDA_CALL(kernels::fill_random(d_o.get(), dtype, elements, base + 4, 1.0f, stream));
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
  return b;
}

}  // namespace roofline::gpu
