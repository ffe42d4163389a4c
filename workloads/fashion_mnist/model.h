#pragma once
// The Fashion-MNIST network of the end-to-end validation (issue #10) and its training step on the
// GPU, in two builds that compute the same math: the unfused kernel chain and the fused kernels.
//
// Network (FP32), x the batch of normalized images [B × 784]:
//   h1 = relu(x·W1 + b1)             W1 [784 × 256]   Linear + bias + ReLU (kernels/gemm_bias_relu)
//   z2 = h1·W2 + b2                  W2 [256 × 256]   Linear + bias
//   n2 = LayerNorm(z2)·γ + β         γ, β [256]       (kernels/layernorm, eps 1e-5)
//   a2 = swish(n2)                                    (kernels/elementwise)
//   z3 = a2·W3 + b3                  W3 [256 × 10]    logits
//   loss = mean over the batch of −log softmax(z3)[label]       (softmax cross-entropy)
// Weights are stored [in × out] row-major (y = x·W + b); initialised like torch.nn.Linear:
// U(−1/√in, 1/√in) for W and b, γ = 1, β = 0, from std::mt19937(seed). SGD with momentum
// (PyTorch's rule: v = μ·v + g; w −= lr·v), momentum buffers start at 0.
//
// Launches per training step of B rows (fmnist_train's NVTX ranges forward / backward / update):
//   unfused: gather 2 + forward 19 + backward 13 + update 8 = 42
//            (GEMM, bias and ReLU kernels separate; LayerNorm 4 kernels; Swish sigmoid + multiply;
//            softmax 4 kernels, loss, gradient; Swish backward and LayerNorm backward separate;
//            ReLU backward separate; one SGD kernel per tensor)
//   fused:   gather 2 + forward 6 + backward 11 + update 1 = 20
//            (GEMM epilogues with bias / bias+ReLU; one-pass LayerNorm; one-pass Swish; softmax,
//            loss and gradient in one kernel; Swish backward inside the LayerNorm backward; ReLU
//            backward in the epilogue of the GEMM that produces dh1; one multi-tensor SGD kernel)
// Backward GEMMs (train_kernels.cuh) and the column sums are the same kernels in both builds.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "network.h"
#include "train_kernels.cuh"

namespace fuselens::workloads::fmnist {

/// The network's buffers on the GPU and its training step in one build. Not copyable.
/// Errors: fuselens::kernels::CudaError from any CUDA call; std::invalid_argument for rows outside
/// [1, max_rows].
class GpuModel {
 public:
  GpuModel(const Parameters& initial, int max_rows, Build build);
  ~GpuModel();
  GpuModel(const GpuModel&) = delete;
  GpuModel& operator=(const GpuModel&) = delete;

  /// Forward pass of `rows` normalized images x (device, [rows × 784]) with device labels; adds the
  /// rows' loss and correct predictions to `acc`. With `train`, also leaves dL/dz3 for backward().
  void forward(const float* x, const std::int32_t* labels, int rows, LossAccumulator acc,
               bool train);
  /// Backward pass of the last forward(train = true): every parameter's gradient.
  void backward(const float* x, int rows);
  /// One SGD-with-momentum update of every parameter.
  void update(float lr, float momentum);

  [[nodiscard]] Parameters parameters() const;  ///< copies the current weights back
  [[nodiscard]] Build build() const { return build_; }

 private:
  struct Buffers;
  std::unique_ptr<Buffers> b_;
  int max_rows_;
  Build build_;
};

}  // namespace fuselens::workloads::fmnist
