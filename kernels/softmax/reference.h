#pragma once
// CPU reference for the row-wise softmax kernels (pure C++, part of fuselens_kernels_reference; no
// CUDA). For each row r of x [rows × cols] (row-major), in double precision, rounded to float once:
//   y[r][c] = exp(x[r][c] - max_k x[r][k]) / sum_k exp(x[r][k] - max_k x[r][k])
// Throws std::invalid_argument when rows or cols is negative or x.size() != rows · cols.

#include <span>
#include <vector>

namespace fuselens::kernels {

/// Softmax of every row of x, in double precision.
[[nodiscard]] std::vector<float> softmax_reference(std::span<const float> x, int rows, int cols);

}  // namespace fuselens::kernels
