#pragma once
// Helpers shared by the kernel correctness tests (tests/kernels): fresh random inputs, poisoned outputs
// and FP16/BF16 conversions on the host.
//
// Rules every kernel test follows (issue #3): inputs are drawn fresh from a seeded std::mt19937,
// uniform in [-1, 1) with exact zeros redrawn; the output buffer is poisoned with 0xFF bytes before
// the launch (an unwritten FP32/FP16/BF16 element then reads back as NaN and fails the comparison);
// results are compared with fuselens::kernels::compare_relative_l2 against a double-precision CPU
// reference, with the tolerance of the dtype (kernels/common/compare.h says why each bound).

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstddef>
#include <cstdint>
#include <random>
#include <vector>

#include "common/cuda_check.h"
#include "common/device_buffer.h"

namespace fuselens::test {

/// n floats uniform in [lo, hi) with exact zeros redrawn; `seed` makes each test's data distinct.
[[nodiscard]] std::vector<float> random_floats(std::size_t n, std::uint32_t seed, float lo = -1.0f,
                                               float hi = 1.0f);

/// Fills the device buffer with 0xFF bytes (NaN in every floating-point format), synchronously.
template <typename T>
void poison(kernels::DeviceBuffer<T>& buffer) {
  if (buffer.size() > 0) {
    FUSELENS_CUDA_CHECK(cudaMemset(buffer.data(), 0xFF, buffer.bytes()));
  }
}

/// Round-to-nearest conversions of whole arrays (host).
[[nodiscard]] std::vector<__half> to_half(const std::vector<float>& values);
[[nodiscard]] std::vector<__nv_bfloat16> to_bf16(const std::vector<float>& values);
/// The values the rounded inputs really hold, as floats: the reference must use these.
[[nodiscard]] std::vector<float> to_float(const std::vector<__half>& values);
[[nodiscard]] std::vector<float> to_float(const std::vector<__nv_bfloat16>& values);

}  // namespace fuselens::test
