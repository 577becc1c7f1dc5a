// How flash-decode divides a decode shape's work among CTAs, written once in plain C++ so that
// the kernel (flash_decode.cu) and the analytic model (lib/core/model) read the same numbers.
//
// One CTA takes one sequence, one key/value head, up to kDecodeRowsPerCta query rows (the
// group's heads × the new tokens: heads / kv_heads · q_len rows share that K/V head) and one
// part of the sequence's keys; it streams that part of the cache once through shared memory in
// tiles of kDecodeKeysPerTile keys. When sequences × key/value heads × row blocks would leave
// the GPU's CTA slots idle, each sequence's keys are split into parts (split-KV) and a second
// kernel combines the parts' partial outputs by their log-sum-exp.
#pragma once

#include <algorithm>

namespace roofline::kernels {

inline constexpr int kDecodeRowsPerCta = 64;        // query rows per CTA (four 16-row MMA tiles)
inline constexpr int kDecodeRowTile = 16;           // rows pad to this (mma.sync m16n8k16)
inline constexpr int kDecodeKeysPerTile = 64;       // keys per shared-memory stage
inline constexpr int kDecodeMinKeysPerSplit = 256;  // no split gets fewer keys than this
inline constexpr int kDecodeMaxSplits = 128;

// CTAs resident per SM, by head dim: the kernel's shared memory (stages of K and V tiles) and
// its __launch_bounds__ give these on sm_90 (flash_decode.cu checks them).
constexpr int decode_ctas_per_sm(int head_dim) {
  return head_dim <= 64 ? 4 : 2;
}

// Query rows one key/value head serves: the heads of its group times the new tokens.
constexpr int decode_rows(int heads, int kv_heads, int q_len) {
  return heads / kv_heads * q_len;
}

constexpr int decode_row_blocks(int rows) {
  return (rows + kDecodeRowsPerCta - 1) / kDecodeRowsPerCta;
}

// Parts each sequence's keys are split into: as many as fill half of the GPU's CTA slots
// (sm_count × decode_ctas_per_sm ÷ 2: one CTA per SM at d = 128, two at d = 64, whose loads in
// flight stream the DRAM) beside the batch's own CTAs, never so many that a part gets fewer than
// kDecodeMinKeysPerSplit keys of the longest sequence; 1 when the batch fills that half. More
// parts only add partial outputs and combine work: on an H200 (2026-12-06) half the slots was
// 2.3% faster than all of them (geometric mean over the 63 shapes of B 1-16, Hkv 4-32, d 64/128,
// KV 1k-128k where the two differ; 29 faster by more than 2%, 2 slower, both 17 µs launches at
// KV 1k; docs/results/2026-12-06-h100-launch-lock-stalls-decode.md).
constexpr int decode_splits(int batch, int kv_heads, int rows, int head_dim, int max_kv_len,
                            int sm_count) {
  const long long ctas = static_cast<long long>(batch) * kv_heads * decode_row_blocks(rows);
  const long long slots = static_cast<long long>(sm_count) * decode_ctas_per_sm(head_dim) / 2;
  if (ctas <= 0 || ctas * 2 > slots) return 1;
  const long long by_slots = slots / ctas;
  const long long by_length = std::max(1, max_kv_len / kDecodeMinKeysPerSplit);
  return static_cast<int>(
      std::clamp<long long>(std::min(by_slots, by_length), 1, kDecodeMaxSplits));
}

// Keys of a sequence of `kv_len` keys in each of `splits` parts: whole tiles, so that parts
// start on tile boundaries (the last part takes what is left; a part may be empty).
constexpr int decode_keys_per_split(int kv_len, int splits) {
  const int tiles = (kv_len + kDecodeKeysPerTile - 1) / kDecodeKeysPerTile;
  return (tiles + splits - 1) / splits * kDecodeKeysPerTile;
}

}  // namespace roofline::kernels
