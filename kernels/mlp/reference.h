#pragma once
// CPU reference for the 3-layer MLP of mlp.cuh (pure C++, part of fuselens_kernels_reference; no
// CUDA).
//
//   h0 = X,  h_{l+1} = relu(h_l · W_l + b_l) for l = 0, 1, 2,  Y = h3
// computed entirely in double (the hidden activations are NOT rounded to float between layers) and
// rounded to float once at the end. Layouts as in mlp.cuh: X [batch × w0], W_l [w_l × w_{l+1}],
// b_l [w_{l+1}], Y [batch × w3], all row-major. relu(x) = x < 0 ? 0 : x (NaN propagates).
// Cost: batch · (w0·w1 + w1·w2 + w2·w3) multiply-adds on one CPU thread.
// Throws std::invalid_argument for a negative batch, a width < 1, or a span whose length is not
// batch·w0, w_l·w_{l+1} or w_{l+1}.

#include <array>
#include <span>
#include <vector>

namespace fuselens::kernels {

/// The MLP's output in double precision, returned as batch·w3 floats (row-major).
[[nodiscard]] std::vector<float> mlp_reference(std::span<const float> X,
                                               const std::array<std::span<const float>, 3>& weights,
                                               const std::array<std::span<const float>, 3>& biases,
                                               const std::array<int, 4>& widths, int batch);

}  // namespace fuselens::kernels
