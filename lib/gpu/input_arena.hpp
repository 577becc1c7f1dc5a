// The device buffers of a sweep's points, grown as the points need them and reused from point to
// point, and the inputs they hold: random and seeded by the workload (so every kernel of a
// workload reads the same data), never zeros. Outputs are poisoned before a point's first launch
// (output_check.hpp then finds any element a kernel left unwritten).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include <cuda_runtime_api.h>

#include "kernels/attention.hpp"
#include "lib/core/domain/workload.hpp"
#include "lib/gpu/device_memory.hpp"

namespace roofline::gpu {

kernels::DType kernel_dtype(DType dtype);
kernels::AttentionShape shape_of(const Workload& workload);
kernels::Pass kernel_pass(Pass pass);

// Bytes of one point's buffers.
struct PointSizes {
  std::size_t tensor = 0;     // one FP16 or BF16 [B,H,N,d] (decode: Q or O, [B,H,q_len,d])
  std::size_t kv_tensor = 0;  // K or V: as `tensor`, or a decode workload's cache (its pages)
  std::size_t row_stats = 0;  // one FP32 [B,H,N] (decode: [B,H,q_len])
  std::size_t workspace = 0;
  std::size_t kv_lens = 0;      // decode: int [B]
  std::size_t block_table = 0;  // decode, paged: int [B, ⌈seq/page⌉]
  bool backward = false;
  bool verify = false;  // with the FP32 references of --verify

  std::size_t total() const;
};

PointSizes sizes_of(const std::string& kernel, const Workload& workload, bool verify);

class InputArena {
 public:
  // Device memory left free beside the arena, for cuBLAS, CUPTI and the context.
  static constexpr std::size_t kMemoryMargin = std::size_t{512} << 20;

  std::size_t held();
  // Every buffer freed: whatever inputs the arena held are gone with it.
  void release();
  // Grown for a point of these sizes; starts over (release()) when growing in place would not
  // fit beside kMemoryMargin.
  void ensure(const PointSizes& sizes);
  // q, k, v (and d_o for backward) of `workload`, from `seed`; with `only_if_changed`, nothing
  // when the arena holds that workload's inputs already (no kernel writes them).
  void fill_inputs(const Workload& workload, const PointSizes& sizes, std::uint64_t seed,
                   cudaStream_t stream, bool only_if_changed);
  // The inputs held count as unknown (the next fill_inputs fills).
  void forget_inputs() { filled_for_.reset(); }
  kernels::AttentionBuffers view() const;

  // The buffers, for the output checks; sized by ensure().
  DeviceBuffer q, k, v, o, lse, d_o, d_q, d_k, d_v, workspace, kv_lens, block_table;
  DeviceBuffer ref_o, ref16_o, ref_lse, ref16_lse, ref_dq, ref16_dq, ref_dk, ref16_dk, ref_dv,
      ref16_dv;

 private:
  std::array<DeviceBuffer*, 22> all();
  // A decode workload's lengths and, paged, its block table: pages dealt to the sequences in a
  // shuffled order (as a serving cache's free list leaves them), from `seed`.
  void fill_decode_tables(const Workload& workload, const PointSizes& sizes, std::uint64_t seed,
                          cudaStream_t stream);

  std::optional<Workload> filled_for_;  // whose inputs the arena holds
  int kv_pages_ = 0;  // pages of the paged cache held (AttentionBuffers::kv_pages)
};

}  // namespace roofline::gpu
