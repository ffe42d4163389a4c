#pragma once
// Row-wise LayerNorm (torch.nn.LayerNorm over the last dimension), FP32 in, FP32 out, FP32
// arithmetic: unfused (four kernels), fused (one kernel, each row read from device memory once) and
// online (one kernel, streaming Welford, any row length).
//
// For every row r of x [rows × cols] (row-major, leading dimension cols; device pointers) with
// gamma [cols] and beta [cols]:
//   mean_r  = (1 / cols) · sum_c x[r][c]
//   var_r   = (1 / cols) · sum_c (x[r][c] - mean_r)^2          (biased, as torch.nn.LayerNorm)
//   y[r][c] = (x[r][c] - mean_r) / sqrt(var_r + eps) · gamma[c] + beta[c]
// eps = 1e-5 by default (torch.nn.LayerNorm's default). y must not alias x, gamma or beta.
//
// Variants and kernels (names as a profiler shows them, namespace fuselens::kernels):
//   launch_layernorm_unfused  FOUR launches, in order (what a naive implementation launches):
//     layernorm_mean_kernel         x -> mean[rows]                              (one block per
//     row) layernorm_variance_kernel     x, mean -> var[rows] = mean of (x - mean)^2  (one block
//     per row) layernorm_normalize_kernel    x, mean, var -> xhat = (x - mean) · rsqrt(var + eps)
//     (element-wise) layernorm_scale_shift_kernel  xhat, gamma, beta -> y = xhat · gamma + beta
//     (element-wise)
//   launch_layernorm_fused    ONE launch of layernorm_fused_kernel<kGroup, kItems, kVec>: the row
//   is held
//     in registers (kItems floats per thread), so x is read from device memory once and y written
//     once. Statistics: each thread's (count, mean, M2) of the elements it holds, computed from
//     registers (sum, then sum of squared deviations), merged across the warp, the block and the
//     cluster with the parallel Welford formula of Chan, Golub & LeVeque (1979):
//       n = na + nb,  mean = (na·ma + nb·mb) / n,  M2 = M2a + M2b + (mb - ma)^2 · na·nb / n
//     (written symmetrically so that butterfly reductions leave the same bits in every thread).
//     Configurations, by cols:
//       cols <= 1024:          a warp per row (kGroup 32), 4 rows per 128-thread block;
//       1024 < cols <= 4096:   a 256-thread block per row (kGroup 256);
//       4096 < cols <= 32768:  a thread-block CLUSTER of ceil(cols / 4096) <= 8 blocks per row
//       (sm_90+),
//                              each block a slice of <= 4096 columns, (n, mean, M2) exchanged
//                              through distributed shared memory;
//       otherwise (cols > 32768, or 4096 < cols on a GPU without clusters): ONE launch of
//       layernorm_online_kernel (below), which reads x twice.
//   launch_layernorm_online   ONE launch of layernorm_online_kernel: a 256-thread block per row
//   streams
//     the row once with Welford's (1962) update per element (n += 1; d = x - mean; mean += d / n;
//     M2 += d · (x - mean)), merges the threads' states with the formula above, then reads the row
//     a second time to write y. Any cols.
//
// Vectorisation: float4 loads/stores when cols % 4 == 0 and every pointer is 16-byte aligned
// (cudaMalloc guarantees 256); otherwise scalar code. Any rows >= 0 and 0 <= cols <= 2^24 are
// correct (counts are exact in float up to 2^24); rows == 0 or cols == 0 launches nothing.
// Numerics: rsqrtf (about 2 ulp); against a double-precision reference the relative L2 error is
// about 1e-7 for zero-mean inputs (tests/kernels/LayerNormTest.cpp also checks rows with a large
// mean).
//
// Every launcher is asynchronous on `stream` (default: the legacy default stream), checks each
// launch with FUSELENS_CUDA_CHECK_LAST (throws fuselens::kernels::CudaError) and throws
// std::invalid_argument for negative sizes, cols > 2^24 or eps < 0. Exact launch counts: unfused 4,
// fused 1, online 1. README.md beside this file lists the bytes each variant moves and the measured
// figures.

#include <cuda_runtime_api.h>

namespace fuselens::kernels {

/// torch.nn.LayerNorm's default epsilon.
inline constexpr float kLayerNormEps = 1e-5f;

/// Device scratch the unfused variant writes and reads back (the round trips fusion removes).
/// None may alias x, y, gamma, beta or each other.
struct LayerNormScratch {
  float* mean = nullptr;  ///< [rows]
  float* var = nullptr;   ///< [rows], biased variance
  float* xhat = nullptr;  ///< [rows × cols], (x - mean) · rsqrt(var + eps)
};

/// y = layernorm(x) · gamma + beta in four launches (see above).
void launch_layernorm_unfused(const float* x, const float* gamma, const float* beta, float* y,
                              int rows, int cols, const LayerNormScratch& scratch,
                              float eps = kLayerNormEps, cudaStream_t stream = nullptr);

/// y = layernorm(x) · gamma + beta in one launch; x is read once when cols <= 32768 on sm_90+.
void launch_layernorm_fused(const float* x, const float* gamma, const float* beta, float* y,
                            int rows, int cols, float eps = kLayerNormEps,
                            cudaStream_t stream = nullptr);

/// y = layernorm(x) · gamma + beta in one launch of the online (streaming Welford) kernel; reads x
/// twice.
void launch_layernorm_online(const float* x, const float* gamma, const float* beta, float* y,
                             int rows, int cols, float eps = kLayerNormEps,
                             cudaStream_t stream = nullptr);

/// The configuration launch_layernorm_fused picks for `cols` on the current device.
enum class LayerNormFusedPath { WarpPerRow, BlockPerRow, ClusterPerRow, Online };
[[nodiscard]] LayerNormFusedPath layernorm_fused_path(int cols);

}  // namespace fuselens::kernels
