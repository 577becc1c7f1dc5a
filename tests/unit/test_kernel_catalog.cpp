// The one kernel catalogue (kernels/catalog.hpp): the analytic model (lib/core) and the kernels'
// dispatch (kernels/registry.cpp) both read it. Host code only: runs without a GPU.
#include <doctest/doctest.h>

#include "kernels/attention.hpp"
#include "kernels/catalog.hpp"
#include "lib/core/model/model.hpp"

using namespace roofline;

TEST_CASE("kernel catalogue: the model has every catalogue kernel, in order, with its tiles") {
  // (The CTAs per SM are also checked against the occupancy API on an sm_90 GPU: gpu.kernels.)
  const auto& kernels = kernels::kernel_catalog();
  const auto& models = kernel_models();
  REQUIRE(kernels.size() == kernels::kKernelCatalog.size());
  REQUIRE(models.size() == kernels.size());
  for (std::size_t i = 0; i < models.size(); ++i) {
    CAPTURE(models[i].name);
    CHECK(kernels[i].name == models[i].name);
    CHECK(kernels[i].summary == models[i].summary);
    for (int d : {32, 64, 128}) {
      CAPTURE(d);
      CHECK(kernels[i].tiles(d).fwd_block_q == models[i].tiles(d).fwd_block_q);
      CHECK(kernels[i].tiles(d).fwd_block_kv == models[i].tiles(d).fwd_block_kv);
      CHECK(kernels[i].tiles(d).bwd_block_q == models[i].tiles(d).bwd_block_q);
      CHECK(kernels[i].tiles(d).bwd_block_kv == models[i].tiles(d).bwd_block_kv);
      CHECK(kernels[i].tiles(d).fwd_ctas_per_sm == models[i].tiles(d).fwd_ctas_per_sm);
      CHECK(kernels[i].tiles(d).bwd_ctas_per_sm == models[i].tiles(d).bwd_ctas_per_sm);
    }
    // What the model adds must agree with the catalogue's pipe.
    CHECK(kernels[i].uses_tensor_cores == is_tensor(models[i].path));
    CHECK(kernels::find_kernel(models[i].name) == &kernels[i]);
  }
  CHECK(kernels::find_kernel("flash-v9") == nullptr);
}

TEST_CASE("kernel catalogue: the checks the kernel files assert their tiles with") {
  // Each flash kernel file static_asserts its own tiles with these; they must be able to fail.
  using kernels::backward_tiles_are;
  using kernels::forward_tiles_are;
  static_assert(forward_tiles_are("flash-v2", 128, 128, 32));
  static_assert(!forward_tiles_are("flash-v2", 128, 128, 64));
  static_assert(backward_tiles_are("flash-v3", 128, 80, 128));
  static_assert(!backward_tiles_are("flash-v3", 64, 128, 128));
  CHECK(!forward_tiles_are("flash-v9", 64, 64, 64));
  CHECK(forward_tiles_are("flash-v1", 32, 64, 64));
}

TEST_CASE("kernel catalogue: standard attention's cuBLAS opens where the binary runs") {
  // Not linked (its 540 MB of mappings kept every command from starting under a 512 MiB
  // address-space cap): opened by its soname through the binary's run path, or beside the CUDA
  // runtime, when `standard` first runs. No GPU needed to open it.
  CHECK(kernels::cublas_available());
}

TEST_CASE("kernel catalogue: the dispatch knows every catalogue kernel by name") {
  kernels::AttentionShape shape;
  shape.seq_len = 4096;
  // An unknown name needs no workspace and launches nothing (cudaErrorInvalidValue before any
  // CUDA call); every catalogue name reaches its kernel file, which sizes a workspace.
  CHECK(kernels::workspace_bytes("flash-v9", shape) == 0);
  CHECK(kernels::launch_attention("flash-v9", kernels::Pass::kForward, shape, {}, nullptr) ==
        cudaErrorInvalidValue);
  kernels::AttentionShape decode = shape;  // split-KV parts: flash-decode's workspace
  decode.q_len = 1;
  decode.kv_splits = 4;
  for (const kernels::KernelInfo& info : kernels::kKernelCatalog) {
    CAPTURE(info.name);
    CHECK(kernels::workspace_bytes(info.name, info.decode_only ? decode : shape) > 0);
  }
}

TEST_CASE("kernel catalogue: shape validation and workspace sizes") {
  kernels::AttentionShape shape;
  shape.head_dim = 48;
  CHECK(kernels::validate_shape(shape) == "head_dim must be 32, 64 or 128 (got 48)");
  shape.head_dim = 64;
  shape.seq_len = 0;
  CHECK(kernels::validate_shape(shape) == "seq_len must be >= 1 (got 0)");
  shape.seq_len = 4096;
  CHECK(kernels::validate_shape(shape).empty());
  // The standard kernel materialises S and P: at least 2 FP16 N×N matrices per head.
  CHECK(kernels::workspace_bytes("standard", shape) >= 2ull * 8 * 4096 * 4096 * 2);
}
