#include "lib/core/model/model_prefill_dram.hpp"

#include <algorithm>
#include <functional>
#include <string>

#include "lib/core/base/text.hpp"
#include "lib/core/model/cache_model.hpp"
#include "lib/core/model/model_l1.hpp"
#include "lib/core/model/model_terms.hpp"

namespace roofline {
namespace {

// rows of the per-head operand streamed by the CTA at launch position x of a flash pass:
// query-tile CTAs (forward, flash-v1's dQ pass) stream K/V up to their diagonal under a causal
// mask and are launched longest first; key-tile CTAs (backward) stream the queries from their
// own diagonal on, and key tile 0 (the longest) is launched first.
std::function<double(long long)> query_tile_rows(const Workload& w, int block_q, int block_kv) {
  const long long n = w.seq_len;
  const long long tiles = (n + block_q - 1) / block_q;
  const bool causal = w.causal;
  return [=](long long x) -> double {
    if (!causal) return static_cast<double>(n);
    const long long tile = tiles - 1 - x;
    const long long last_row = std::min(n, (tile + 1) * block_q);
    const long long kv_tiles = (last_row + block_kv - 1) / block_kv;
    return static_cast<double>(std::min(n, kv_tiles * block_kv));
  };
}

std::function<double(long long)> key_tile_rows(const Workload& w, int block_q, int block_kv) {
  const long long n = w.seq_len;
  const bool causal = w.causal;
  return [=](long long x) -> double {
    if (!causal) return static_cast<double>(n);
    const long long first_q = (x * block_kv) / block_q * block_q;
    return static_cast<double>(n - first_q);
  };
}

// K and V as the query-tile CTAs of a pass stream them (the forward, flash-v1's dQ pass): one
// K row and one V row per key, `ctas_per_sm` CTAs resident per SM, each CTA holding
// `own_cta_bytes` of its own beside them.
StreamedOperand kv_of_query_tiles(const Workload& w, const TileShape& tiles, bool forward, int sms,
                                  int ctas_per_sm, double own_cta_bytes) {
  const int bq = forward ? tiles.fwd_block_q : tiles.bwd_block_q;
  const int bkv = forward ? tiles.fwd_block_kv : tiles.bwd_block_kv;
  StreamedOperand kv;
  kv.heads = static_cast<long long>(w.batch) * w.heads;
  kv.ctas_per_head = (w.seq_len + bq - 1) / bq;
  kv.resident_ctas = static_cast<long long>(sms) * ctas_per_sm;
  kv.rows = query_tile_rows(w, bq, bkv);
  kv.read_row_bytes = 2.0 * w.head_dim * kBytesPerFp16;
  kv.own_cta_bytes = own_cta_bytes;
  return kv;
}

}  // namespace

void cache_aware_flash(const KernelModel& k, const Workload& w, const CacheContext& c,
                       Prediction& p, double* writes) {
  const double bh = static_cast<double>(w.batch) * w.heads;
  const double n = w.seq_len, d = w.head_dim;
  const double nd = w.tensor_elements() * kBytesPerFp16;
  const double row_stats = bh * n * kBytesPerFp32;
  const TileShape tiles = k.tiles(w.head_dim);
  double& total = p.model_dram_bytes;
  auto& terms = p.cache_aware_byte_terms;
  const std::string l2 = "L2 " + mb_text(c.l2);
  const std::string fits = " that fits in " + l2;
  if (w.pass == Pass::kForward) {
    const StreamedOperand kv =
        kv_of_query_tiles(w, tiles, true, c.sms, tiles.fwd_ctas_per_sm,
                          tiles.fwd_block_q * (2 * d * kBytesPerFp16 + kBytesPerFp32));
    const StreamedTraffic t = stream_through_l2(kv, c.l2);
    add_term(terms, total, "Q read, O and LSE written once", "2·B·H·N·d·2 B + B·H·N·4 B",
             2 * nd + row_stats);
    *writes = nd + row_stats;
    add_term(terms, total,
             "K, V from DRAM: once per head, again per wave of " +
                 std::to_string(kv.resident_ctas) +
                 " CTAs whose predecessor's footprint (largest " + mb_text(t.max_wave_footprint) +
                 ") outgrew " + l2,
             "2·d·2 B·Σ_waves rows missed (" + format_fixed(t.waves, 0) + " waves)", t.read_bytes);
    return;
  }
  // Backward: the preprocess kernel, the key-tile kernel streaming Q, dO, LSE, D (and, when dQ
  // is accumulated per key tile, the FP32 dQ accumulator), then dQ's conversion or flash-v1's
  // query-tile dQ pass.
  const int bq = tiles.bwd_block_q, bkv = tiles.bwd_block_kv;
  const double dq_accum = w.tensor_elements() * kBytesPerFp32;
  add_term(terms, total, "preprocess: O, dO read; D written", "2·B·H·N·d·2 B + B·H·N·4 B",
           2 * nd + row_stats);
  add_term(terms, total, "K, V read once; dK, dV written", "4·B·H·N·d·2 B", 4 * nd);
  StreamedOperand q;
  q.heads = static_cast<long long>(bh);
  q.ctas_per_head = (w.seq_len + bkv - 1) / bkv;
  q.resident_ctas = static_cast<long long>(c.sms) * tiles.bwd_ctas_per_sm;
  q.rows = key_tile_rows(w, bq, bkv);
  q.read_row_bytes = 2 * d * kBytesPerFp16 + 2 * kBytesPerFp32;
  q.own_cta_bytes = bkv * 4 * d * kBytesPerFp16;
  // The cleared accumulator is still in L2 at first touch when it fits.
  const double accum_miss = 1 - l2_hit_fraction(dq_accum, c.l2);
  *writes = row_stats + 2 * nd;
  double preprocess_footprint = 2 * nd + row_stats;
  if (!k.bwd_separate_dq_pass) {
    q.rmw_row_bytes = d * kBytesPerFp32;
    q.rmw_first_touch_miss = accum_miss;
    add_term(terms, total, "dQ accumulator cleared (FP32)", "B·H·N·d·4 B", dq_accum);
    *writes += dq_accum;
    preprocess_footprint += dq_accum;
  }
  const StreamedTraffic t = stream_through_l2(q, c.l2);
  *writes += t.write_bytes;
  add_term(terms, total,
           std::string(k.bwd_separate_dq_pass ? "Q, dO, LSE, D"
                                              : "Q, dO, LSE, D and the dQ accumulator") +
               " from DRAM: once per head, again per wave of " + std::to_string(q.resident_ctas) +
               " CTAs whose predecessor's footprint (largest " + mb_text(t.max_wave_footprint) +
               ") outgrew " + l2,
           "(2·d·2 B + 2·4 B [+ d·4 B read and written back])·Σ_waves rows missed (" +
               format_fixed(t.waves, 0) + " waves)",
           t.read_bytes + t.write_bytes);
  add_term(terms, total, "dO and D first read from L2: the preprocess read and wrote them" + fits,
           "−(B·H·N·d·2 B + B·H·N·4 B)·L2 hit of its footprint",
           -(nd + row_stats) * l2_hit_fraction(preprocess_footprint, c.l2));
  *writes += nd;  // dQ
  if (!k.bwd_separate_dq_pass) {
    add_term(terms, total, "dQ: accumulator read (unless still in L2), FP16 written",
             "B·H·N·d·4 B·(1 − L2 hit) + B·H·N·d·2 B", dq_accum * accum_miss + nd);
    return;
  }
  const StreamedOperand kv = kv_of_query_tiles(w, tiles, false, c.sms, tiles.bwd_ctas_per_sm,
                                               bq * (3 * d * kBytesPerFp16 + 2 * kBytesPerFp32));
  const StreamedTraffic tk = stream_through_l2(kv, c.l2);
  add_term(terms, total, "dQ pass: Q, dO, LSE, D read; dQ written", "3·B·H·N·d·2 B + 2·B·H·N·4 B",
           3 * nd + 2 * row_stats);
  add_term(terms, total, "dQ pass: K, V from DRAM, as in the forward",
           "2·d·2 B·Σ_waves rows missed (" + format_fixed(tk.waves, 0) + " waves)", tk.read_bytes);
  // The dK/dV kernel just read Q, dO, LSE, D, K and V: their first reads come from L2 when what
  // it touched fits.
  const double dkdv_footprint = 4 * nd + 2 * nd + 2 * row_stats;
  add_term(terms, total,
           "dQ pass: first reads of Q, dO, LSE, D, K, V from L2: the dK/dV kernel read them" + fits,
           "−(4·B·H·N·d·2 B + 2·B·H·N·4 B)·L2 hit of its footprint",
           -(4 * nd + 2 * row_stats) * l2_hit_fraction(dkdv_footprint, c.l2));
}

// Standard attention: N×N intermediates written by one kernel and read by the next come from L2
// when they fit; the row kernels read each row once (rows that fit their registers), or two or
// three times (the streaming kernel for long or unaligned rows), the repeats from L2 when the
// rows of all resident blocks fit. Under a causal mask the row kernels read the unmasked
// prefix only (a fraction (N+1)/2N of each matrix).
void cache_aware_standard(const Workload& w, const CacheContext& c, Prediction& p, double* writes) {
  const double bh = static_cast<double>(w.batch) * w.heads;
  const double n = w.seq_len;
  const double nd = w.tensor_elements() * kBytesPerFp16;
  const double nn = bh * n * n * kBytesPerFp16;
  const double valid = w.causal ? (n + 1) / (2 * n) : 1.0;
  const bool fwd = w.pass == Pass::kForward;
  // Streaming row kernels: 256-thread blocks, 8 resident per SM.
  const bool cached_rows = standard_rows_cached(w);
  const double resident_rows = static_cast<double>(c.sms) * 8;
  const double hit_matrix = l2_hit_fraction(nn, c.l2);
  double& total = p.model_dram_bytes;
  auto& terms = p.cache_aware_byte_terms;
  const std::string fits =
      "(1 − L2 hit of one N×N matrix, " + mb_text(nn) + " in " + mb_text(c.l2) + ")";
  if (fwd) {
    const double repeat_miss =
        cached_rows
            ? 0
            : 2 * rows_reread_miss_fraction(n, resident_rows * kBytesPerFp16, w.causal, c.l2);
    add_term(terms, total, "Q, K, V read; O written", "4·B·H·N·d·2 B", 4 * nd);
    add_term(terms, total, "S and P written", "2·B·H·N²·2 B", 2 * nn);
    *writes = 2 * nn + nd;
    add_term(terms, total, "S read by the softmax", "B·H·N²·2 B·valid·" + fits,
             nn * valid * (1 - hit_matrix));
    if (!cached_rows)
      add_term(terms, total, "S re-read by the streaming softmax (2 more passes, unless in L2)",
               "B·H·N²·2 B·valid·2·(1 − L2 hit of the resident rows, by row length)",
               nn * valid * repeat_miss);
    add_term(terms, total, "P read by P·V", "B·H·N²·2 B·" + fits, nn * (1 - hit_matrix));
    return;
  }
  const double repeat_miss =
      cached_rows ? 0
                  : rows_reread_miss_fraction(n, resident_rows * 2 * kBytesPerFp16, w.causal, c.l2);
  const double hit_two = l2_hit_fraction(2 * nn, c.l2);
  add_term(terms, total, "dO read twice; Q, K, V read; dQ, dK, dV written", "8·B·H·N·d·2 B",
           8 * nd);
  add_term(terms, total, "P read by the dV GEMM (written by the forward)", "B·H·N²·2 B", nn);
  add_term(terms, total, "dP written", "B·H·N²·2 B", nn);
  // dS overwrites dP in place: a line of dP still dirty in L2 takes dS's bytes and is written
  // back once; one already written back is dirtied, and written back, again.
  add_term(terms, total, "dS written over dP: again where dP had left L2",
           "B·H·N²·2 B·(1 − L2 hit of P and dP)", nn * (1 - hit_two));
  *writes = nn + 3 * nd;  // what can still be dirty at the end: dS, dQ, dK, dV
  add_term(terms, total, "P and dP read by the softmax backward", "B·H·N²·2 B·valid·(2 − L2 hits)",
           nn * valid * ((1 - hit_two) + (1 - hit_matrix)));
  if (!cached_rows)
    add_term(terms, total, "P and dP re-read by the streaming softmax backward (unless in L2)",
             "2·B·H·N²·2 B·valid·(1 − L2 hit of the resident rows, by row length)",
             2 * nn * valid * repeat_miss);
  add_term(terms, total, "dS read by the dQ and dK GEMMs", "2·B·H·N²·2 B·" + fits,
           2 * nn * (1 - hit_matrix));
}

}  // namespace roofline
