#pragma once
// The vendor peer of kernels/mlp: the same 3-layer MLP (mlp.cuh) as three cuBLASLt matmuls with the
// bias+ReLU epilogue (CUBLASLT_EPILOGUE_RELU_BIAS), FP32 storage, CUBLAS_COMPUTE_32F without TF32 —
// what a user of the vendor library runs for Linear+bias+ReLU, layer by layer. Header-only; include
// it only from targets that link fuselens_kernel_peers (cuBLAS/cuBLASLt), never from
// fuselens_kernels.
//
// Launches per run: one cuBLASLt kernel per layer, 3 in all, when every layer's algorithm is a
// single-kernel one (single_kernel_algorithms(); kernels/peers/peers.h explains the heuristic
// preference); kernel names are cuBLAS's own. h1 [batch × w1], h2 [batch × w2] are device scratch,
// and X, h1, h2, Y must be 256-byte aligned (cudaMalloc'd), biases 16-byte aligned (peers.h).
// Errors: peers::PeerError for a failed cuBLASLt call, std::invalid_argument for a width < 1, a
// negative batch, or a misaligned or null pointer.

#include <array>
#include <cstddef>
#include <stdexcept>
#include <vector>

#include "mlp/mlp.cuh"
#include "peers/peers.h"

namespace fuselens::kernels {

class MlpCublasLt {
 public:
  /// Chooses the cuBLASLt algorithm of each layer for this batch and these widths (w0..w3).
  MlpCublasLt(const std::array<int, kMlpLayers + 1>& widths, int batch)
      : widths_(widths), batch_(batch) {
    if (batch < 0) throw std::invalid_argument("MlpCublasLt: negative batch");
    for (int w : widths) {
      if (w < 1) throw std::invalid_argument("MlpCublasLt: width < 1");
    }
    gemms_.reserve(kMlpLayers);
    for (int l = 0; l < kMlpLayers; ++l) {
      gemms_.emplace_back(peers::DType::F32, peers::Epilogue::ReluBias, batch, widths[l + 1],
                          widths[l]);
    }
  }

  /// Y = MLP(X): three cublasLtMatmul calls, asynchronous on `stream`. `layers.widths` must be the
  /// constructor's widths.
  void run(const MlpLayers& layers, const float* X, float* h1, float* h2, float* Y,
           cudaStream_t stream = nullptr) {
    if (layers.widths != widths_)
      throw std::invalid_argument("MlpCublasLt::run: widths differ from the plan");
    if (batch_ == 0) return;
    const float* in[kMlpLayers] = {X, h1, h2};
    float* out[kMlpLayers] = {h1, h2, Y};
    for (int l = 0; l < kMlpLayers; ++l) {
      gemms_[static_cast<std::size_t>(l)].run(in[l], layers.weights[l], layers.biases[l], out[l],
                                              stream);
    }
  }

  /// True when each layer's algorithm is one kernel (then run() is exactly 3 launches).
  [[nodiscard]] bool single_kernel_algorithms() const noexcept {
    for (const auto& gemm : gemms_) {
      if (!gemm.single_kernel_algorithm()) return false;
    }
    return true;
  }

 private:
  std::array<int, kMlpLayers + 1> widths_;
  int batch_;
  std::vector<peers::CublasLtGemm> gemms_;
};

}  // namespace fuselens::kernels
