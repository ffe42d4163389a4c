#pragma once
// run_variant: the one harness every fusion_bench variant goes through, so that the unfused and
// fused variants of an op get the same inputs, warm-up, iteration count and timing.
//
// For one variant it does, in this order (all on the legacy default stream, every call checked):
//   1. cudaMemset(output, 0xFF, output_bytes)        poison: unwritten floats read back as NaN
//   2. `warmup` × iteration()                          outside any NVTX range
//   3. cudaDeviceSynchronize()
//   4. push NVTX range `range_name` (payload: iters as uint64)
//        declare the range's work: iters × `work` (fuselens/annotate.h, one NVTX mark)
//        cudaEventRecord(e[0]); for i in [0, iters): iteration(); cudaEventRecord(e[i + 1])
//        cudaDeviceSynchronize()
//      pop the range
//   5. per-iteration time = cudaEventElapsedTime(e[i], e[i + 1]), in microseconds
// Inside the range there is nothing but the iterations' launches and the event records: no memset,
// no memcpy, no other kernel. Events are created before step 1 and destroyed after step 5.
// Errors: CUDA failures throw fuselens::kernels::CudaError; iters < 1 or warmup < 0 throw
// std::invalid_argument.

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "work_model.h"

namespace fuselens::workloads {

struct VariantSettings {
  int warmup = 5;
  int iters = 50;
};

struct VariantTiming {
  std::vector<double> iteration_us;  ///< GPU time between consecutive events, µs, one per iteration

  /// Median of iteration_us (mean of the middle two for an even count; 0 when empty).
  [[nodiscard]] double median_us() const;
};

/// Runs one variant as described above. `iteration` must launch one iteration's kernels and nothing
/// else; `work` is what one iteration does (work_model.h).
[[nodiscard]] VariantTiming run_variant(const std::string& range_name,
                                        const VariantSettings& settings, void* output,
                                        std::size_t output_bytes,
                                        const std::function<void()>& iteration,
                                        const DeclaredWork& work);

}  // namespace fuselens::workloads
