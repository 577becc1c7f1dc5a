#include "lib/gpu/output_check.hpp"

#include <string>
#include <utility>
#include <vector>

#include "lib/core/report/verification.hpp"
#include "lib/gpu/cuda_check.hpp"

namespace roofline::gpu {

OutputCheck::OutputCheck(const Stream& stream)
    : stream_(stream), stats_(3 * sizeof(double)), nonfinite_(sizeof(int)) {}

int OutputCheck::count_nonfinite(const DeviceBuffer& buffer, std::size_t bytes,
                                 kernels::DType dtype) {
  ROOFLINE_CUDA_CALL(kernels::count_nonfinite(buffer.get(), dtype, bytes / 2, nonfinite_.as<int>(),
                                              stream_.get()));
  int count = 0;
  ROOFLINE_CUDA_CALL(cudaMemcpyAsync(&count, nonfinite_.get(), sizeof count, cudaMemcpyDeviceToHost,
                                     stream_.get()));
  ROOFLINE_CUDA_CALL(cudaStreamSynchronize(stream_.get()));
  return count;
}

std::array<double, 3> OutputCheck::error_stats(const void* test_16bit, kernels::DType dtype,
                                               const float* test_float, const float* ref,
                                               std::size_t count) {
  if (test_16bit != nullptr)
    ROOFLINE_CUDA_CALL(kernels::compare_to_float(test_16bit, dtype, ref, count, stats_.as<double>(),
                                                 stream_.get()));
  else
    ROOFLINE_CUDA_CALL(kernels::compare_float_to_float(test_float, ref, count, stats_.as<double>(),
                                                       stream_.get()));
  std::array<double, 3> out{};
  ROOFLINE_CUDA_CALL(
      cudaMemcpyAsync(out.data(), stats_.get(), sizeof out, cudaMemcpyDeviceToHost, stream_.get()));
  ROOFLINE_CUDA_CALL(cudaStreamSynchronize(stream_.get()));
  return out;
}

void OutputCheck::require_written(const Workload& workload, const InputArena& arena,
                                  const PointSizes& s) {
  const kernels::DType dtype = kernel_dtype(workload.dtype);
  if (workload.pass == Pass::kForward) {
    if (int bad = count_nonfinite(arena.o, s.tensor, dtype); bad > 0)
      throw CudaError(cudaErrorUnknown,
                      "output o not fully written: " + std::to_string(bad) + " non-finite values");
    return;
  }
  for (auto [name, buffer] : {std::pair{"dq", &arena.d_q}, {"dk", &arena.d_k}, {"dv", &arena.d_v}})
    if (int bad = count_nonfinite(*buffer, s.tensor, dtype); bad > 0)
      throw CudaError(cudaErrorUnknown, std::string("output ") + name + " not fully written: " +
                                            std::to_string(bad) + " non-finite values");
}

Verification OutputCheck::verify(const Workload& workload, InputArena& arena, const PointSizes& s) {
  const kernels::AttentionShape shape = shape_of(workload);
  const kernels::Pass pass = kernel_pass(workload.pass);
  kernels::ReferenceOutputs exact{arena.ref_o.as<float>(), arena.ref_lse.as<float>(),
                                  arena.ref_dq.as<float>(), arena.ref_dk.as<float>(),
                                  arena.ref_dv.as<float>()};
  // The plain implementation in the workload's dtype (FP16 or BF16): the ref16_* buffers.
  kernels::ReferenceOutputs plain{arena.ref16_o.as<float>(), arena.ref16_lse.as<float>(),
                                  arena.ref16_dq.as<float>(), arena.ref16_dk.as<float>(),
                                  arena.ref16_dv.as<float>()};
  ROOFLINE_CUDA_CALL(
      kernels::launch_reference(pass, shape, arena.view(), exact, false, stream_.get()));
  ROOFLINE_CUDA_CALL(
      kernels::launch_reference(pass, shape, arena.view(), plain, true, stream_.get()));
  struct Output {
    const char* name;
    const DeviceBuffer* test;
    const float* ref;
    const float* ref16;
  };
  std::vector<Output> outputs;
  if (pass == kernels::Pass::kForward)
    outputs.push_back({"o", &arena.o, exact.o, plain.o});
  else
    outputs = {{"dq", &arena.d_q, exact.d_q, plain.d_q},
               {"dk", &arena.d_k, exact.d_k, plain.d_k},
               {"dv", &arena.d_v, exact.d_v, plain.d_v}};
  std::vector<OutputErrors> errors;
  for (const Output& out : outputs) {
    const std::size_t count = s.tensor / 2;
    const auto kernel_err = error_stats(out.test->get(), shape.dtype, nullptr, out.ref, count);
    const auto fp16_err = error_stats(nullptr, shape.dtype, out.ref16, out.ref, count);
    errors.push_back(
        {out.name, count, kernel_err[0], kernel_err[1], kernel_err[2], fp16_err[0], fp16_err[1]});
  }
  // flash-attention's rule (at most 2× the error of a plain implementation in the same dtype)
  // with an absolute floor scaled to the outputs' magnitude (lib/core/report/verification.hpp).
  return judge_verification(errors, workload.dtype);
}

}  // namespace roofline::gpu
