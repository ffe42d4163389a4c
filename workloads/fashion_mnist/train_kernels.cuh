#pragma once
// The kernels the Fashion-MNIST training step needs besides the suite's forward kernels
// (kernels/gemm_bias_relu, elementwise, layernorm, softmax): the backward pass, the loss, the
// optimizer and the data gather. FP32 everywhere; all matrices row-major; device pointers; every
// launcher is asynchronous on `stream`, checks the launch (throws fuselens::kernels::CudaError) and
// launches exactly the number of kernels its comment says.
//
// Formulas (standard backpropagation; LayerNorm backward as in Ba et al. 2016 / PyTorch's
// native_layer_norm_backward):
//   GEMM:       C = op(A)·op(B), op = identity or transpose (gemm_tn: Aᵀ·B, gemm_nt: A·Bᵀ)
//   ReLU':      dx = dy · [y > 0]                       (y the ReLU output)
//   Swish':     dx = dy · (s + x·s·(1 − s)), s = sigmoid(x)
//   LayerNorm': x̂ = (x − μ)·r, r = 1/sqrt(σ² + eps);  g = dy·γ;
//               dx = r · (g − mean(g) − x̂ · mean(g · x̂))       (means over the row)
//               dγ = Σ_rows dy · x̂,  dβ = Σ_rows dy
//   Softmax cross-entropy over C classes with labels t: p = softmax(z); loss_r = −log p[t_r];
//               dz = (p − onehot(t)) / B   (the mean over the batch of B rows)
//   SGD with momentum (PyTorch's formulation): v = μ·v + g; w −= lr·v

#include <cuda_runtime_api.h>

#include <cstdint>

namespace fuselens::workloads::fmnist {

/// x[r][c] = (pixels[index[r]][c] / 255 − mean) / std for r < rows: the batch's images, gathered by
/// the epoch's permutation and normalized (1 launch).
void launch_gather_normalize(const std::uint8_t* pixels, const std::int32_t* index, float* x,
                             int rows, int cols, float mean, float std,
                             cudaStream_t stream = nullptr);
/// labels_out[r] = labels[index[r]] (1 launch).
void launch_gather_labels(const std::uint8_t* labels, const std::int32_t* index, std::int32_t* out,
                          int rows, cudaStream_t stream = nullptr);

/// C[M×N] = Aᵀ·B with A [K×M], B [K×N] (1 launch).
void launch_gemm_tn(const float* A, const float* B, float* C, int M, int N, int K,
                    cudaStream_t stream = nullptr);
/// C[M×N] = A·Bᵀ with A [M×K], B [N×K] (1 launch).
void launch_gemm_nt(const float* A, const float* B, float* C, int M, int N, int K,
                    cudaStream_t stream = nullptr);
/// C[M×N] = (A·Bᵀ) · [mask > 0], A [M×K], B [N×K], mask [M×N] (the ReLU output): the ReLU backward
/// fused into the epilogue of the GEMM that produces the gradient (1 launch).
void launch_gemm_nt_relu_backward(const float* A, const float* B, const float* mask, float* C,
                                  int M, int N, int K, cudaStream_t stream = nullptr);

/// out[c] = Σ_r a[r][c] (· b[r][c] when b is not null), a and b [rows × cols] (1 launch).
void launch_column_sum(const float* a, const float* b, float* out, int rows, int cols,
                       cudaStream_t stream = nullptr);

/// dx = dy · [y > 0] over n elements (1 launch).
void launch_relu_backward(const float* dy, const float* y, float* dx, int n,
                          cudaStream_t stream = nullptr);
/// dx = dy · swish'(x) over n elements (1 launch).
void launch_swish_backward(const float* dy, const float* x, float* dx, int n,
                           cudaStream_t stream = nullptr);

/// LayerNorm backward for x [rows × cols] (the LayerNorm input), gamma [cols]; writes dx and
/// xhat [rows × cols] (for dγ = column_sum(dy, xhat)); statistics recomputed from x (1 launch).
/// With `swish_input` not null the incoming gradient is first multiplied by swish'(swish_input)
/// in the same kernel (the Swish backward fused into the LayerNorm backward), and that product —
/// the gradient at the LayerNorm's output, needed for dγ and dβ — is written to `dy_out`.
void launch_layernorm_backward(const float* dy, const float* x, const float* gamma, float* dx,
                               float* xhat, int rows, int cols, float eps,
                               const float* swish_input = nullptr, float* dy_out = nullptr,
                               cudaStream_t stream = nullptr);

/// Statistics of a batch's loss kept on the device (summed over the epoch).
struct LossAccumulator {
  double* loss_sum = nullptr;             ///< Σ −log p[t]
  unsigned long long* correct = nullptr;  ///< rows whose arg-max equals the label
};

/// From softmax probabilities p [rows × classes]: adds each row's −log p[t] and arg-max hit to
/// `acc` (1 launch).
void launch_nll_loss(const float* p, const std::int32_t* labels, int rows, int classes,
                     LossAccumulator acc, cudaStream_t stream = nullptr);
/// dz = (p − onehot(t)) / rows (1 launch).
void launch_xent_grad(const float* p, const std::int32_t* labels, float* dz, int rows, int classes,
                      cudaStream_t stream = nullptr);
/// softmax, loss, arg-max and dz = (p − onehot(t)) / rows in one kernel (a warp per row; classes <=
/// 32). dz may be null (evaluation) (1 launch).
void launch_softmax_xent_fused(const float* z, const std::int32_t* labels, float* dz, int rows,
                               int classes, LossAccumulator acc, cudaStream_t stream = nullptr);

/// v = momentum·v + g; w −= lr·v for one tensor of n elements (1 launch).
void launch_sgd(float* w, float* v, const float* g, int n, float lr, float momentum,
                cudaStream_t stream = nullptr);

/// The same update for up to 16 tensors in ONE launch (a multi-tensor apply, like PyTorch's fused
/// optimizers).
struct SgdTensor {
  float* w = nullptr;
  float* v = nullptr;
  const float* g = nullptr;
  int n = 0;
};
inline constexpr int kMaxSgdTensors = 16;
void launch_sgd_multi(const SgdTensor* tensors, int count, float lr, float momentum,
                      cudaStream_t stream = nullptr);

}  // namespace fuselens::workloads::fmnist
