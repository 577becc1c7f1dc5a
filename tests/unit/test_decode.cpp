// Decode workloads (lib/core/domain/workload.hpp), flash-decode's model
// (lib/core/model/model_decode.hpp), the decode options of `model` and the verdict a
// memory-bound grid that fills few CTA slots gets (lib/core/verdict/advice.hpp).
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "kernels/decode_plan.hpp"
#include "lib/core/base/errors.hpp"
#include "lib/core/base/json_reader.hpp"
#include "lib/core/domain/metric_catalog.hpp"
#include "lib/core/model/model.hpp"
#include "lib/core/model/model_decode.hpp"
#include "lib/core/model/tail_effect.hpp"
#include "lib/core/report/json_values.hpp"
#include "lib/core/verdict/advice.hpp"
#include "tests/unit/helpers.hpp"

using namespace roofline;

namespace {

Workload decode(int batch, int heads, int kv_heads, int q_len, int kv_len, int d = 128) {
  Workload w;
  w.batch = batch;
  w.heads = heads;
  w.kv_heads = kv_heads;
  w.q_len = q_len;
  w.seq_len = kv_len;
  w.head_dim = d;
  return w;
}

const GpuSpec& h200() {
  return shipped_spec("h200");
}

}  // namespace

TEST_CASE("decode workload: labels name every field, ragged batches by a hash of the lengths") {
  Workload w = decode(8, 32, 8, 1, 8192);
  CHECK(w.label() == "B8 H32/8 Q1 KV8192 d128");
  w.page_size = 16;
  w.kv_splits = 4;
  w.dtype = DType::kBf16;
  w.causal = true;
  CHECK(w.label() == "B8 H32/8 Q1 KV8192 d128 causal split4 paged16 bf16");
  Workload a = decode(2, 8, 8, 1, 300);
  a.kv_lens = {300, 17};
  Workload b = a;
  b.kv_lens = {17, 300};
  CHECK(a.label().find("KV≤300 ragged#") != std::string::npos);
  CHECK(a.label() != b.label());
  CHECK(a.total_kv_len() == 317);
  // Prefill labels are as they were.
  Workload prefill;
  CHECK(prefill.label() == "B1 H8 N1024 d64 full fwd");
}

TEST_CASE("decode workload: each bad field gets one sentence naming it") {
  CHECK(validation_error(decode(1, 8, 8, 17, 1024)).find("q-len must be 1 to 16") == 0);
  CHECK(validation_error(decode(1, 8, 3, 1, 1024)).find("kv-heads must divide heads") == 0);
  CHECK(validation_error(decode(1, 8, 8, 1, 1024, 32)).find("head-dim 64 or 128") !=
        std::string::npos);
  Workload paged = decode(1, 8, 8, 1, 1024);
  paged.page_size = 24;
  CHECK(validation_error(paged).find("page-size must be") == 0);
  Workload ragged = decode(2, 8, 8, 4, 1024);
  ragged.kv_lens = {1024, 2};
  CHECK(validation_error(ragged).find("each of kv-lens must be from q-len") == 0);
  ragged.kv_lens = {1000, 900};
  CHECK(validation_error(ragged).find("seq must be the longest of kv-lens") == 0);
  Workload backward = decode(1, 8, 8, 1, 1024);
  backward.pass = Pass::kBackward;
  CHECK(validation_error(backward) == "decode workloads (q-len) have a forward pass only");
  Workload stray;
  stray.page_size = 16;
  CHECK(validation_error(stray).find("give q-len too") != std::string::npos);
}

TEST_CASE("decode workload: a report keeps every decode field") {
  Workload w = decode(3, 16, 4, 8, 4096, 64);
  w.page_size = 256;
  w.kv_splits = 2;
  w.causal = true;
  w.kv_lens = {4096, 100, 2048};
  const nlohmann::json j = workload_json(w);
  const JsonReader reader("test");
  CHECK(workload_from_json(reader, j, "rows[0].workload") == w);
  // Prefill rows write no decode key.
  CHECK(!workload_json(Workload{}).contains("q_len"));
}

TEST_CASE("decode model: the compulsory bytes are the cache read once, Q, O, LSE and tables") {
  const Workload w = decode(8, 32, 8, 1, 8192);
  const Prediction p = predict(find_kernel_model("flash-decode"), w, h200());
  const double cache = 2.0 * 8 * 8 * 8192 * 128 * 2;  // K and V, B·H_kv·N·d, 2 B each
  const double q_o = 2.0 * 8 * 32 * 1 * 128 * 2;
  const double lse = 8.0 * 32 * 4;
  CHECK(p.compulsory_dram_bytes == doctest::Approx(cache + q_o + lse + 8 * 4));
  // 4·d FLOPs per (query row, key): 32 heads, one token, 8192 keys each.
  CHECK(p.algorithmic_flops == doctest::Approx(4.0 * 128 * 8 * 32 * 8192));
  // Computed: the group's 4 rows pad to one 16-row tile.
  CHECK(p.model_flops == doctest::Approx(4.0 * 128 * 8 * 8 * 16 * 8192));
  // Intensity about H/H_kv · q_len = 4 FLOP per byte of cache.
  CHECK(p.algorithmic_flops / p.compulsory_dram_bytes == doctest::Approx(4.0).epsilon(0.01));
}

TEST_CASE("decode model: a causal mask hides the later new tokens' keys from the earlier ones") {
  Workload w = decode(1, 8, 8, 4, 100, 64);
  const double full = algorithmic_flops(w);
  w.causal = true;
  // Token i of 4 sees 100 − 4 + i + 1 keys: 97 + 98 + 99 + 100 instead of 4 × 100.
  CHECK(algorithmic_flops(w) == doctest::Approx(full * (97 + 98 + 99 + 100) / 400.0));
}

TEST_CASE("decode model: split-KV parts fill half the CTA slots, and their partials count") {
  // B1, 8 KV heads, d 128: 8 CTAs for half of 132 × 2 slots: 16 parts, one CTA per SM.
  const Workload w = decode(1, 32, 8, 1, 65536);
  CHECK(decode_parts(w, 132) == 132 / 8);
  CHECK(decode_ctas(w, 132) == 128);
  // d 64: four slots per SM, two CTAs per SM filled.
  CHECK(decode_parts(decode(1, 32, 8, 1, 65536, 64), 132) == 264 / 8);
  // A batch that fills more than half of the half is not split.
  CHECK(decode_parts(decode(16, 32, 8, 1, 8192), 132) == 1);
  CHECK(decode_parts(decode(8, 32, 8, 1, 8192), 132) == 2);
  // Short caches are not split below 256 keys a part; a full batch is not split.
  CHECK(decode_parts(decode(1, 32, 8, 1, 1024), 132) == 4);
  CHECK(decode_parts(decode(64, 32, 8, 1, 8192), 132) == 1);
  // A part count given is kept, and without a GPU there is one.
  Workload fixed = w;
  fixed.kv_splits = 1;
  CHECK(decode_parts(fixed, 132) == 1);
  CHECK(decode_parts(w, 0) == 1);
  const Prediction split = predict(find_kernel_model("flash-decode"), w, h200());
  const Prediction whole = predict(find_kernel_model("flash-decode"), fixed, h200());
  const double partials = 16.0 * 1 * 32 * 1 * (128 + 1) * 4;
  CHECK(split.no_reuse_dram_bytes - whole.no_reuse_dram_bytes == doctest::Approx(2 * partials));
  // Keys in parts of whole tiles: every part starts on a tile boundary.
  CHECK(kernels::decode_keys_per_split(65536, 33) % kernels::kDecodeKeysPerTile == 0);
  CHECK(33 * kernels::decode_keys_per_split(65536, 33) >= 65536);
}

TEST_CASE("decode model: the grid the tail effect sees, parts of unequal ragged sequences") {
  Workload w = decode(2, 8, 8, 1, 1024, 64);
  w.kv_lens = {1024, 64};
  w.kv_splits = 2;
  const auto grid = bundled_grid(find_kernel_model("flash-decode"), w, 132);
  REQUIRE(grid);
  CHECK(grid->ctas == 2 * 8 * 2);
  CHECK(grid->ctas_per_sm == kernels::decode_ctas_per_sm(64));
  // Sequence 0: two parts of 8 tiles; sequence 1: one tile and an empty part.
  REQUIRE(grid->cta_work.size() == 3);
}

TEST_CASE("decode model: decode and prefill kernels refuse each other's workloads") {
  const KernelModel& flash_decode = find_kernel_model("flash-decode");
  CHECK(unsupported_reason(flash_decode, Workload{}, "9.0").find("decode workloads only") !=
        std::string::npos);
  CHECK(unsupported_reason(find_kernel_model("flash-v2"), decode(1, 8, 8, 1, 1024), "9.0")
            .find("prefill workloads only") != std::string::npos);
  CHECK(unsupported_reason(flash_decode, decode(1, 8, 8, 1, 1024), "7.0")
            .find("compute capability 8.0") != std::string::npos);
  CHECK(unsupported_reason(flash_decode, decode(1, 8, 8, 1, 1024), "9.0").empty());
}

TEST_CASE(
    "decode advice: a grid that fills few CTA slots is latency-bound, and split-KV is named") {
  // B1, 8 KV heads, no split: 8 CTAs on 132 SMs, far below the DRAM roof.
  Row row;
  row.kernel = "flash-decode";
  row.spec_key = "h200-sxm";
  row.workload = decode(1, 32, 8, 1, 65536);
  row.workload.kv_splits = 1;
  row.prediction = predict(find_kernel_model("flash-decode"), row.workload, h200());
  const double floor = row.prediction.model_dram_bytes / 4800e9;
  row.timing = Timing{{floor / 0.1}, 0, 0};  // 10% of the DRAM roof
  const std::optional<Advice> v = advise(row, analyze(row, h200()), h200());
  REQUIRE(v);
  CHECK(v->lever == Lever::kOccupancy);
  CHECK(v->evidence.find("latency/occupancy-bound: DRAM at 10%") == 0);
  CHECK(v->evidence.find("8 CTAs for 264 CTA slots") != std::string::npos);
  CHECK(v->action.find("split-KV") != std::string::npos);
  CHECK(v->estimated_speedup == doctest::Approx(10).epsilon(0.02));
  // The same kernel with its parts chosen for the GPU, at 60% of the roof: a full grid, the
  // bandwidth lever.
  row.workload.kv_splits = 0;
  row.prediction = predict(find_kernel_model("flash-decode"), row.workload, h200());
  row.timing = Timing{{row.prediction.model_dram_bytes / 4800e9 / 0.6}, 0, 0};
  const std::optional<Advice> full = advise(row, analyze(row, h200()), h200());
  REQUIRE(full);
  CHECK(full->lever == Lever::kBandwidth);
}

TEST_CASE(
    "decode advice: a gain is bounded by a pure read of the row's bytes where one is measured") {
  // B8 H32/8 d64 KV 8192: 134 MB of cache, split-KV chosen, at 80% of the 4800 GB/s roof.
  Row row;
  row.kernel = "flash-decode";
  row.spec_key = "h200-sxm";
  row.workload = decode(8, 32, 8, 1, 8192, 64);
  row.prediction = predict(find_kernel_model("flash-decode"), row.workload, h200());
  const double bytes = row.prediction.model_dram_bytes;
  const double floor = bytes / 4800e9;
  row.timing = Timing{{floor / 0.8}, 0, 0};
  const std::optional<Advice> plain = advise(row, analyze(row, h200()), h200());
  REQUIRE(plain);
  CHECK(plain->estimated_speedup == doctest::Approx(1.25));
  // On a GPU whose pure read of that many bytes reaches 90% of the roof (calibrate's stream):
  // ×1.125 at most, and the evidence names the read.
  GpuSpec measured = h200();
  MemoryLevelSpec& dram = measured.memory[0];
  REQUIRE(dram.level == MemoryLevel::kDram);
  dram.stream = {{bytes / 2, floor / 2 / 0.8}, {bytes * 2, floor * 2 / 0.95}};
  dram.stream_source = "test";
  const double read = floor / 2 / 0.8 + (floor * 2 / 0.95 - floor / 2 / 0.8) / 3;  // at 1.5/3
  const std::optional<Advice> bounded = advise(row, analyze(row, measured), measured);
  REQUIRE(bounded);
  CHECK(bounded->lever == plain->lever);  // the lever is the roof's; only its bound moves
  CHECK(bounded->target_time_seconds == doctest::Approx(read));
  CHECK(bounded->estimated_speedup == doctest::Approx(floor / 0.8 / read));
  CHECK(bounded->gain_to_roof == doctest::Approx(floor / 0.8 / read));
  CAPTURE(bounded->evidence);
  CHECK(bounded->evidence.find("a pure read of its 135MB took") != std::string::npos);
  // A pure read faster than the kernel's bytes at the roof bounds nothing, and is not named.
  dram.stream = {{bytes * 2, floor}};
  const std::optional<Advice> fast = advise(row, analyze(row, measured), measured);
  REQUIRE(fast);
  CHECK(fast->estimated_speedup == doctest::Approx(1.25));
  CHECK(fast->evidence.find("pure read") == std::string::npos);
  // A profiled launch is timed by CUPTI's records, not as `run` times one: no stream floor.
  Row profiled = row;
  profiled.launch = KernelLaunch{};
  dram.stream = {{bytes / 2, floor / 2 / 0.8}, {bytes * 2, floor * 2 / 0.95}};
  const RowAnalysis a = analyze(profiled, measured);
  if (const std::optional<Advice> p = advise(profiled, a, measured))
    CHECK(p->evidence.find("pure read") == std::string::npos);
}

TEST_CASE("cli: model takes decode workloads, and refuses decode options without --q-len") {
  const CliResult r = cli({"model", "--gpu", "h200", "--kernel", "flash-decode", "--q-len", "1,4",
                           "--heads", "32", "--kv-heads", "8", "--head-dim", "128", "--seq", "8192",
                           "--kv-splits", "0,1", "--json", "-"});
  REQUIRE(r.code == 0);
  const auto j = nlohmann::json::parse(r.out);
  // q-len 1: one row per split value (the mask changes nothing); q-len 4: causal and full.
  CHECK(j["rows"].size() == 2 + 4);
  for (const auto& row : j["rows"]) {
    CHECK(row["status"] == "ok");
    CHECK(row["workload"]["kv_heads"] == 8);
  }
  // Without --kernel, a decode sweep runs the decode kernel alone.
  const CliResult all = cli({"model", "--gpu", "h200", "--q-len", "1", "--seq", "4096", "--json",
                             "-", "--head-dim", "128"});
  REQUIRE(all.code == 0);
  for (const auto& row : nlohmann::json::parse(all.out)["rows"])
    CHECK(row["kernel"] == "flash-decode");
  const CliResult stray = cli({"model", "--gpu", "h200", "--page-size", "16"});
  CHECK(stray.code == 2);
  CHECK(stray.err.find("give --q-len too") != std::string::npos);
  const CliResult prefill_kernel =
      cli({"model", "--gpu", "h200", "--kernel", "flash-v2", "--q-len", "1", "--head-dim", "128"});
  CHECK(prefill_kernel.code == 2);
  CHECK(prefill_kernel.err.find("decode kernels: flash-decode") != std::string::npos);
  const CliResult decode_kernel = cli({"model", "--gpu", "h200", "--kernel", "flash-decode"});
  CHECK(decode_kernel.code == 2);
  CHECK(decode_kernel.err.find("flash-decode runs decode workloads: give --q-len") !=
        std::string::npos);
}

TEST_CASE("decode advice: a profiled decode launch of few CTAs gets the same verdict") {
  // A framework's decode attention kernel as `profile` records it: 8 CTAs of 128 threads,
  // 134 MB of KV cache read at 10% of the H200's DRAM bandwidth, the tensor work of GQA 4
  // (4 FLOPs a byte: at the 8 busy SMs' mma.sync rate it would take less than the bytes at the
  // full bandwidth, so neither the pipe nor the tail holds it).
  const double bytes = 134e6;
  Row row = profiled_row("flash_fwd_splitkv_kernel", {1, 8, 1}, {128, 1, 1},
                         {{quantity::kDramRead, bytes},
                          {quantity::kDramWrite, 0.01 * bytes},
                          {quantity::kTensorMmaSync, 4 * bytes}},
                         bytes / 4800e9 / 0.1);
  row.launch->registers_per_thread = 128;
  row.launch->dynamic_shared_bytes = 48 * 1024;
  const std::optional<Advice> v = advise(row, analyze(row, h200()), h200());
  REQUIRE(v);
  CHECK(v->lever == Lever::kOccupancy);
  CHECK(v->evidence.find("latency/occupancy-bound: DRAM at 10%") == 0);
  CHECK(v->evidence.find("with 8 CTAs for ") != std::string::npos);
  CHECK(v->estimated_speedup == doctest::Approx(10).epsilon(0.02));
  // The same bytes from a grid that fills the GPU: not an occupancy problem.
  row.launch->grid = {132 * 8, 1, 1};
  const std::optional<Advice> full = advise(row, analyze(row, h200()), h200());
  REQUIRE(full);
  CHECK(full->lever == Lever::kBandwidth);
}
