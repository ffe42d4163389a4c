#pragma once
// CPU reference for GEMM + bias + ReLU (pure C++, part of fuselens_kernels_reference; no CUDA).
//
// out[r][c] = relu( sum_k A[r][k] * B[k][c] + bias[c] ), accumulated in double and rounded to float
// once at the end. Layouts as in gemm_bias_relu.cuh: A [M×K], B [K×N], out [M×N] row-major, bias
// [N]. relu(x) = x < 0 ? 0 : x (NaN propagates), matching the GPU kernels. Cost: M·N·K
// multiply-adds on one CPU thread (1024³ takes about a second). Throws std::invalid_argument for
// negative sizes or when a span's length is not M·K, K·N or N.

#include <span>
#include <vector>

namespace fuselens::kernels {

/// relu(A·B + bias) in double precision, returned as M·N floats (row-major).
[[nodiscard]] std::vector<float> gemm_bias_relu_reference(std::span<const float> A,
                                                          std::span<const float> B,
                                                          std::span<const float> bias, int M, int N,
                                                          int K);

}  // namespace fuselens::kernels
