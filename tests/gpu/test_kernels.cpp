// GPU tests of the bundled attention kernels (kernels/attention.hpp).
//
// Every kernel, forward and backward, is checked against the FP32 reference on random inputs
// over a grid of shapes (ragged and tiny N, all head dims, causal and not). A kernel passes
// when its L2 and max errors are at most twice those of the FP16-emulating reference (a plain
// unfused FP16 implementation), plus a tiny floor so that exact cases do not need a zero error.
// Outputs are poisoned before each run and must come back fully written. The BF16 cases (test
// names with "BF16") run a smaller grid the same way, with BF16 inputs and the BF16-emulating
// reference as the yardstick: the 2x rule is per dtype through that baseline.
//
// flash-decode (decode shapes: q_len new tokens against a KV cache) is checked the same way
// against the decode reference over its own grid: q_len 1 and 8, GQA ratios 1, 4 and 8, d 64
// and 128, FP16 and BF16, a contiguous and a paged cache (pages of 16 and 256 tokens, the
// block table a shuffled permutation of the pages), ragged lengths in one batch, causal and
// not, one part, automatic parts and several (split-KV). Cache rows past each sequence's
// length, and pages no sequence uses, hold NaN, and block-table entries past a sequence's
// pages are -1, so that reading any of them shows up in the output or as a fault.
//
// Exits 77 (CTest's skip code) when there is no CUDA device. ROOFLINE_GPU_TEST_SMALL=1 selects
// a few small shapes, for runs under compute-sanitizer.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <numeric>
#include <random>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include <cuda_runtime_api.h>

#include "kernels/attention.hpp"
#include "tests/gpu/device_buffer.hpp"

namespace rk = roofline::kernels;
using roofline::testing::DeviceBuffer;

#define ROOFLINE_REQUIRE_CUDA(expr)                                                         \
  do {                                                                                      \
    const cudaError_t roofline_status_ = (expr);                                            \
    INFO(#expr);                                                                            \
    REQUIRE_MESSAGE(roofline_status_ == cudaSuccess, cudaGetErrorString(roofline_status_)); \
  } while (0)

namespace {

constexpr float kInputScale = 1.f;

struct ErrorStats {
  double max_abs = 0;
  double diff_l2 = 0;
  double ref_l2 = 0;
  double relative() const { return ref_l2 > 0 ? diff_l2 / ref_l2 : diff_l2; }
};

std::string describe(const rk::AttentionShape& s) {
  std::ostringstream out;
  out << "B=" << s.batch << " H=" << s.heads << " N=" << s.seq_len << " d=" << s.head_dim
      << (s.causal ? " causal" : " non-causal") << (s.dtype == rk::DType::kBf16 ? " bf16" : "");
  return out.str();
}

ErrorStats read_stats(const DeviceBuffer& out) {
  double host[3] = {};
  ROOFLINE_REQUIRE_CUDA(cudaMemcpy(host, out.get(), sizeof(host), cudaMemcpyDeviceToHost));
  return {host[0], host[1], host[2]};
}

ErrorStats compare_half(const void* test, const float* ref, std::size_t count,
                        rk::DType dtype = rk::DType::kFp16) {
  DeviceBuffer out(3 * sizeof(double));
  ROOFLINE_REQUIRE_CUDA(
      rk::compare_to_float(test, dtype, ref, count, static_cast<double*>(out.get()), nullptr));
  return read_stats(out);
}

ErrorStats compare_float(const float* test, const float* ref, std::size_t count) {
  DeviceBuffer out(3 * sizeof(double));
  ROOFLINE_REQUIRE_CUDA(
      rk::compare_float_to_float(test, ref, count, static_cast<double*>(out.get()), nullptr));
  return read_stats(out);
}

int nonfinite_count(const void* half_data, std::size_t count, rk::DType dtype = rk::DType::kFp16) {
  DeviceBuffer counter(sizeof(int));
  ROOFLINE_REQUIRE_CUDA(
      rk::count_nonfinite(half_data, dtype, count, static_cast<int*>(counter.get()), nullptr));
  int host = -1;
  ROOFLINE_REQUIRE_CUDA(cudaMemcpy(&host, counter.get(), sizeof(int), cudaMemcpyDeviceToHost));
  return host;
}

// The 2x rule with a floor: 1e-6 relative plus 1e-6 RMS for L2, 1e-5 for the max error.
// Appends "what=<kernel rel L2>/<emulated rel L2>" to `log` for the summary line.
void check_tolerance(const char* what, const ErrorStats& kernel, const ErrorStats& emulated,
                     std::size_t count, std::string* log) {
  char entry[96];
  std::snprintf(entry, sizeof(entry), " %s=%.2e/%.2e", what, kernel.relative(),
                emulated.relative());
  *log += entry;
  const double l2_limit =
      2.0 * emulated.diff_l2 + 1e-6 * kernel.ref_l2 + 1e-6 * std::sqrt(static_cast<double>(count));
  const double max_limit = 2.0 * emulated.max_abs + 1e-5;
  INFO(what, ": kernel rel L2 ", kernel.relative(), ", max ", kernel.max_abs,
       " | emulating reference (FP16 or BF16) rel L2 ", emulated.relative(), ", max ",
       emulated.max_abs);
  CHECK(kernel.diff_l2 <= l2_limit);
  CHECK(kernel.max_abs <= max_limit);
}

// One shape's random inputs and both references (FP32 and FP16-emulating), computed once.
struct Problem {
  rk::AttentionShape shape;
  std::size_t elements = 0;
  std::size_t rows = 0;
  DeviceBuffer q, k, v, d_o;
  DeviceBuffer ref_o, ref_lse, ref_dq, ref_dk, ref_dv;
  DeviceBuffer emu_o, emu_lse, emu_dq, emu_dk, emu_dv;
  ErrorStats emu_err_o, emu_err_lse, emu_err_dq, emu_err_dk, emu_err_dv;

  rk::AttentionBuffers inputs() const {
    rk::AttentionBuffers b;
    b.q = q.get();
    b.k = k.get();
    b.v = v.get();
    b.d_o = d_o.get();
    return b;
  }
};

std::unique_ptr<Problem> make_problem(const rk::AttentionShape& shape, unsigned long long seed) {
  auto pr = std::make_unique<Problem>();
  pr->shape = shape;
  pr->rows = static_cast<std::size_t>(shape.batch) * shape.heads * shape.seq_len;
  pr->elements = pr->rows * shape.head_dim;
  const std::size_t half_bytes = pr->elements * 2;
  const std::size_t float_bytes = pr->elements * sizeof(float);
  pr->q = DeviceBuffer(half_bytes);
  pr->k = DeviceBuffer(half_bytes);
  pr->v = DeviceBuffer(half_bytes);
  pr->d_o = DeviceBuffer(half_bytes);
  ROOFLINE_REQUIRE_CUDA(
      rk::fill_random(pr->q.get(), shape.dtype, pr->elements, seed, kInputScale, nullptr));
  ROOFLINE_REQUIRE_CUDA(
      rk::fill_random(pr->k.get(), shape.dtype, pr->elements, seed + 1, kInputScale, nullptr));
  ROOFLINE_REQUIRE_CUDA(
      rk::fill_random(pr->v.get(), shape.dtype, pr->elements, seed + 2, kInputScale, nullptr));
  ROOFLINE_REQUIRE_CUDA(
      rk::fill_random(pr->d_o.get(), shape.dtype, pr->elements, seed + 3, kInputScale, nullptr));

  DeviceBuffer* ref[] = {&pr->ref_o, &pr->ref_dq, &pr->ref_dk, &pr->ref_dv,
                         &pr->emu_o, &pr->emu_dq, &pr->emu_dk, &pr->emu_dv};
  for (DeviceBuffer* b : ref) {
    *b = DeviceBuffer(float_bytes);
    ROOFLINE_REQUIRE_CUDA(rk::poison(b->get(), float_bytes, nullptr));
  }
  pr->ref_lse = DeviceBuffer(pr->rows * sizeof(float));
  pr->emu_lse = DeviceBuffer(pr->rows * sizeof(float));

  const rk::AttentionBuffers in = pr->inputs();
  for (bool emulate : {false, true}) {
    rk::ReferenceOutputs out;
    out.o = (emulate ? pr->emu_o : pr->ref_o).as_float();
    out.lse = (emulate ? pr->emu_lse : pr->ref_lse).as_float();
    out.d_q = (emulate ? pr->emu_dq : pr->ref_dq).as_float();
    out.d_k = (emulate ? pr->emu_dk : pr->ref_dk).as_float();
    out.d_v = (emulate ? pr->emu_dv : pr->ref_dv).as_float();
    ROOFLINE_REQUIRE_CUDA(
        rk::launch_reference(rk::Pass::kForward, shape, in, out, emulate, nullptr));
    ROOFLINE_REQUIRE_CUDA(
        rk::launch_reference(rk::Pass::kBackward, shape, in, out, emulate, nullptr));
  }
  ROOFLINE_REQUIRE_CUDA(cudaDeviceSynchronize());
  const std::size_t n = pr->elements;
  pr->emu_err_o = compare_float(pr->emu_o.as_float(), pr->ref_o.as_float(), n);
  pr->emu_err_lse = compare_float(pr->emu_lse.as_float(), pr->ref_lse.as_float(), pr->rows);
  pr->emu_err_dq = compare_float(pr->emu_dq.as_float(), pr->ref_dq.as_float(), n);
  pr->emu_err_dk = compare_float(pr->emu_dk.as_float(), pr->ref_dk.as_float(), n);
  pr->emu_err_dv = compare_float(pr->emu_dv.as_float(), pr->ref_dv.as_float(), n);
  // The references themselves must be finite (a NaN would make every comparison pass vacuously).
  REQUIRE(std::isfinite(pr->emu_err_o.diff_l2));
  REQUIRE(std::isfinite(pr->emu_err_dq.diff_l2 + pr->emu_err_dk.diff_l2 + pr->emu_err_dv.diff_l2));
  REQUIRE(std::isfinite(pr->emu_err_lse.diff_l2));
  return pr;
}

bool small_mode() {
  const char* value = std::getenv("ROOFLINE_GPU_TEST_SMALL");
  return value != nullptr && std::strcmp(value, "0") != 0;
}

std::vector<rk::AttentionShape> test_shapes() {
  std::vector<rk::AttentionShape> shapes;
  auto add = [&](int b, int h, int n, int d, bool causal) {
    rk::AttentionShape s;
    s.batch = b;
    s.heads = h;
    s.seq_len = n;
    s.head_dim = d;
    s.causal = causal;
    shapes.push_back(s);
  };
  if (small_mode()) {
    add(1, 2, 1, 64, true);
    add(1, 2, 17, 32, true);
    add(1, 2, 130, 128, false);
    add(1, 2, 130, 64, true);
    // More work items than an H100/H200 has SMs (140 and 2 x 67 > 132): flash-v3's persistent
    // CTAs take a second one. Few heads beyond that, so that racecheck finishes in minutes.
    add(1, 140, 64, 64, true);
    add(1, 67, 130, 128, false);
    return shapes;
  }
  for (int d : {32, 64, 128}) {
    for (bool causal : {false, true}) {
      for (int n : {1, 17, 1000}) add(2, 3, n, d, causal);
      add(1, 2, 4096, d, causal);
      // 400 query tiles of 128 rows: several work items per persistent flash-v3 CTA, of 1 to 5
      // key tiles when causal.
      add(2, 40, 640, d, causal);
    }
  }
  return shapes;
}

// Problems are shared by the per-kernel test cases, keyed by shape.
const Problem& problem_for(const rk::AttentionShape& s) {
  static std::map<std::tuple<int, int, int, int, bool, rk::DType>, std::unique_ptr<Problem>> cache;
  const auto key = std::make_tuple(s.batch, s.heads, s.seq_len, s.head_dim, s.causal, s.dtype);
  auto found = cache.find(key);
  if (found == cache.end()) {
    const unsigned long long seed = 1000003ull * static_cast<unsigned long long>(cache.size() + 1);
    found = cache.emplace(key, make_problem(s, seed)).first;
  }
  return *found->second;
}

// Device outputs of one kernel for one shape.
struct KernelRun {
  DeviceBuffer o, lse, d_q, d_k, d_v, workspace;
  rk::AttentionBuffers buffers;

  // `forward_kernel` (default: `kernel`) produces O and LSE; the workspace covers both.
  KernelRun(const std::string& kernel, const Problem& pr, const std::string& forward_kernel = {}) {
    const std::size_t half_bytes = pr.elements * 2;
    o = DeviceBuffer(half_bytes);
    lse = DeviceBuffer(pr.rows * sizeof(float));
    d_q = DeviceBuffer(half_bytes);
    d_k = DeviceBuffer(half_bytes);
    d_v = DeviceBuffer(half_bytes);
    workspace = DeviceBuffer(
        std::max(rk::workspace_bytes(kernel, pr.shape),
                 rk::workspace_bytes(forward_kernel.empty() ? kernel : forward_kernel, pr.shape)));
    buffers = pr.inputs();
    buffers.o = o.get();
    buffers.lse = lse.as_float();
    buffers.d_q = d_q.get();
    buffers.d_k = d_k.get();
    buffers.d_v = d_v.get();
    buffers.workspace = workspace.get();
  }
};

// Runs `forward_kernel`'s forward (default: the kernel's own) and the kernel's backward.
void check_kernel(const std::string& kernel, const rk::AttentionShape& shape,
                  const std::string& forward_kernel = {}) {
  const std::string& fwd = forward_kernel.empty() ? kernel : forward_kernel;
  const Problem& pr = problem_for(shape);
  INFO(kernel, " ", describe(shape), " (forward: ", fwd, ")");
  KernelRun run(kernel, pr, fwd);
  const bool writes_lse = fwd != "standard";
  const std::size_t n = pr.elements;
  const rk::DType dtype = shape.dtype;

  ROOFLINE_REQUIRE_CUDA(rk::poison(run.o.get(), run.o.bytes(), nullptr));
  ROOFLINE_REQUIRE_CUDA(rk::poison(run.lse.get(), run.lse.bytes(), nullptr));
  ROOFLINE_REQUIRE_CUDA(rk::launch_attention(fwd, rk::Pass::kForward, shape, run.buffers, nullptr));
  ROOFLINE_REQUIRE_CUDA(cudaDeviceSynchronize());
  CHECK_MESSAGE(nonfinite_count(run.o.get(), n, dtype) == 0,
                "O has unwritten or non-finite elements");
  std::string log = kernel + " " + describe(shape) + " rel L2 kernel/emulation:";
  if (fwd != kernel) log = kernel + " (forward " + fwd + ") " + describe(shape) + " rel L2:";
  check_tolerance("O", compare_half(run.o.get(), pr.ref_o.as_float(), n, dtype), pr.emu_err_o, n,
                  &log);
  if (writes_lse) {
    // Poisoned (NaN) entries would show up as an infinite max error.
    check_tolerance("LSE", compare_float(run.lse.as_float(), pr.ref_lse.as_float(), pr.rows),
                    pr.emu_err_lse, pr.rows, &log);
  }

  for (DeviceBuffer* b : {&run.d_q, &run.d_k, &run.d_v}) {
    ROOFLINE_REQUIRE_CUDA(rk::poison(b->get(), b->bytes(), nullptr));
  }
  ROOFLINE_REQUIRE_CUDA(
      rk::launch_attention(kernel, rk::Pass::kBackward, shape, run.buffers, nullptr));
  ROOFLINE_REQUIRE_CUDA(cudaDeviceSynchronize());
  CHECK_MESSAGE(nonfinite_count(run.d_q.get(), n, dtype) == 0,
                "dQ has unwritten or non-finite elements");
  CHECK_MESSAGE(nonfinite_count(run.d_k.get(), n, dtype) == 0,
                "dK has unwritten or non-finite elements");
  CHECK_MESSAGE(nonfinite_count(run.d_v.get(), n, dtype) == 0,
                "dV has unwritten or non-finite elements");
  check_tolerance("dQ", compare_half(run.d_q.get(), pr.ref_dq.as_float(), n, dtype), pr.emu_err_dq,
                  n, &log);
  check_tolerance("dK", compare_half(run.d_k.get(), pr.ref_dk.as_float(), n, dtype), pr.emu_err_dk,
                  n, &log);
  check_tolerance("dV", compare_half(run.d_v.get(), pr.ref_dv.as_float(), n, dtype), pr.emu_err_dv,
                  n, &log);
  std::printf("%s\n", log.c_str());
}

// The BF16 grid: smaller than FP16's (the kernels share their code with FP16, only the element
// conversions and MMA types differ), ragged N, every head dim, causal and not.
std::vector<rk::AttentionShape> bf16_shapes() {
  std::vector<rk::AttentionShape> shapes;
  auto add = [&](int b, int h, int n, int d, bool causal) {
    rk::AttentionShape s;
    s.batch = b;
    s.heads = h;
    s.seq_len = n;
    s.head_dim = d;
    s.causal = causal;
    s.dtype = rk::DType::kBf16;
    shapes.push_back(s);
  };
  for (int d : {32, 64, 128}) {
    for (bool causal : {false, true}) {
      add(1, 2, 17, d, causal);
      add(2, 3, small_mode() ? 130 : 1000, d, causal);
    }
  }
  return shapes;
}

// Every shape of the grid (FP16, or the BF16 grid) whose head dim is in `head_dims`.
void check_all_shapes(const std::string& kernel, const std::vector<int>& head_dims = {32, 64, 128},
                      bool bf16 = false) {
  for (const rk::AttentionShape& shape : bf16 ? bf16_shapes() : test_shapes()) {
    if (std::find(head_dims.begin(), head_dims.end(), shape.head_dim) != head_dims.end())
      check_kernel(kernel, shape);
  }
}

std::vector<std::uint16_t> download_half(const DeviceBuffer& b) {
  std::vector<std::uint16_t> host(b.bytes() / 2);
  ROOFLINE_REQUIRE_CUDA(cudaMemcpy(host.data(), b.get(), b.bytes(), cudaMemcpyDeviceToHost));
  return host;
}

float half_to_float(std::uint16_t h) {
  const std::uint32_t sign = (h & 0x8000u) << 16;
  const std::uint32_t exponent = (h >> 10) & 0x1Fu;
  const std::uint32_t mantissa = h & 0x3FFu;
  float magnitude;
  if (exponent == 0) {
    magnitude = std::ldexp(static_cast<float>(mantissa), -24);
  } else if (exponent == 31) {
    magnitude = mantissa == 0 ? INFINITY : NAN;
  } else {
    magnitude = std::ldexp(static_cast<float>(mantissa | 0x400u), static_cast<int>(exponent) - 25);
  }
  return sign != 0 ? -magnitude : magnitude;
}

double relative_l2(const std::vector<std::uint16_t>& a, const std::vector<std::uint16_t>& b) {
  double diff = 0;
  double norm = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const double x = half_to_float(a[i]);
    const double y = half_to_float(b[i]);
    diff += (x - y) * (x - y);
    norm += y * y;
  }
  return norm > 0 ? std::sqrt(diff / norm) : std::sqrt(diff);
}

void check_idempotent_backward(const std::string& kernel, bool deterministic,
                               const std::string& forward_kernel = {}) {
  const std::string& fwd = forward_kernel.empty() ? kernel : forward_kernel;
  rk::AttentionShape shape;
  shape.batch = 2;
  shape.heads = 3;
  shape.seq_len = small_mode() ? 130 : 1000;
  shape.head_dim = 64;
  shape.causal = true;
  const Problem& pr = problem_for(shape);
  INFO(kernel, " ", describe(shape));
  KernelRun run(kernel, pr, fwd);
  ROOFLINE_REQUIRE_CUDA(rk::launch_attention(fwd, rk::Pass::kForward, shape, run.buffers, nullptr));
  ROOFLINE_REQUIRE_CUDA(
      rk::launch_attention(kernel, rk::Pass::kBackward, shape, run.buffers, nullptr));
  ROOFLINE_REQUIRE_CUDA(cudaDeviceSynchronize());
  const auto first_dq = download_half(run.d_q);
  const auto first_dk = download_half(run.d_k);
  const auto first_dv = download_half(run.d_v);
  for (DeviceBuffer* b : {&run.d_q, &run.d_k, &run.d_v}) {
    ROOFLINE_REQUIRE_CUDA(rk::poison(b->get(), b->bytes(), nullptr));
  }
  ROOFLINE_REQUIRE_CUDA(
      rk::launch_attention(kernel, rk::Pass::kBackward, shape, run.buffers, nullptr));
  ROOFLINE_REQUIRE_CUDA(cudaDeviceSynchronize());
  if (deterministic) {
    CHECK(download_half(run.d_q) == first_dq);
    CHECK(download_half(run.d_k) == first_dk);
    CHECK(download_half(run.d_v) == first_dv);
  } else {
    // FP32 atomics add in a different order each run; only rounding may differ.
    CHECK(relative_l2(download_half(run.d_q), first_dq) <= 1e-4);
    CHECK(download_half(run.d_k) == first_dk);
    CHECK(download_half(run.d_v) == first_dv);
  }
}

// ---- flash-decode --------------------------------------------------------------------------

// One decode problem: random q and cache, lengths, block table (paged) and both references.
struct DecodeProblem {
  rk::AttentionShape shape;
  std::vector<int> kv_lens;  // empty: every sequence seq_len long
  std::size_t q_elements = 0;
  std::size_t rows = 0;  // B · heads · q_len
  int pages = 0;         // pages in the pool (paged)
  DeviceBuffer q, k, v, lens, table;
  DeviceBuffer ref_o, ref_lse, emu_o, emu_lse;
  ErrorStats emu_err_o, emu_err_lse;

  rk::AttentionBuffers inputs() const {
    rk::AttentionBuffers b;
    b.q = q.get();
    b.k = k.get();
    b.v = v.get();
    b.kv_lens = kv_lens.empty() ? nullptr : static_cast<const int*>(lens.get());
    b.block_table = shape.page_size > 0 ? static_cast<const int*>(table.get()) : nullptr;
    b.kv_pages = pages;
    return b;
  }
  int kv_len(int sequence) const {
    return kv_lens.empty() ? shape.seq_len : kv_lens[static_cast<std::size_t>(sequence)];
  }
};

std::string describe_decode(const rk::AttentionShape& s, const std::vector<int>& kv_lens) {
  std::ostringstream out;
  out << "B=" << s.batch << " H=" << s.heads << "/" << s.key_heads() << " q_len=" << s.q_len
      << " KV=" << s.seq_len << " d=" << s.head_dim
      << (s.page_size > 0 ? " paged" + std::to_string(s.page_size) : std::string(" contiguous"))
      << " splits=" << s.kv_splits << (s.causal ? " causal" : " non-causal")
      << (s.dtype == rk::DType::kBf16 ? " bf16" : "");
  if (!kv_lens.empty()) {
    out << " lengths";
    for (int n : kv_lens) out << " " << n;
  }
  return out.str();
}

// NaN into `count` 16-bit elements at element `offset` of `buffer`.
void poison_elements(const DeviceBuffer& buffer, std::size_t offset, std::size_t count) {
  if (count == 0) return;
  ROOFLINE_REQUIRE_CUDA(
      rk::poison(static_cast<std::uint16_t*>(buffer.get()) + offset, count * 2, nullptr));
}

std::unique_ptr<DecodeProblem> make_decode_problem(const rk::AttentionShape& shape,
                                                   const std::vector<int>& kv_lens,
                                                   unsigned long long seed) {
  auto pr = std::make_unique<DecodeProblem>();
  pr->shape = shape;
  pr->kv_lens = kv_lens;
  const int kv_heads = shape.key_heads();
  const std::size_t d = static_cast<std::size_t>(shape.head_dim);
  pr->rows = static_cast<std::size_t>(shape.batch) * shape.heads * shape.q_len;
  pr->q_elements = pr->rows * d;
  pr->q = DeviceBuffer(pr->q_elements * 2);
  ROOFLINE_REQUIRE_CUDA(
      rk::fill_random(pr->q.get(), shape.dtype, pr->q_elements, seed, kInputScale, nullptr));

  // Cache rows of one (sequence or page, key/value head): seq_len contiguous, page_size paged.
  std::size_t cache_rows = 0;
  std::vector<int> table;
  const int max_blocks =
      shape.page_size > 0 ? (shape.seq_len + shape.page_size - 1) / shape.page_size : 0;
  int pages = 0;
  int used_pages = 0;
  if (shape.page_size > 0) {
    for (int b = 0; b < shape.batch; ++b)
      used_pages += (pr->kv_len(b) + shape.page_size - 1) / shape.page_size;
    pages = used_pages + 3;  // three pages no sequence uses
    pr->pages = pages;
    cache_rows = static_cast<std::size_t>(pages) * kv_heads * shape.page_size;
    std::vector<int> order(static_cast<std::size_t>(pages));
    std::iota(order.begin(), order.end(), 0);
    std::mt19937 random(static_cast<std::mt19937::result_type>(seed));
    std::shuffle(order.begin(), order.end(), random);
    table.assign(static_cast<std::size_t>(shape.batch) * max_blocks, -1);
    std::size_t next = 0;
    for (int b = 0; b < shape.batch; ++b) {
      for (int j = 0; j * shape.page_size < pr->kv_len(b); ++j)
        table[static_cast<std::size_t>(b) * max_blocks + j] = order[next++];
    }
  } else {
    cache_rows = static_cast<std::size_t>(shape.batch) * kv_heads * shape.seq_len;
  }
  const std::size_t cache_elements = cache_rows * d;
  pr->k = DeviceBuffer(cache_elements * 2);
  pr->v = DeviceBuffer(cache_elements * 2);
  ROOFLINE_REQUIRE_CUDA(
      rk::fill_random(pr->k.get(), shape.dtype, cache_elements, seed + 1, kInputScale, nullptr));
  ROOFLINE_REQUIRE_CUDA(
      rk::fill_random(pr->v.get(), shape.dtype, cache_elements, seed + 2, kInputScale, nullptr));

  // NaN where no sequence has keys: the tail of each sequence (contiguous) or of its last page,
  // and the unused pages.
  for (const DeviceBuffer* cache : {&pr->k, &pr->v}) {
    if (shape.page_size > 0) {
      const std::size_t page_elements = static_cast<std::size_t>(kv_heads) * shape.page_size * d;
      std::vector<bool> used(static_cast<std::size_t>(pages), false);
      for (int b = 0; b < shape.batch; ++b) {
        const int n = pr->kv_len(b);
        for (int j = 0; j * shape.page_size < n; ++j) {
          const int page = table[static_cast<std::size_t>(b) * max_blocks + j];
          used[static_cast<std::size_t>(page)] = true;
          const int valid = std::min(shape.page_size, n - j * shape.page_size);
          for (int h = 0; h < kv_heads; ++h) {
            const std::size_t row0 =
                (static_cast<std::size_t>(page) * kv_heads + h) * shape.page_size;
            poison_elements(*cache, (row0 + valid) * d, (shape.page_size - valid) * d);
          }
        }
      }
      for (int page = 0; page < pages; ++page) {
        if (!used[static_cast<std::size_t>(page)])
          poison_elements(*cache, static_cast<std::size_t>(page) * page_elements, page_elements);
      }
    } else {
      for (int b = 0; b < shape.batch; ++b) {
        const int n = pr->kv_len(b);
        for (int h = 0; h < kv_heads; ++h) {
          const std::size_t row0 = (static_cast<std::size_t>(b) * kv_heads + h) * shape.seq_len;
          poison_elements(*cache, (row0 + n) * d, static_cast<std::size_t>(shape.seq_len - n) * d);
        }
      }
    }
  }
  if (!kv_lens.empty()) {
    pr->lens = DeviceBuffer(kv_lens.size() * sizeof(int));
    ROOFLINE_REQUIRE_CUDA(
        cudaMemcpy(pr->lens.get(), kv_lens.data(), pr->lens.bytes(), cudaMemcpyHostToDevice));
  }
  if (!table.empty()) {
    pr->table = DeviceBuffer(table.size() * sizeof(int));
    ROOFLINE_REQUIRE_CUDA(
        cudaMemcpy(pr->table.get(), table.data(), pr->table.bytes(), cudaMemcpyHostToDevice));
  }

  const std::size_t float_bytes = pr->q_elements * sizeof(float);
  for (DeviceBuffer* b : {&pr->ref_o, &pr->emu_o}) {
    *b = DeviceBuffer(float_bytes);
    ROOFLINE_REQUIRE_CUDA(rk::poison(b->get(), float_bytes, nullptr));
  }
  pr->ref_lse = DeviceBuffer(pr->rows * sizeof(float));
  pr->emu_lse = DeviceBuffer(pr->rows * sizeof(float));
  const rk::AttentionBuffers in = pr->inputs();
  for (bool emulate : {false, true}) {
    rk::ReferenceOutputs out;
    out.o = (emulate ? pr->emu_o : pr->ref_o).as_float();
    out.lse = (emulate ? pr->emu_lse : pr->ref_lse).as_float();
    ROOFLINE_REQUIRE_CUDA(
        rk::launch_reference(rk::Pass::kForward, shape, in, out, emulate, nullptr));
  }
  ROOFLINE_REQUIRE_CUDA(cudaDeviceSynchronize());
  pr->emu_err_o = compare_float(pr->emu_o.as_float(), pr->ref_o.as_float(), pr->q_elements);
  pr->emu_err_lse = compare_float(pr->emu_lse.as_float(), pr->ref_lse.as_float(), pr->rows);
  // The references themselves must be finite (a NaN would make every comparison pass vacuously).
  REQUIRE(std::isfinite(pr->emu_err_o.diff_l2));
  REQUIRE(std::isfinite(pr->emu_err_lse.diff_l2));
  return pr;
}

// flash-decode with `splits` parts (0: automatic) against the problem's references.
void check_decode(const DecodeProblem& pr, int splits) {
  rk::AttentionShape shape = pr.shape;
  shape.kv_splits = splits;
  INFO("flash-decode ", describe_decode(shape, pr.kv_lens));
  DeviceBuffer o(pr.q_elements * 2);
  DeviceBuffer lse(pr.rows * sizeof(float));
  DeviceBuffer workspace(rk::workspace_bytes("flash-decode", shape));
  if (splits == 1) CHECK(workspace.bytes() == 0);
  rk::AttentionBuffers buffers = pr.inputs();
  buffers.o = o.get();
  buffers.lse = lse.as_float();
  buffers.workspace = workspace.get();
  ROOFLINE_REQUIRE_CUDA(rk::poison(o.get(), o.bytes(), nullptr));
  ROOFLINE_REQUIRE_CUDA(rk::poison(lse.get(), lse.bytes(), nullptr));
  ROOFLINE_REQUIRE_CUDA(
      rk::launch_attention("flash-decode", rk::Pass::kForward, shape, buffers, nullptr));
  ROOFLINE_REQUIRE_CUDA(cudaDeviceSynchronize());
  CHECK_MESSAGE(nonfinite_count(o.get(), pr.q_elements, shape.dtype) == 0,
                "O has unwritten or non-finite elements");
  std::string log = "flash-decode " + describe_decode(shape, pr.kv_lens) + " rel L2:";
  check_tolerance("O", compare_half(o.get(), pr.ref_o.as_float(), pr.q_elements, shape.dtype),
                  pr.emu_err_o, pr.q_elements, &log);
  check_tolerance("LSE", compare_float(lse.as_float(), pr.ref_lse.as_float(), pr.rows),
                  pr.emu_err_lse, pr.rows, &log);
  std::printf("%s\n", log.c_str());
}

// The decode grid of one dtype: every combination of head dim, GQA ratio, new tokens, cache
// layout and masking, on a batch of four ragged sequences (each at least q_len long) with two
// key/value heads, each run with one part, automatic parts, 3 parts and 128 (most of them
// empty). Beside it, uniform lengths (no kv_lens), two blocks of 64 query rows, and a block of
// 48 (three row tiles).
void check_decode_grid(rk::DType dtype) {
  const bool small = small_mode();
  unsigned long long seed = dtype == rk::DType::kBf16 ? 7000001ull : 5000011ull;
  auto run = [&](int group, int q_len, int head_dim, int page_size, bool causal,
                 const std::vector<int>& kv_lens, std::vector<int> splits) {
    rk::AttentionShape shape;
    shape.batch = kv_lens.empty() ? 3 : static_cast<int>(kv_lens.size());
    shape.kv_heads = 2;
    shape.heads = shape.kv_heads * group;
    shape.q_len = q_len;
    shape.seq_len = 1031;
    shape.head_dim = head_dim;
    shape.causal = causal;
    shape.dtype = dtype;
    shape.page_size = page_size;
    REQUIRE(rk::validate_shape(shape).empty());
    seed += 1000003ull;
    const auto pr = make_decode_problem(shape, kv_lens, seed);
    for (int s : splits) check_decode(*pr, s);
  };
  const std::vector<int> all_splits = {1, 0, 3, 128};
  for (int head_dim : {64, 128}) {
    for (int group : {1, 4, 8}) {
      for (int q_len : {1, 8}) {
        const std::vector<int> lengths = {q_len, 17, 300, 1000};
        for (int page_size : {0, 16, 256}) {
          for (bool causal : {false, true}) {
            if (small && (head_dim == 128 || page_size == 256)) continue;
            run(group, q_len, head_dim, page_size, causal, lengths, all_splits);
          }
        }
      }
    }
  }
  if (small) return;
  for (int head_dim : {64, 128}) {
    run(8, 1, head_dim, 0, false, {}, {1, 0, 5});
    run(4, 4, head_dim, 16, true, {}, {1, 0, 5});
    run(8, 16, head_dim, 16, true, {16, 64, 1031}, {1, 0, 7});  // 128 rows: two row blocks
    run(6, 8, head_dim, 0, true, {8, 65, 700}, {1, 0, 2});      // 48 rows: three row tiles
  }
}

}  // namespace

TEST_CASE("kernel catalogue and shape validation") {
  const auto& catalog = rk::kernel_catalog();
  REQUIRE(catalog.size() == 5);
  CHECK(catalog[0].name == "standard");
  CHECK(catalog[1].name == "flash-v1");
  CHECK(catalog[2].name == "flash-v2");
  CHECK(catalog[3].name == "flash-v3");
  CHECK(catalog[4].name == "flash-decode");
  CHECK(catalog[4].decode_only);
  CHECK(rk::find_kernel("flash-decode") == &catalog[4]);
  CHECK(rk::find_kernel("flash-v2") == &catalog[2]);
  CHECK(rk::find_kernel("flash-v3") == &catalog[3]);
  CHECK(rk::find_kernel("flash-v4") == nullptr);

  rk::AttentionShape shape;
  CHECK(rk::validate_shape(shape).empty());
  shape.head_dim = 48;
  CHECK(rk::validate_shape(shape) == "head_dim must be 32, 64 or 128 (got 48)");
  shape.head_dim = 64;
  shape.seq_len = 0;
  CHECK(rk::validate_shape(shape) == "seq_len must be >= 1 (got 0)");
  shape.seq_len = 16;
  shape.batch = 0;
  CHECK(rk::validate_shape(shape) == "batch must be >= 1 (got 0)");
  shape.batch = 1;
  shape.heads = -2;
  CHECK(rk::validate_shape(shape) == "heads must be >= 1 (got -2)");
  shape.heads = 8;

  CHECK(rk::workspace_bytes("standard", shape) >= 2u * 8u * 16u * 16u * 2u);
  CHECK(rk::workspace_bytes("nope", shape) == 0);
  rk::AttentionBuffers empty;
  CHECK(rk::launch_attention("nope", rk::Pass::kForward, shape, empty, nullptr) ==
        cudaErrorInvalidValue);
  CHECK(rk::launch_attention("flash-v2", rk::Pass::kForward, shape, empty, nullptr) ==
        cudaErrorInvalidValue);
}

TEST_CASE("the catalogue's CTAs per SM are what the occupancy API says on an H100/H200") {
  // The model's tail roof and cache-aware bytes take them from the catalogue (kernels/catalog.hpp,
  // written for sm_90's 65,536 registers and 228 KB of shared memory a SM); a kernel change that
  // moves its registers or shared memory moves them.
  int device = 0;
  cudaDeviceProp prop{};
  REQUIRE(cudaGetDevice(&device) == cudaSuccess);
  REQUIRE(cudaGetDeviceProperties(&prop, device) == cudaSuccess);
  if (prop.major != 9) {
    MESSAGE("not an sm_90 device: the catalogue's CTAs per SM are not checked");
    return;
  }
  for (const char* name : {"flash-v1", "flash-v2"}) {
    const rk::KernelInfo* info = rk::find_kernel(name);
    REQUIRE(info != nullptr);
    for (const int d : {32, 64, 128})
      for (const bool causal : {false, true})
        for (const rk::Pass pass : {rk::Pass::kForward, rk::Pass::kBackward}) {
          CAPTURE(name);
          CAPTURE(d);
          CAPTURE(causal);
          CAPTURE(static_cast<int>(pass));
          rk::AttentionShape shape;
          shape.head_dim = d;
          shape.causal = causal;
          int ctas = -1;
          REQUIRE(rk::resident_ctas_per_sm(name, pass, shape, &ctas) == cudaSuccess);
          const rk::KernelTiles& tiles = info->tiles(d);
          CHECK(ctas ==
                (pass == rk::Pass::kForward ? tiles.fwd_ctas_per_sm : tiles.bwd_ctas_per_sm));
        }
  }
  int ctas = -1;
  CHECK(rk::resident_ctas_per_sm("standard", rk::Pass::kForward, rk::AttentionShape{}, &ctas) ==
        cudaErrorNotSupported);
  CHECK(rk::resident_ctas_per_sm("nope", rk::Pass::kForward, rk::AttentionShape{}, &ctas) ==
        cudaErrorInvalidValue);
}

TEST_CASE("decode shapes: validation and dispatch") {
  rk::AttentionShape shape;
  shape.batch = 2;
  shape.heads = 8;
  shape.kv_heads = 2;
  shape.seq_len = 100;
  shape.head_dim = 64;
  shape.q_len = 1;
  CHECK(rk::validate_shape(shape).empty());
  shape.q_len = 17;
  CHECK(rk::validate_shape(shape) == "q_len must be at most 16 new tokens per sequence (got 17)");
  shape.q_len = -1;
  CHECK(rk::validate_shape(shape) == "q_len must be 0 (prefill) or 1 to 16 (decode) (got -1)");
  shape.q_len = 4;
  shape.kv_heads = 3;
  CHECK(rk::validate_shape(shape) == "kv_heads must divide heads (got 8 heads, 3 kv_heads)");
  shape.kv_heads = 0;
  CHECK(rk::validate_shape(shape).empty());
  shape.kv_heads = 1;
  shape.head_dim = 32;
  CHECK(rk::validate_shape(shape) == "head_dim must be 64 or 128 for a decode shape (got 32)");
  shape.head_dim = 128;
  shape.page_size = 48;
  CHECK(rk::validate_shape(shape) ==
        "page_size must be 0 (a contiguous cache) or a power of two from 16 to 256 (got 48)");
  shape.page_size = 512;
  CHECK_FALSE(rk::validate_shape(shape).empty());
  shape.page_size = 8;
  CHECK_FALSE(rk::validate_shape(shape).empty());
  shape.page_size = 16;
  CHECK(rk::validate_shape(shape).empty());
  shape.kv_splits = 129;
  CHECK(rk::validate_shape(shape) == "kv_splits must be 0 (automatic) to 128 (got 129)");
  shape.kv_splits = 4;
  CHECK(rk::validate_shape(shape).empty());
  shape.seq_len = 3;
  CHECK(rk::validate_shape(shape) == "seq_len (the longest cache) must be >= q_len (got 3 < 4)");
  shape.seq_len = 100;

  rk::AttentionShape prefill;
  prefill.kv_splits = 2;
  CHECK(rk::validate_shape(prefill) ==
        "kv_heads, page_size and kv_splits apply to decode shapes only (q_len >= 1); a prefill "
        "shape leaves them 0");

  // Every buffer present, so that only the kernel/shape pairing decides.
  DeviceBuffer any(1 << 20);
  rk::AttentionBuffers b;
  b.q = b.k = b.v = b.d_o = any.get();
  b.o = b.d_q = b.d_k = b.d_v = b.workspace = any.get();
  b.lse = any.as_float();
  b.block_table = static_cast<const int*>(any.get());
  b.kv_pages = 1;
  for (const char* prefill_kernel : {"standard", "flash-v1", "flash-v2", "flash-v3"}) {
    INFO(prefill_kernel);
    CHECK(rk::workspace_bytes(prefill_kernel, shape) == 0);
    CHECK(rk::launch_attention(prefill_kernel, rk::Pass::kForward, shape, b, nullptr) ==
          cudaErrorInvalidValue);
    CHECK(rk::launch_attention(prefill_kernel, rk::Pass::kBackward, shape, b, nullptr) ==
          cudaErrorInvalidValue);
  }
  rk::AttentionShape square;
  CHECK(rk::workspace_bytes("flash-decode", square) == 0);
  CHECK(rk::launch_attention("flash-decode", rk::Pass::kForward, square, b, nullptr) ==
        cudaErrorInvalidValue);
  CHECK(rk::launch_attention("flash-decode", rk::Pass::kBackward, shape, b, nullptr) ==
        cudaErrorNotSupported);
  rk::AttentionBuffers no_table = b;
  no_table.block_table = nullptr;
  CHECK(rk::launch_attention("flash-decode", rk::Pass::kForward, shape, no_table, nullptr) ==
        cudaErrorInvalidValue);
  rk::AttentionBuffers no_pages = b;
  no_pages.kv_pages = 0;
  CHECK(rk::launch_attention("flash-decode", rk::Pass::kForward, shape, no_pages, nullptr) ==
        cudaErrorInvalidValue);
  rk::ReferenceOutputs out;
  out.o = out.lse = out.d_q = out.d_k = out.d_v = any.as_float();
  CHECK(rk::launch_reference(rk::Pass::kBackward, shape, b, out, false, nullptr) ==
        cudaErrorInvalidValue);
  CHECK(rk::launch_reference(rk::Pass::kForward, shape, no_table, out, false, nullptr) ==
        cudaErrorInvalidValue);
  // Workspace: none with one part; the partials (FP32 O and LSE of every part) with several.
  shape.kv_splits = 1;
  CHECK(rk::workspace_bytes("flash-decode", shape) == 0);
  shape.kv_splits = 4;
  CHECK(rk::workspace_bytes("flash-decode", shape) >= 4u * 2u * 8u * 4u * (128u + 1u) * 4u);
  ROOFLINE_REQUIRE_CUDA(cudaDeviceSynchronize());
}

TEST_CASE("standard matches the FP32 reference") {
  check_all_shapes("standard");
}
TEST_CASE("flash-v1 matches the FP32 reference") {
  check_all_shapes("flash-v1");
}
TEST_CASE("flash-v2 matches the FP32 reference") {
  check_all_shapes("flash-v2");
}

namespace {

// flash-v3 is built for sm_90a alone.
bool device_is_sm90() {
  int device = 0;
  cudaDeviceProp prop{};
  return cudaGetDevice(&device) == cudaSuccess &&
         cudaGetDeviceProperties(&prop, device) == cudaSuccess && prop.major == 9 &&
         prop.minor == 0;
}

}  // namespace

// The backward alone, fed by flash-v2's forward (same O and LSE contract), so that its errors
// are its own.
TEST_CASE("flash-v3 backward matches the FP32 reference (O and LSE from flash-v2)") {
  if (!device_is_sm90()) {
    MESSAGE("SKIPPED: flash-v3 needs an sm_90 GPU");
    return;
  }
  for (const rk::AttentionShape& shape : test_shapes()) {
    if (shape.head_dim == 32) {
      KernelRun run("flash-v3", problem_for(shape), "flash-v2");
      CHECK(rk::launch_attention("flash-v3", rk::Pass::kBackward, shape, run.buffers, nullptr) ==
            cudaErrorNotSupported);
      continue;
    }
    check_kernel("flash-v3", shape, "flash-v2");
  }
  check_idempotent_backward("flash-v3", false, "flash-v2");
}

// flash-v3 end to end: its own forward (O, LSE) feeding its own backward. No d = 32.
TEST_CASE("flash-v3 matches the FP32 reference (sm_90 only)") {
  if (!device_is_sm90()) {
    MESSAGE("SKIPPED: flash-v3 needs an sm_90 GPU");
    return;
  }
  check_all_shapes("flash-v3", {64, 128});
  for (const rk::AttentionShape& shape : test_shapes()) {
    if (shape.head_dim != 32) continue;
    KernelRun run("flash-v3", problem_for(shape));
    CHECK(rk::launch_attention("flash-v3", rk::Pass::kForward, shape, run.buffers, nullptr) ==
          cudaErrorNotSupported);
  }
}

TEST_CASE("standard BF16 matches the FP32 reference") {
  check_all_shapes("standard", {32, 64, 128}, true);
}
TEST_CASE("flash-v2 BF16 matches the FP32 reference") {
  check_all_shapes("flash-v2", {32, 64, 128}, true);
}
TEST_CASE("flash-v3 BF16 matches the FP32 reference (sm_90 only)") {
  if (!device_is_sm90()) {
    MESSAGE("SKIPPED: flash-v3 needs an sm_90 GPU");
    return;
  }
  check_all_shapes("flash-v3", {64, 128}, true);
}
TEST_CASE("flash-v1 BF16 is refused (FP16 only)") {
  rk::AttentionShape shape = bf16_shapes().front();
  CHECK_FALSE(rk::find_kernel("flash-v1")->supports_bf16);
  KernelRun run("flash-v1", problem_for(shape));
  CHECK(rk::launch_attention("flash-v1", rk::Pass::kForward, shape, run.buffers, nullptr) ==
        cudaErrorNotSupported);
  CHECK(rk::launch_attention("flash-v1", rk::Pass::kBackward, shape, run.buffers, nullptr) ==
        cudaErrorNotSupported);
}

TEST_CASE("flash-decode matches the FP32 reference") {
  check_decode_grid(rk::DType::kFp16);
}
TEST_CASE("flash-decode BF16 matches the FP32 reference") {
  check_decode_grid(rk::DType::kBf16);
}

TEST_CASE("backward is idempotent") {
  check_idempotent_backward("standard", true);
  check_idempotent_backward("flash-v1", true);
  check_idempotent_backward("flash-v2", false);
}

TEST_CASE("utility kernels") {
  constexpr std::size_t kCount = 1000;
  DeviceBuffer a(kCount * 2);
  DeviceBuffer b(kCount * 2);
  ROOFLINE_REQUIRE_CUDA(rk::fill_random(a.get(), rk::DType::kFp16, kCount, 7, 2.f, nullptr));
  ROOFLINE_REQUIRE_CUDA(rk::fill_random(b.get(), rk::DType::kFp16, kCount, 7, 2.f, nullptr));
  const auto ha = download_half(a);
  CHECK(ha == download_half(b));  // a function of (seed, index) only
  float lo = 0;
  float hi = 0;
  for (std::uint16_t h : ha) {
    lo = std::min(lo, half_to_float(h));
    hi = std::max(hi, half_to_float(h));
  }
  CHECK(lo >= -2.f);
  CHECK(hi <= 2.f);
  CHECK(lo < -1.5f);
  CHECK(hi > 1.5f);
  CHECK(nonfinite_count(a.get(), kCount) == 0);
  ROOFLINE_REQUIRE_CUDA(rk::poison(a.get(), 20, nullptr));
  CHECK(nonfinite_count(a.get(), kCount) == 10);
  // BF16: the top half of the FP32 pattern (rounded), the same draw; 0xFFFF is a NaN too.
  ROOFLINE_REQUIRE_CUDA(rk::fill_random(b.get(), rk::DType::kBf16, kCount, 7, 2.f, nullptr));
  const auto hb = download_half(b);
  float lo16 = 0;
  float hi16 = 0;
  for (std::uint16_t h : hb) {
    const std::uint32_t bits = std::uint32_t{h} << 16;
    float value;
    std::memcpy(&value, &bits, sizeof value);
    lo16 = std::min(lo16, value);
    hi16 = std::max(hi16, value);
  }
  CHECK(lo16 >= -2.f);
  CHECK(hi16 <= 2.f);
  CHECK(lo16 < -1.5f);
  CHECK(hi16 > 1.5f);
  CHECK(nonfinite_count(b.get(), kCount, rk::DType::kBf16) == 0);
  ROOFLINE_REQUIRE_CUDA(rk::poison(b.get(), 20, nullptr));
  CHECK(nonfinite_count(b.get(), kCount, rk::DType::kBf16) == 10);
  DeviceBuffer flush(1 << 20);
  ROOFLINE_REQUIRE_CUDA(rk::flush_l2(flush.get(), flush.bytes(), nullptr));
  ROOFLINE_REQUIRE_CUDA(rk::flush_l2(flush.get(), 1001, nullptr));
  ROOFLINE_REQUIRE_CUDA(cudaDeviceSynchronize());
}

int main(int argc, char** argv) {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::printf("SKIPPED: no CUDA device (gpu_kernel_tests)\n");
    return 77;
  }
  doctest::Context context;
  context.applyCommandLine(argc, argv);
  return context.run();
}
