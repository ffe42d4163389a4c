#pragma once
// MLP inference: three Linear + bias + ReLU layers, FP32 storage and FP32 math, three ways.
//
// Computes, for layers l = 0, 1, 2 with widths w0 → w1 → w2 → w3,
//   h0 = X,   h_{l+1} = relu(h_l · W_l + b_l),   Y = h3
// with
//   X    [batch × w0]      row-major, leading dimension w0
//   W_l  [w_l × w_{l+1}]   row-major (in × out, so y = x·W + b: the kernels/gemm_bias_relu
//   convention) b_l  [w_{l+1}]         broadcast over the rows h1   [batch × w1], h2 [batch × w2]
//   scratch of the per-layer variants (written, then read back) Y    [batch × w3]      row-major
// All pointers are device pointers; inputs must not alias outputs or scratch. relu(x) = x < 0 ? 0 :
// x, so NaN propagates (like torch.relu) and a poisoned, unwritten output stays visible.
//
// Variants and their exact launches per call (names as a profiler shows them, namespace
// fuselens::kernels; the first two reuse kernels/gemm_bias_relu):
//   launch_mlp_unfused      9: per layer gemm_kernel, add_bias_kernel, relu_kernel (h1, h2, Y in
//   place) launch_mlp_layer_fused  3: per layer gemm_bias_relu_fused_kernel launch_mlp_fully_fused
//   1: mlp_fully_fused_kernel<C, R> (C = CTAs per cluster, 8 or 16; R = rows
//                              per cluster, 1, 2, 4, 8 or 16), launched with cudaLaunchKernelEx and
//                              the cluster dimension as a launch attribute
// (The vendor peer, per-layer cuBLASLt with its bias+ReLU epilogue, lives in the benchmarks and
// tests, which link fuselens_kernel_peers; this library does not depend on cuBLAS.)
//
// The fully fused kernel (README.md beside this file has the picture, the byte table and the
// figures): a thread-block cluster of C CTAs (C = 8 by default, 16 on request) of 256 threads
// handles R rows of the batch. CTA `rank` of the cluster owns the output columns [rank·S_l,
// rank·S_l + S_l) of every layer (S_l = ceil(w_{l+1} / C) <= 32, one column per lane); its 8 warps
// split the reduction dimension into 8 slices of <= 32. Each thread loads its <= 32 weights of each
// of the three layers into registers once, at the start (they do not depend on the activations).
// The R activation rows of every layer live in shared memory; a CTA pushes its column slice of h1
// and h2 into the shared memory of all C CTAs of its cluster (distributed shared memory) and a
// cluster barrier separates the layers, so h1 and h2 never touch global memory. Clusters are
// independent; the grid is ceil(batch / R) clusters. Automatic configuration
// (mlp_fully_fused_config): C = 8, R = the smallest power of two <= 16 that keeps the grid at <= 8
// clusters. Measured on an H100 (README.md): fewer, fuller clusters win because every cluster
// streams all the weights from L2 (batch 16: 8 clusters 6.1 µs, 16 clusters 9.6 µs), and C = 16 was
// never faster than C = 8. Limits of the fully fused kernel (launch_mlp_fully_fused throws
// std::invalid_argument beyond them; mlp_fully_fused_supports says in advance):
//   * every width 1 <= w <= kMlpFusedMaxWidth (256): a warp's slice of the reduction (<= 32) and a
//   CTA's
//     slice of the outputs (<= 32) are register arrays; the shared-memory rows are 256 floats wide;
//   * 0 <= batch <= kMlpFusedMaxBatch (256) = 16 clusters × 16 rows. Shared memory per CTA is
//     R·(2·256 + 8·32)·4 B = 3 KiB·R (two activation buffers and the cross-warp partial sums), 48
//     KiB at R = 16, the most a kernel gets without opting in
//     (cudaFuncAttributeMaxDynamicSharedMemorySize). A 227 KiB CTA would hold R <= 75 rows, but
//     each row adds 32 FMAs per thread per layer to a kernel whose point is latency, and more
//     clusters re-stream all the weights each; at batch 256 the kernel already only ties cuBLASLt
//     in GPU time (README.md), so above 256 rows the per-layer variants are the ones to use.
//
// Every launcher is asynchronous on `stream` (default: the legacy default stream), checks each
// launch (FUSELENS_CUDA_CHECK_LAST, or the status of cudaLaunchKernelEx; throws
// fuselens::kernels::CudaError) and throws std::invalid_argument for a negative batch, a width < 1,
// or a null weight/bias pointer. batch == 0 launches nothing.

#include <array>

#include <cuda_runtime_api.h>

namespace fuselens::kernels {

/// Number of Linear + bias + ReLU layers of the MLP.
inline constexpr int kMlpLayers = 3;
/// CTAs per thread-block cluster of the fully fused kernel when the caller does not choose (8 or
/// 16).
inline constexpr int kMlpFusedDefaultClusterSize = 8;
/// The automatic rows per cluster keep the grid at most this many clusters while R <= 16.
inline constexpr int kMlpFusedTargetClusters = 8;
/// Largest width (w0..w3) the fully fused kernel accepts.
inline constexpr int kMlpFusedMaxWidth = 256;
/// Largest rows per cluster of the fully fused kernel.
inline constexpr int kMlpFusedMaxRowsPerCluster = 16;
/// With R = 16, the largest batch the fully fused kernel accepts spans this many clusters.
inline constexpr int kMlpFusedMaxClusters = 16;
/// Largest batch the fully fused kernel accepts.
inline constexpr int kMlpFusedMaxBatch = kMlpFusedMaxRowsPerCluster * kMlpFusedMaxClusters;

/// The three ways of computing the MLP (the cuBLASLt peer moves the bytes of LayerFused).
enum class MlpVariant { Unfused, LayerFused, FullyFused };

/// Work of ONE call, for the benchmarks' counters and fusion_bench's declared ranges.
struct MlpWork {
  double flops = 0;  ///< FP32 FLOPs: per layer 2·B·K·N (an FMA counts 2) + B·N (bias add); ReLU 0
  double bytes = 0;  ///< compulsory device-memory bytes (README.md beside this file, "Bytes moved")
};

/// Per layer (K = w_l, N = w_{l+1}, B = batch) every variant reads W_l (4·K·N) and b_l (4·N) once.
/// Activations: LayerFused reads its input (4·B·K) and writes its output (4·B·N); Unfused also
/// reads and writes the output twice more (add_bias_kernel, relu_kernel in place): 4·B·K + 5·4·B·N;
/// FullyFused reads only X (4·B·w0) and writes only Y (4·B·w3): h1 and h2 stay on chip.
[[nodiscard]] inline MlpWork mlp_work(MlpVariant variant, const std::array<int, 4>& widths,
                                      int batch) noexcept {
  MlpWork work;
  const double b = batch;
  for (int l = 0; l < 3; ++l) {
    const double k = widths[l];
    const double n = widths[l + 1];
    work.flops += 2 * b * k * n + b * n;
    work.bytes += 4 * (k * n + n);
    if (variant == MlpVariant::LayerFused) work.bytes += 4 * (b * k + b * n);
    if (variant == MlpVariant::Unfused) work.bytes += 4 * (b * k + 5 * b * n);
  }
  if (variant == MlpVariant::FullyFused) work.bytes += 4 * b * (widths[0] + widths[3]);
  return work;
}

/// The network: widths w0..w3 and the device pointers of the weights and biases.
struct MlpLayers {
  std::array<int, kMlpLayers + 1> widths{};        ///< w0 (input) .. w3 (output)
  std::array<const float*, kMlpLayers> weights{};  ///< W_l [widths[l] × widths[l + 1]], row-major
  std::array<const float*, kMlpLayers> biases{};   ///< b_l [widths[l + 1]]
};

/// Y = MLP(X) in 9 launches (gemm_kernel, add_bias_kernel, relu_kernel per layer); h1 [batch × w1]
/// and h2 [batch × w2] are device scratch, written and read back through global memory.
void launch_mlp_unfused(const MlpLayers& layers, const float* X, float* h1, float* h2, float* Y,
                        int batch, cudaStream_t stream = nullptr);

/// Y = MLP(X) in 3 launches of gemm_bias_relu_fused_kernel (bias + ReLU in each GEMM's epilogue);
/// h1 and h2 as above.
void launch_mlp_layer_fused(const MlpLayers& layers, const float* X, float* h1, float* h2, float* Y,
                            int batch, cudaStream_t stream = nullptr);

/// True when launch_mlp_fully_fused accepts these widths and this batch (limits above).
[[nodiscard]] bool mlp_fully_fused_supports(const std::array<int, kMlpLayers + 1>& widths,
                                            int batch) noexcept;

/// Decomposition of the fully fused kernel; a field left 0 is chosen automatically
/// (mlp_fully_fused_config).
struct MlpFusedConfig {
  int cluster_size = 0;      ///< CTAs per cluster: 8, or 16 (a non-portable cluster size, sm_90)
  int rows_per_cluster = 0;  ///< R: 1, 2, 4, 8 or 16
};

/// The configuration launch_mlp_fully_fused picks for `batch` (cluster_size
/// kMlpFusedDefaultClusterSize, R the smallest power of two <= 16 with ceil(batch / R) <=
/// kMlpFusedTargetClusters).
[[nodiscard]] MlpFusedConfig mlp_fully_fused_config(int batch) noexcept;

/// Y = MLP(X) in one launch of mlp_fully_fused_kernel<C, R>: h1 and h2 stay in shared memory.
/// A non-zero field of `config` forces that choice (benchmarks; the grid is ceil(batch / R)
/// clusters of C CTAs, several waves allowed). Throws std::invalid_argument beyond the limits above
/// or for a cluster size or R not listed in MlpFusedConfig.
void launch_mlp_fully_fused(const MlpLayers& layers, const float* X, float* Y, int batch,
                            cudaStream_t stream = nullptr, MlpFusedConfig config = {});

}  // namespace fuselens::kernels
