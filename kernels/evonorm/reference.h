#pragma once
// CPU reference of the EvoNorm op in kernels/evonorm (pure C++, part of fuselens_kernels_reference;
// no CUDA). Seed 000's "EvoNorm-B0" = EvoNorm-S0 of Liu et al. 2020 (evonorm.cuh gives the source):
//   y[n,c,h,w] = x · σ(v1[c]·x) / sqrt(var[n,g] + eps) · γ[c] + β[c],   g = c / (C / groups)
// with var the biased variance over the (C / groups)·H·W elements of group g of sample n, computed
// in double by two passes (mean, then Σ (x - mean)²); every output is computed in double and
// rounded to float once.
//
// Layouts as evonorm.cuh: x [N, C, H, W] contiguous; gamma, beta, v1 [C]. Returns N·C·H·W floats.
// Throws std::invalid_argument when a size is negative, groups < 1 or does not divide C, or a
// span's length does not match the shape.

#include <span>
#include <vector>

namespace fuselens::kernels {

[[nodiscard]] std::vector<float> evonorm_reference(std::span<const float> x,
                                                   std::span<const float> gamma,
                                                   std::span<const float> beta,
                                                   std::span<const float> v1, int n, int c, int h,
                                                   int w, int groups, double eps = 1e-5);

}  // namespace fuselens::kernels
