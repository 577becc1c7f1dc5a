// The analytic model of flash-decode (kernels/flash_decode.cu): q_len new query tokens per
// sequence against a KV cache, H query heads sharing H_kv key/value heads (GQA), split-KV.
//
// The work is the cache read once: each CTA takes one sequence, one key/value head, up to 64 of
// that head's query rows (its group's H/H_kv heads × q_len tokens, padded to 16-row MMA tiles)
// and one part of the keys (kernels/decode_plan.hpp). Per cached token it reads K and V rows of
// 2·d·2 B and computes 4·d FLOPs per query row, so its intensity is about
// (H/H_kv · q_len) FLOP per byte: far below any tensor ridge, the DRAM roof binds.
//
// FLOPs: algorithmic, 4·d per (query row, key it sees) (causal: token i of the q_len new ones
// sees kv_len − q_len + i + 1 keys); computed, whole 64-key tiles by 16-row tiles.
// Bytes: compulsory, the cache (K and V of every cached token and key/value head), Q, O, LSE,
// the block table's used entries and the lengths; no reuse adds the cache re-read by each extra
// row block of a head (more than 64 query rows) and the split-KV partials (FP32 O and LSE of
// every part, written by the main kernel and read by the combine); cache-aware serves those
// re-reads and the partials' reads from L2 when they fit.
#pragma once

#include "lib/core/domain/workload.hpp"
#include "lib/core/model/model.hpp"

namespace roofline {

// Split-KV parts the kernel uses for `w` on a GPU of `sm_count` SMs: the workload's own, or
// decode_plan.hpp's choice (1 when sm_count is 0, unknown).
int decode_parts(const Workload& w, int sm_count);

// CTAs of the main kernel (sequences × key/value heads × row blocks × parts).
long long decode_ctas(const Workload& w, int sm_count);

double decode_algorithmic_flops(const Workload& w);

// FLOPs, no-reuse and compulsory bytes, exponentials. `sm_count` 0: no GPU (parts as the
// workload gives them, else 1).
Prediction predict_decode(const Workload& w, int sm_count);

// The cache-aware DRAM terms into p.cache_aware_byte_terms / p.model_dram_bytes; *writes gets
// the bytes the kernel writes (for the retained-writes term).
void cache_aware_decode(const Workload& w, int sm_count, double l2_bytes, Prediction& p,
                        double* writes);

}  // namespace roofline
