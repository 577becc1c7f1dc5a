#include "lib/core/model/model_decode.hpp"

#include <algorithm>
#include <string>

#include "kernels/decode_plan.hpp"
#include "lib/core/base/text.hpp"
#include "lib/core/model/cache_model.hpp"
#include "lib/core/model/model_terms.hpp"

namespace roofline {
namespace {

int group_rows(const Workload& w) {
  return kernels::decode_rows(w.heads, w.key_heads(), w.q_len);
}

// Query rows the CTAs of one key/value head compute: each row block's rows padded to 16.
double padded_rows(const Workload& w) {
  const int rows = group_rows(w);
  double padded = 0;
  for (int start = 0; start < rows; start += kernels::kDecodeRowsPerCta) {
    const int block = std::min(kernels::kDecodeRowsPerCta, rows - start);
    padded +=
        (block + kernels::kDecodeRowTile - 1) / kernels::kDecodeRowTile * kernels::kDecodeRowTile;
  }
  return padded;
}

// Σ over sequences of their keys in whole tiles (what the CTAs compute: each part starts on a
// tile boundary, so only a sequence's last tile is partial).
double padded_keys(const Workload& w) {
  double keys = 0;
  for (int b = 0; b < w.batch; ++b) {
    const int n = w.kv_len(b);
    keys += static_cast<double>((n + kernels::kDecodeKeysPerTile - 1) /
                                kernels::kDecodeKeysPerTile * kernels::kDecodeKeysPerTile);
  }
  return keys;
}

// Σ over sequences of the pages their keys occupy (block-table entries read).
double pages_used(const Workload& w) {
  if (w.page_size <= 0) return 0;
  double pages = 0;
  for (int b = 0; b < w.batch; ++b) pages += (w.kv_len(b) + w.page_size - 1) / w.page_size;
  return pages;
}

double cache_bytes(const Workload& w) {
  return 2.0 * w.key_heads() * w.total_kv_len() * w.head_dim * kBytesPerFp16;
}

double partial_bytes(const Workload& w, int parts) {
  if (parts <= 1) return 0;
  return static_cast<double>(parts) * w.batch * w.heads * w.q_len * (w.head_dim + 1) *
         kBytesPerFp32;
}

}  // namespace

int decode_parts(const Workload& w, int sm_count) {
  if (w.kv_splits > 0) return w.kv_splits;
  if (sm_count <= 0) return 1;
  return kernels::decode_splits(w.batch, w.key_heads(), group_rows(w), w.head_dim, w.seq_len,
                                sm_count);
}

long long decode_ctas(const Workload& w, int sm_count) {
  return static_cast<long long>(w.batch) * w.key_heads() *
         kernels::decode_row_blocks(group_rows(w)) * decode_parts(w, sm_count);
}

double decode_algorithmic_flops(const Workload& w) {
  double seen = 0;  // Σ over (sequence, new token) of the keys it sees
  for (int b = 0; b < w.batch; ++b) {
    const double n = w.kv_len(b);
    const double q = w.q_len;
    seen += w.causal ? q * n - q * (q - 1) / 2 : q * n;
  }
  return 4.0 * w.head_dim * w.heads * seen;
}

Prediction predict_decode(const Workload& w, int sm_count) {
  Prediction p;
  const double d = w.head_dim;
  const double hkv = w.key_heads();
  const int parts = decode_parts(w, sm_count);
  const int row_blocks = kernels::decode_row_blocks(group_rows(w));
  const double scores = hkv * padded_rows(w) * padded_keys(w);
  add_term(p.flop_terms, p.model_flops, "S = Q·Kᵀ (whole 64-key tiles, rows padded to 16)",
           "2·d·H_kv·Σ_blocks rows₁₆·Σ_b ⌈kv_len/64⌉·64", 2 * d * scores);
  add_term(p.flop_terms, p.model_flops, "O += P·V", "2·d·(scores computed)", 2 * d * scores);

  const double q_bytes = w.tensor_elements() * kBytesPerFp16;
  const double lse_bytes = static_cast<double>(w.batch) * w.heads * w.q_len * kBytesPerFp32;
  const double cache = cache_bytes(w);
  const double table = (pages_used(w) + w.batch) * 4.0;  // block-table entries and lengths
  add_term(p.byte_terms, p.no_reuse_dram_bytes, "KV cache read (K and V of every cached token)",
           "2·H_kv·Σ_b kv_len·d·2 B", cache);
  if (row_blocks > 1)
    add_term(p.byte_terms, p.no_reuse_dram_bytes,
             "KV cache re-read by each further block of 64 query rows",
             "(" + std::to_string(row_blocks) + " − 1)·2·H_kv·Σ_b kv_len·d·2 B",
             (row_blocks - 1) * cache);
  add_term(p.byte_terms, p.no_reuse_dram_bytes, "Q read, O written", "2·B·H·q_len·d·2 B",
           2 * q_bytes);
  add_term(p.byte_terms, p.no_reuse_dram_bytes, "LSE written", "B·H·q_len·4 B", lse_bytes);
  add_term(p.byte_terms, p.no_reuse_dram_bytes,
           w.page_size > 0 ? "block table (pages used) and lengths read" : "lengths read",
           w.page_size > 0 ? "(Σ_b ⌈kv_len/page⌉ + B)·4 B" : "B·4 B", table * row_blocks);
  if (parts > 1)
    add_term(p.byte_terms, p.no_reuse_dram_bytes,
             "split-KV partials (FP32 O and LSE of " + std::to_string(parts) +
                 " parts) written and read by the combine",
             "2·parts·B·H·q_len·(d + 1)·4 B", 2 * partial_bytes(w, parts));
  p.compulsory_dram_bytes = cache + 2 * q_bytes + lse_bytes + table;
  p.compulsory_formula =
      "the KV cache read once, Q read, O and LSE written once, block table and lengths read: "
      "2·H_kv·Σ_b kv_len·d·2 B + 2·B·H·q_len·d·2 B + B·H·q_len·4 B + table";

  // One exp2 per score computed, and per row and key tile the rescale factor (4 threads of a
  // quad hold a row).
  const double tiles_rows = hkv * padded_rows(w) * padded_keys(w) / kernels::kDecodeKeysPerTile;
  p.exp_terms.push_back({"P = exp2(S − m) per score computed", "H_kv·rows₁₆·keys₆₄", scores});
  p.exp_terms.push_back({"rescale exp2(m_old − m_new), 4 threads per row per key tile",
                         "4·H_kv·rows₁₆·keys₆₄ ÷ 64", 4 * tiles_rows});
  p.model_exponentials = scores + 4 * tiles_rows;
  return p;
}

void cache_aware_decode(const Workload& w, int sm_count, double l2_bytes, Prediction& p,
                        double* writes) {
  const int parts = decode_parts(w, sm_count);
  const double q_bytes = w.tensor_elements() * kBytesPerFp16;
  const double lse_bytes = static_cast<double>(w.batch) * w.heads * w.q_len * kBytesPerFp32;
  const double table = (pages_used(w) + w.batch) * 4.0;
  double& total = p.model_dram_bytes;
  auto& terms = p.cache_aware_byte_terms;
  add_term(terms, total, "KV cache read once", "2·H_kv·Σ_b kv_len·d·2 B", cache_bytes(w));
  // Further row blocks of a head (more than 64 query rows) run beside the first (adjacent
  // CTAs), so their re-reads of the cache meet its lines in L2: not counted here.
  add_term(terms, total, "Q read; O and LSE written; block table and lengths read",
           "2·B·H·q_len·d·2 B + B·H·q_len·4 B + table", 2 * q_bytes + lse_bytes + table);
  *writes = q_bytes + lse_bytes;
  if (parts > 1) {
    const double partials = partial_bytes(w, parts);
    add_term(terms, total,
             "split-KV partials written (" + std::to_string(parts) + " parts), read back by the " +
                 "combine unless still in L2",
             "parts·B·H·q_len·(d + 1)·4 B·(2 − L2 hit)",
             partials * (2 - l2_hit_fraction(partials, l2_bytes)));
    *writes += partials;
  }
}

}  // namespace roofline
