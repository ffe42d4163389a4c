#pragma once
// CPU reference for the LayerNorm kernels (pure C++, part of fuselens_kernels_reference; no CUDA).
// For each row r of x [rows × cols] (row-major), in double precision, rounded to float once:
//   mean_r = sum_c x[r][c] / cols,  var_r = sum_c (x[r][c] - mean_r)^2 / cols   (two passes,
//   biased) y[r][c] = (x[r][c] - mean_r) / sqrt(var_r + eps) · gamma[c] + beta[c]
// Throws std::invalid_argument when rows or cols is negative, x.size() != rows · cols, or gamma or
// beta does not have cols elements.

#include <span>
#include <vector>

namespace fuselens::kernels {

/// LayerNorm of every row of x with per-column gamma and beta, in double precision.
[[nodiscard]] std::vector<float> layernorm_reference(std::span<const float> x,
                                                     std::span<const float> gamma,
                                                     std::span<const float> beta, int rows,
                                                     int cols, double eps = 1e-5);

}  // namespace fuselens::kernels
