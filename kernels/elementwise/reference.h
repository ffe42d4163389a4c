#pragma once
// CPU references for the element-wise kernels (pure C++, part of fuselens_kernels_reference; no
// CUDA). Each computes in double and rounds to float once; the formulas match elementwise.cuh:
//   sigmoid(x) = 1 / (1 + exp(-x)),  swish(x) = x / (1 + exp(-x)),  relu(x) = x < 0 ? 0 : x.
// No errors are raised; the output has x.size() elements.

#include <span>
#include <vector>

namespace fuselens::kernels {

/// sigmoid of every element, in double precision.
[[nodiscard]] std::vector<float> sigmoid_reference(std::span<const float> x);

/// relu of every element (NaN propagates).
[[nodiscard]] std::vector<float> relu_reference(std::span<const float> x);

/// swish (x * sigmoid(x)) of every element, in double precision.
[[nodiscard]] std::vector<float> swish_reference(std::span<const float> x);

}  // namespace fuselens::kernels
