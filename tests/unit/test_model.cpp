#include <doctest/doctest.h>

#include "lib/core/base/errors.hpp"
#include "lib/core/model/model.hpp"
#include "tests/unit/helpers.hpp"

using namespace roofline;

namespace {
Workload seed_workload(int n, bool causal, Pass pass = Pass::kForward) {
  Workload w;
  w.batch = 1;
  w.heads = 8;
  w.head_dim = 64;
  w.seq_len = n;
  w.causal = causal;
  w.pass = pass;
  return w;
}
}  // namespace

TEST_CASE("model: the v0.3.0 analysis's theoretical FLOP column is the non-causal count") {
  // The v0.3.0 analysis's §5.1 labels these rows causal, but 2.15, 34.4, 137.4, 549.8 GFLOP are
  // 4·B·H·N²·d.
  CHECK(algorithmic_flops(seed_workload(1024, false)) / 1e9 ==
        doctest::Approx(2.147).epsilon(1e-3));
  CHECK(algorithmic_flops(seed_workload(4096, false)) / 1e9 ==
        doctest::Approx(34.36).epsilon(1e-3));
  CHECK(algorithmic_flops(seed_workload(8192, false)) / 1e9 ==
        doctest::Approx(137.4).epsilon(1e-3));
  CHECK(algorithmic_flops(seed_workload(16384, false)) / 1e9 ==
        doctest::Approx(549.8).epsilon(1e-3));
  CHECK(algorithmic_flops(seed_workload(1024, false)) == 2147483648.0);
  // Causal halves; backward is 2.5× forward.
  CHECK(algorithmic_flops(seed_workload(1024, true)) == 1073741824.0);
  CHECK(algorithmic_flops(seed_workload(1024, false, Pass::kBackward)) == 2.5 * 2147483648.0);
}

TEST_CASE("model: standard attention, term by term") {
  const Prediction p = predict(find_kernel_model("standard"), seed_workload(1024, false));
  // FLOPs: two N×N×d GEMMs (4·B·H·N²·d) plus the v0.3.0 analysis's 5·B·H·N² for softmax.
  CHECK(p.model_flops == 2147483648.0 + 41943040.0);
  // Bytes: Q, K, V, O (4 × 1 MiB) and S, P each written and read (4 × 16 MiB).
  CHECK(p.model_dram_bytes == 4194304.0 + 67108864.0);
  CHECK(p.compulsory_dram_bytes == 4194304.0);
  CHECK(p.flop_terms.size() == 3);
  CHECK(p.byte_terms.size() == 4);
  // cuBLAS computes the whole square even with a causal mask: same model FLOPs and bytes.
  const Prediction causal = predict(find_kernel_model("standard"), seed_workload(1024, true));
  CHECK(causal.model_flops == p.model_flops);
  CHECK(causal.algorithmic_flops == p.algorithmic_flops / 2);
}

TEST_CASE("model: flash attention reloads K and V once per query tile") {
  const KernelModel& flash = find_kernel_model("flash-v2");
  REQUIRE(flash.tiles(64).fwd_block_q == 128);
  REQUIRE(flash.tiles(64).fwd_block_kv == 64);
  const Prediction p = predict(flash, seed_workload(1024, false));
  CHECK(p.model_flops == 2147483648.0);
  // Q and O once (2 MiB), K and V once per each of the 8 query tiles (16 MiB), LSE 32 KiB.
  CHECK(p.model_dram_bytes == 2097152.0 + 16777216.0 + 32768.0);
  CHECK(p.compulsory_dram_bytes == 4194304.0 + 32768.0);

  // Causal: query tile i computes (i+1)·128 key columns, whole diagonal tiles included, so
  // (T+1)/T = 9/8 of the half square with T = 8 tiles; K/V traffic shrinks the same way.
  const Prediction causal = predict(flash, seed_workload(1024, true));
  CHECK(causal.model_flops == 1207959552.0);
  CHECK(causal.model_flops / causal.algorithmic_flops == doctest::Approx(1.125));
  CHECK(causal.model_dram_bytes == 2097152.0 + 16777216.0 * 36 / 64 + 32768.0);
}

TEST_CASE("model: ragged N: flash-v1 counts real rows, flash-v2 the padding it computes") {
  const KernelModel& v1 = find_kernel_model("flash-v1");
  CHECK(predict(v1, seed_workload(1000, false)).model_flops == 4.0 * 8 * 1000 * 1000 * 64);
  CHECK(predict(v1, seed_workload(1, true)).model_flops == 4.0 * 8 * 64);
  // flash-v2 computes whole 32-row warp blocks and whole 64-key tiles (the counters at N = 1
  // on the H200 saw 32 × Bc scores per head): N = 1000 → 1024 × 1024, N = 1 → 32 × 64.
  const KernelModel& v2 = find_kernel_model("flash-v2");
  CHECK(predict(v2, seed_workload(1000, false)).model_flops == 4.0 * 8 * 1024 * 1024 * 64);
  CHECK(predict(v2, seed_workload(1, true)).model_flops == 4.0 * 8 * 32 * 64 * 64);
  // Bytes never count padding.
  CHECK(predict(v2, seed_workload(1, true)).no_reuse_dram_bytes == 4.0 * 8 * 64 * 2 + 8 * 4);
}

TEST_CASE("model: backward passes") {
  const Prediction flash =
      predict(find_kernel_model("flash-v2"), seed_workload(4096, false, Pass::kBackward));
  CHECK(flash.algorithmic_flops == 2.5 * 4.0 * 8 * 4096.0 * 4096 * 64);
  CHECK(flash.model_flops == flash.algorithmic_flops);  // 5 GEMM-sized products per score
  // flash-v1 computes dQ in a second pass: 14·d FLOPs per score instead of 10·d.
  const Prediction v1 =
      predict(find_kernel_model("flash-v1"), seed_workload(4096, false, Pass::kBackward));
  CHECK(v1.model_flops == doctest::Approx(1.4 * v1.algorithmic_flops));
  // Q, K, V, O, dO and LSE read, dQ, dK, dV written.
  CHECK(flash.compulsory_dram_bytes == 8 * 8 * 4096.0 * 64 * 2 + 8 * 4096.0 * 4);
  const Prediction standard =
      predict(find_kernel_model("standard"), seed_workload(4096, false, Pass::kBackward));
  CHECK(standard.model_flops == 8.0 * 8 * 4096 * 4096 * 64 + 4.0 * 8 * 4096 * 4096);
  // 7 N² FP16 matrices move: P twice, dP twice, dS three times.
  CHECK(standard.model_dram_bytes == 7 * 8 * 4096.0 * 4096 * 2 + 8 * 8 * 4096.0 * 64 * 2);
}

TEST_CASE("model: workload validation messages") {
  Workload w = seed_workload(1024, false);
  w.seq_len = 0;
  CHECK(validation_error(w) == "seq must be >= 1 (got 0)");
  w = seed_workload(1024, false);
  w.batch = -1;
  CHECK(validation_error(w) == "batch must be >= 1 (got -1)");
  w = seed_workload(1024, false);
  w.heads = 0;
  CHECK(validation_error(w) == "heads must be >= 1 (got 0)");
  w = seed_workload(1024, false);
  w.head_dim = 48;
  CHECK(validation_error(w) == "head-dim must be 32, 64 or 128 (got 48)");
  CHECK_THROWS_WITH_AS(find_kernel_model("flash-v9"),
                       "unknown kernel \"flash-v9\": did you mean flash-v1, flash-v2 or flash-v3? "
                       "(known: standard, flash-v1, flash-v2, flash-v3, flash-decode)",
                       InputError);
  CHECK_THROWS_WITH_AS(find_kernel_model("flsh-v2"),
                       "unknown kernel \"flsh-v2\": did you mean flash-v2? (known: standard, "
                       "flash-v1, flash-v2, flash-v3, flash-decode)",
                       InputError);
  CHECK_THROWS_WITH_AS(
      find_kernel_model("cudnn"),
      "unknown kernel \"cudnn\"; known: standard, flash-v1, flash-v2, flash-v3, flash-decode",
      InputError);
}

TEST_CASE("model: kernels are judged against the ceiling of their own path") {
  SpecRegistry registry;
  registry.add_directory(ROOFLINE_TEST_SPECS_DIR);
  const GpuSpec& h100 = registry.find("h100");
  Workload w = seed_workload(1024, false);
  CHECK(binding_ceiling(find_kernel_model("flash-v2"), h100, w)->id() == "tensor_fp16.mma_sync");
  CHECK(binding_ceiling(find_kernel_model("standard"), h100, w)->id() == "tensor_fp16.wgmma");
  CHECK(binding_ceiling(find_kernel_model("flash-v1"), h100, w)->id() == "fp32");
  // cuBLAS needs rows of S and P in multiples of 16 bytes for its wgmma (TMA) kernels.
  w.seq_len = 1023;
  CHECK(binding_ceiling(find_kernel_model("standard"), h100, w)->id() == "tensor_fp16.mma_sync");
  w.head_dim = 128;
  CHECK(binding_ceiling(find_kernel_model("standard"), h100, w)->id() == "tensor_fp16.mma_sync");
  const GpuSpec& a100 = registry.find("a100");
  CHECK(binding_ceiling(find_kernel_model("flash-v2"), a100, w)->peak_tflops == 312);
}

TEST_CASE("model: unsupported_reason names the GPU, the head dim or the missing pass") {
  KernelModel hopper = find_kernel_model("flash-v2");
  hopper.name = "hopper-only";
  hopper.required_compute_capability = "9.0";
  hopper.head_dims = {64, 128};
  hopper.head_dim_limit = "rows must be 128 bytes";
  hopper.has_backward = false;
  const Workload fwd = seed_workload(1024, false);
  CHECK(unsupported_reason(hopper, fwd, "9.0").empty());
  CHECK(unsupported_reason(hopper, fwd, "").empty());
  CHECK(unsupported_reason(hopper, fwd, "8.0") ==
        "hopper-only is built for compute capability 9.0 only (this GPU: 8.0)");
  Workload narrow = fwd;
  narrow.head_dim = 32;
  CHECK(unsupported_reason(hopper, narrow, "9.0") ==
        "hopper-only has no head_dim 32: rows must be 128 bytes");
  CHECK(unsupported_reason(hopper, seed_workload(1024, false, Pass::kBackward), "9.0") ==
        "hopper-only has no backward pass yet");
  for (const KernelModel& model : kernel_models()) {
    if (model.required_compute_capability.empty() && !model.decode_only) {
      CHECK(unsupported_reason(model, narrow, "8.0").empty());
      CHECK(unsupported_reason(model, seed_workload(1024, true, Pass::kBackward), "7.5").empty());
    }
  }
}
