#include "lib/gpu/point_launcher.hpp"

#include <algorithm>
#include <string>

#include "kernels/attention.hpp"
#include "kernels/test_aids.hpp"
#include "lib/gpu/cuda_check.hpp"

namespace roofline::gpu {
namespace {

void check_launch(cudaError_t status, const SweepPoint& p) {
  if (status != cudaSuccess)
    throw CudaError(status, p.kernel + " launch failed: " + cudaGetErrorName(status) + " (" +
                                cudaGetErrorString(status) + ")");
}

}  // namespace

PointLauncher::PointLauncher(const std::vector<SweepPoint>& points, std::uint64_t seed,
                             std::int64_t l2_cache_bytes)
    : points_(points), seed_(seed) {
  flush_.ensure(
      std::max<std::size_t>(2 * static_cast<std::size_t>(l2_cache_bytes), std::size_t{64} << 20));
}

void PointLauncher::flush_l2() {
  ROOFLINE_CUDA_CALL(kernels::flush_l2(flush_.get(), flush_.bytes(), stream_.get()));
}

void PointLauncher::launch(std::size_t i) {
  const SweepPoint& p = points_[i];
  check_launch(kernels::launch_attention(p.kernel, kernel_pass(p.workload.pass),
                                         shape_of(p.workload), arena_.view(), stream_.get()),
               p);
}

void PointLauncher::prepare_first(std::size_t i, const PointSizes& s) {
  const SweepPoint& p = points_[i];
  arena_.fill_inputs(p.workload, s, seed_, stream_.get(), /*only_if_changed=*/false);
  ROOFLINE_CUDA_CALL(kernels::poison(arena_.o.get(), s.tensor, stream_.get()));
  ROOFLINE_CUDA_CALL(kernels::poison(arena_.lse.get(), s.row_stats, stream_.get()));
  if (s.backward) {
    check_launch(kernels::launch_attention(p.kernel, kernels::Pass::kForward, shape_of(p.workload),
                                           arena_.view(), stream_.get()),
                 p);
    for (DeviceBuffer* b : {&arena_.d_q, &arena_.d_k, &arena_.d_v})
      ROOFLINE_CUDA_CALL(kernels::poison(b->get(), s.tensor, stream_.get()));
  }
}

void PointLauncher::prepare_again(std::size_t i) {
  const SweepPoint& p = points_[i];
  const PointSizes s = sizes_of(p.kernel, p.workload, false);
  arena_.ensure(s);
  arena_.fill_inputs(p.workload, s, seed_, stream_.get(), /*only_if_changed=*/true);
  if (s.backward)
    check_launch(kernels::launch_attention(p.kernel, kernels::Pass::kForward, shape_of(p.workload),
                                           arena_.view(), stream_.get()),
                 p);
}

}  // namespace roofline::gpu
