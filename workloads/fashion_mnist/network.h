#pragma once
// The Fashion-MNIST network's sizes, constants and parameters (pure C++: the GPU model, the CPU
// reference and the tests share them). The network itself is described in model.h.

#include <cstdint>
#include <vector>

#include "idx.h"

namespace fuselens::workloads::fmnist {

inline constexpr int kInputs = 784;
inline constexpr int kHidden = 256;
inline constexpr int kClasses = 10;
inline constexpr float kLayerNormEpsilon = 1e-5f;
/// Normalisation of the pixels (x / 255 − mean) / std with Fashion-MNIST's training-set statistics.
inline constexpr float kPixelMean = 0.2860f;
inline constexpr float kPixelStd = 0.3530f;

enum class Build { Unfused, Fused };
[[nodiscard]] const char* to_string(Build build);  ///< "unfused", "fused"

/// The parameters on the host, in the order of the network.
struct Parameters {
  std::vector<float> w1, b1, w2, b2, gamma, beta, w3, b3;
  /// torch.nn.Linear's initialisation from std::mt19937(seed): U(−1/√in, 1/√in) for every weight
  /// and bias (drawn W1, b1, W2, b2, W3, b3 in that order), γ = 1, β = 0.
  static Parameters initial(std::uint32_t seed);
  /// The eight tensors, for loops (same order as the members).
  std::vector<std::vector<float>*> tensors();
};

/// The first `count` images of `split`, normalized as the GPU's gather does ((x / 255 − mean) /
/// std, the division done as a multiplication by 1/std), [count × 784] on the host.
[[nodiscard]] std::vector<float> normalized_images(const Split& split, std::size_t count);

}  // namespace fuselens::workloads::fmnist
