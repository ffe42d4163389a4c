#pragma once
// The training step of model.h in double precision on the CPU (pure C++): the reference the GPU
// builds are checked against, and the math the gradient check verifies.
// Same network, same formulas (train_kernels.cuh), same SGD rule; inputs are the normalized images.
// Cost: about 2 × rows × (784·256 + 256·256 + 256·10) multiply-adds per pass; meant for small
// slices.

#include <cstdint>
#include <span>
#include <vector>

#include "network.h"

namespace fuselens::workloads::fmnist {

class ReferenceModel {
 public:
  explicit ReferenceModel(const Parameters& initial);

  /// Mean softmax cross-entropy over the rows of x [rows × 784] with labels, and the count of
  /// arg-max hits; no state changes.
  struct Evaluation {
    double loss = 0;
    int correct = 0;
  };
  [[nodiscard]] Evaluation evaluate(std::span<const float> x,
                                    std::span<const std::int32_t> labels) const;

  /// Gradient of the mean loss with respect to every parameter, in Parameters::tensors() order.
  [[nodiscard]] std::vector<std::vector<double>> gradients(
      std::span<const float> x, std::span<const std::int32_t> labels) const;

  /// One SGD-with-momentum step; returns the mean loss before the update.
  double train_step(std::span<const float> x, std::span<const std::int32_t> labels, double lr,
                    double momentum);

  /// Parameter `tensor` (Parameters::tensors() order), element `i`: read and perturb (gradient
  /// checks).
  [[nodiscard]] double parameter(int tensor, std::size_t i) const {
    return params_[static_cast<std::size_t>(tensor)][i];
  }
  void set_parameter(int tensor, std::size_t i, double value) {
    params_[static_cast<std::size_t>(tensor)][i] = value;
  }

 private:
  struct Pass;  // activations of one forward pass
  Pass forward(std::span<const float> x, std::span<const std::int32_t> labels) const;

  std::vector<std::vector<double>> params_;  // w1, b1, w2, b2, gamma, beta, w3, b3
  std::vector<std::vector<double>> momentum_;
};

}  // namespace fuselens::workloads::fmnist
