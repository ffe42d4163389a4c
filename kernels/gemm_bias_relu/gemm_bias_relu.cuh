#pragma once
// GEMM + bias + ReLU, unfused (three kernels) and fused (one kernel), FP32.
//
// Computes  C = relu(A · B + bias)  with
//   A    [M × K] row-major, leading dimension K
//   B    [K × N] row-major, leading dimension N
//   bias [N]     broadcast over the M rows
//   C    [M × N] row-major, leading dimension N
// All pointers are device pointers (cudaMalloc'd or managed); A, B, bias must not alias C.
// relu(x) = x < 0 ? 0 : x, so NaN propagates (like torch.relu), which keeps poisoned output
// visible.
//
// Kernels (names as a profiler shows them, all in namespace fuselens::kernels):
//   gemm_kernel                 C = A·B                       (unfused step 1)
//   add_bias_kernel             C[r][c] += bias[c], in place  (unfused step 2)
//   relu_kernel                 from elementwise/elementwise.cuh, in place (unfused step 3)
//   gemm_bias_relu_fused_kernel C = relu(A·B + bias), the same tiled SGEMM with the bias+ReLU
//   epilogue
//                               applied while the accumulators are still in registers.
//   gemm_bias_fused_kernel      C = A·B + bias, the same SGEMM with a bias-only epilogue (a Linear
//   layer
//                               without activation; the Fashion-MNIST training uses it).
// The SGEMM: 64×64 block tile, BK = 8, 256 threads, each thread a 4×4 register micro-tile, A and B
// tiles staged through shared memory. Bounds checks make any M, N, K >= 0 correct (no
// multiple-of-tile requirement). Launch constraint: ceil(M / 64) <= 65535 (grid.y), i.e. M <=
// 4,194,240.
//
// Every launcher is asynchronous on `stream` (default: the legacy default stream), checks the
// launch with FUSELENS_CUDA_CHECK_LAST (throws fuselens::kernels::CudaError) and throws
// std::invalid_argument for negative sizes or M beyond the constraint. An empty output (M == 0 or N
// == 0) launches nothing. Exact launch counts (fusion_bench and the tests rely on them):
//   launch_gemm 1, launch_add_bias 1, launch_gemm_bias_relu_unfused 3, launch_gemm_bias_relu_fused
//   1, launch_gemm_bias_fused 1.
// See README.md beside this file for the memory traffic each variant moves.

#include <cuda_runtime_api.h>

namespace fuselens::kernels {

/// C = A·B. One launch of gemm_kernel.
void launch_gemm(const float* A, const float* B, float* C, int M, int N, int K,
                 cudaStream_t stream = nullptr);

/// C[r][c] += bias[c] for the M×N row-major C, in place. One launch of add_bias_kernel.
void launch_add_bias(float* C, const float* bias, int M, int N, cudaStream_t stream = nullptr);

/// C = relu(A·B + bias) in three launches: gemm_kernel, add_bias_kernel, relu_kernel (in place on
/// C).
void launch_gemm_bias_relu_unfused(const float* A, const float* B, const float* bias, float* C,
                                   int M, int N, int K, cudaStream_t stream = nullptr);

/// C = relu(A·B + bias) in one launch of gemm_bias_relu_fused_kernel.
void launch_gemm_bias_relu_fused(const float* A, const float* B, const float* bias, float* C, int M,
                                 int N, int K, cudaStream_t stream = nullptr);

/// C = A·B + bias in one launch of gemm_bias_fused_kernel.
void launch_gemm_bias_fused(const float* A, const float* B, const float* bias, float* C, int M,
                            int N, int K, cudaStream_t stream = nullptr);

}  // namespace fuselens::kernels
