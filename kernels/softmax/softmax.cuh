#pragma once
// Row-wise softmax, FP32 in, FP32 out, FP32 arithmetic: unfused (four kernels), fused (one kernel,
// each row read from device memory once) and online (one kernel, streaming, any row length).
//
// Computes, for every row r of x [rows × cols] (row-major, leading dimension cols, device
// pointers):
//   m_r     = max_c x[r][c]
//   y[r][c] = exp(x[r][c] - m_r) / sum_k exp(x[r][k] - m_r)
// Subtracting the row maximum keeps exp() from overflowing (expf overflows above 88.72); it is the
// usual "safe softmax" formulation. y must not alias x (the unfused variant also reads x twice).
//
// Variants and kernels (names as a profiler shows them, all in namespace fuselens::kernels; the
// templated ones show their template arguments):
//   launch_softmax_unfused  FOUR launches, in order, as an unfused framework runs them:
//     softmax_row_max_kernel   x -> row_max[rows]                       (one block per row)
//     softmax_exp_kernel       x, row_max -> exps = exp(x - row_max)    (element-wise, written out)
//     softmax_row_sum_kernel   exps -> row_sum[rows]                    (one block per row)
//     softmax_divide_kernel    exps, row_sum -> y = exps / row_sum      (element-wise)
//   launch_softmax_fused    ONE launch of softmax_fused_kernel<kGroup, kItems, kVec>: the row is
//   held in
//     registers (kItems floats per thread), so x is read from device memory once and y written
//     once:
//       cols <= 1024:           a warp per row (kGroup 32), 4 rows per 128-thread block;
//       1024 < cols <= 4096:    a 256-thread block per row (kGroup 256);
//       4096 < cols <= 32768:   a thread-block CLUSTER of ceil(cols / 4096) <= 8 blocks per row
//       (sm_90+):
//                               each block holds a slice of <= 4096 columns, the blocks exchange
//                               their (max, sum) pairs through distributed shared memory;
//       otherwise (cols > 32768, or 4096 < cols on a GPU without clusters): ONE launch of
//       softmax_online_kernel (below), which reads x twice.
//     Inside the row: max over registers, e = exp(x - max) kept in registers, sum, y = e · (1 /
//     sum).
//   launch_softmax_online   ONE launch of softmax_online_kernel: a 256-thread block per row streams
//   the
//     row once computing the running max m and the rescaled running sum s (online softmax, Milakov
//     & Gimelshein 2018, arXiv:1805.02867: m' = max(m, x), s' = s·exp(m - m') + exp(x - m')),
//     merges the threads' (m, s) pairs the same way, then reads the row a second time to write y.
//     Any cols.
//
// Vectorisation: float4 loads/stores when cols % 4 == 0 and x, y (and the unfused scratch) are
// 16-byte aligned (cudaMalloc guarantees 256); otherwise scalar code. Any rows >= 0 and cols >= 0
// are correct (no multiple-of-tile requirement); rows == 0 or cols == 0 launches nothing. Numerics:
// expf (not __expf; about 2 ulp), float sums (tree reductions), so against a double-precision
// reference the relative L2 error is about 1e-7 (tests/kernels/SoftmaxTest.cpp).
//
// Every launcher is asynchronous on `stream` (default: the legacy default stream), checks each
// launch with FUSELENS_CUDA_CHECK_LAST (throws fuselens::kernels::CudaError) and throws
// std::invalid_argument for negative sizes. Exact launch counts: unfused 4, fused 1, online 1.
// README.md beside this file lists the bytes each variant moves and the measured figures.

#include <cuda_runtime_api.h>

namespace fuselens::kernels {

/// Device scratch the unfused variant writes and reads back (the round trips that fusion removes).
/// None may alias x, y or each other.
struct SoftmaxScratch {
  float* row_max = nullptr;  ///< [rows]
  float* row_sum = nullptr;  ///< [rows]
  float* exps = nullptr;     ///< [rows × cols], exp(x - row_max)
};

/// y = softmax(x) along each row in four launches (see above). `scratch` as SoftmaxScratch says.
void launch_softmax_unfused(const float* x, float* y, int rows, int cols,
                            const SoftmaxScratch& scratch, cudaStream_t stream = nullptr);

/// y = softmax(x) along each row in one launch; x is read once when cols <= 32768 on sm_90+ (see
/// above).
void launch_softmax_fused(const float* x, float* y, int rows, int cols,
                          cudaStream_t stream = nullptr);

/// y = softmax(x) along each row in one launch of the online (streaming) kernel; reads x twice.
void launch_softmax_online(const float* x, float* y, int rows, int cols,
                           cudaStream_t stream = nullptr);

/// The configuration launch_softmax_fused picks for `cols` on the current device (for tests,
/// benches).
enum class SoftmaxFusedPath { WarpPerRow, BlockPerRow, ClusterPerRow, Online };
[[nodiscard]] SoftmaxFusedPath softmax_fused_path(int cols);

}  // namespace fuselens::kernels
