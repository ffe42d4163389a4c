#pragma once
// GEMM + bias + ReLU on tensor cores, FP16 and BF16 storage with FP32 accumulation; unfused (three
// kernels) and fused (one kernel). T is __half or __nv_bfloat16 (explicitly instantiated for both).
//
// Computes  C = relu(A · B + bias)  with
//   A    [M × K] row-major, leading dimension K, dtype T
//   B    [K × N] row-major, leading dimension N, dtype T
//   bias [N]     dtype T, broadcast over the M rows
//   C    [M × N] row-major, leading dimension N, dtype T
// Products are accumulated in FP32 (mma.sync.m16n8k16 .f32.{f16,bf16}.{f16,bf16}.f32); bias add and
// ReLU are done in FP32 and the result is rounded to T once (fused) or after each kernel (unfused:
// the GEMM rounds A·B to T, the bias kernel rounds A·B + bias to T). relu(x) = x < 0 ? 0 : x, so
// NaN propagates (like torch.relu) and a poisoned, unwritten output stays visible.
//
// Constraints of the GEMM launchers (checked; std::invalid_argument otherwise):
//   - M, N, K >= 0; K % 8 == 0 and N % 8 == 0: A's and B's rows are copied into shared memory with
//     16-byte cp.async (8 elements), so each row must start on a 16-byte boundary. M is arbitrary.
//     K need not be a multiple of the k-tile depth (K = 72 = 9 · 8 works): the tail tile is
//     zero-filled. M and N need not be multiples of the block tile: out-of-range rows/columns are
//     zero-filled on load and masked on store.
//   - A, B, C and bias 16-byte aligned (cudaMalloc gives 256 bytes); A, B, bias must not alias C.
//   - ceil(M / 64) <= 65535 and ceil(N / 64) <= 65535 (grid dimensions).
// M == 0 or N == 0 launches nothing; K == 0 gives C = relu(bias) (fused) or relu(0 + bias)
// (unfused).
//
// The GEMM (gemm_tc.cu): a block tile of C per thread block, 64×64 (large, medium) or 32×32 (small)
// warp tiles, each warp issuing mma.sync.m16n8k16 on fragments loaded with ldmatrix (ldmatrix.trans
// for the row-major B), A and B k-tiles staged through an XOR-swizzled (bank-conflict-free)
// shared-memory ring filled with cp.async.cg (zero-fill for tails), one __syncthreads per k-tile,
// thread blocks rasterised in groups of 8 block-rows for L2 reuse. Config chosen per launch, the
// largest that still gives at least one block tile per SM:
//   large:  128×256 block tile, k-tile 64, 8 warps (2×4), 3 stages, 144 KiB dynamic shared memory;
//   medium: 128×128, k-tile 32, 4 warps (2×2), 4 stages, 64 KiB;
//   small:  64×64, k-tile 32, 4 warps (2×2), 4 stages, 32 KiB (all seed shapes up to 1024³).
// FUSELENS_GEMM_TC_CONFIG=large|medium|small|large_bk32 in the environment forces one (tuning
// only). The fused kernel is the same GEMM with the bias + ReLU applied to the FP32 accumulators
// while they are in registers, then one store of C.
//
// Kernels, as a profiler shows them (namespace fuselens::kernels, T = __half or __nv_bfloat16):
//   gemm_tc_kernel<Config, T>                  C = A·B rounded to T              (unfused step 1)
//   add_bias_tc_kernel<T>                      C[r][c] = C[r][c] + bias[c], in place (unfused step
//   2) relu_tc_kernel<T>                          y = relu(x), in place allowed      (unfused step
//   3) gemm_tc_bias_relu_fused_kernel<Config, T>  C = relu(A·B + bias)               (fused)
// Exact launch counts: launch_gemm_tc 1, launch_add_bias_tc 1, launch_relu_tc 1 (0 when n == 0),
// launch_gemm_tc_bias_relu_unfused 3, launch_gemm_tc_bias_relu_fused 1.
//
// Every launcher is asynchronous on `stream` (default: the legacy default stream) and checks the
// launch with FUSELENS_CUDA_CHECK_LAST (throws fuselens::kernels::CudaError). The bias and ReLU
// kernels have no alignment or multiple-of-8 constraint (16-byte vector path when aligned, scalar
// otherwise). README.md beside this file: bytes moved per variant and measured figures.

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime_api.h>

#include <cstddef>

namespace fuselens::kernels {

/// C = A·B rounded to T. One launch of gemm_tc_kernel.
template <typename T>
void launch_gemm_tc(const T* A, const T* B, T* C, int M, int N, int K,
                    cudaStream_t stream = nullptr);

/// C[r][c] = round_T(C[r][c] + bias[c]) for the M×N row-major C, in place. One launch of
/// add_bias_tc_kernel. Any M, N >= 0 (negative sizes throw std::invalid_argument).
template <typename T>
void launch_add_bias_tc(T* C, const T* bias, int M, int N, cudaStream_t stream = nullptr);

/// y = relu(x) over n elements; in place (x == y) allowed. One launch of relu_tc_kernel (none if n
/// == 0).
template <typename T>
void launch_relu_tc(const T* x, T* y, std::size_t n, cudaStream_t stream = nullptr);

/// C = relu(A·B + bias) in three launches: gemm_tc_kernel, add_bias_tc_kernel, relu_tc_kernel (in
/// place).
template <typename T>
void launch_gemm_tc_bias_relu_unfused(const T* A, const T* B, const T* bias, T* C, int M, int N,
                                      int K, cudaStream_t stream = nullptr);

/// C = relu(A·B + bias) in one launch of gemm_tc_bias_relu_fused_kernel.
template <typename T>
void launch_gemm_tc_bias_relu_fused(const T* A, const T* B, const T* bias, T* C, int M, int N,
                                    int K, cudaStream_t stream = nullptr);

#define FUSELENS_GEMM_TC_EXTERN(T)                                                                \
  extern template void launch_gemm_tc<T>(const T*, const T*, T*, int, int, int, cudaStream_t);    \
  extern template void launch_add_bias_tc<T>(T*, const T*, int, int, cudaStream_t);               \
  extern template void launch_relu_tc<T>(const T*, T*, std::size_t, cudaStream_t);                \
  extern template void launch_gemm_tc_bias_relu_unfused<T>(const T*, const T*, const T*, T*, int, \
                                                           int, int, cudaStream_t);               \
  extern template void launch_gemm_tc_bias_relu_fused<T>(const T*, const T*, const T*, T*, int,   \
                                                         int, int, cudaStream_t);
FUSELENS_GEMM_TC_EXTERN(__half)
FUSELENS_GEMM_TC_EXTERN(__nv_bfloat16)
#undef FUSELENS_GEMM_TC_EXTERN

}  // namespace fuselens::kernels
