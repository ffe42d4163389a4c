#pragma once
// GEMM + bias + ReLU with NVIDIA CUTLASS's sm90 kernels (TMA loads, warpgroup MMA `wgmma`, a
// warp-specialized persistent producer/consumer pipeline), FP16 and BF16 storage with FP32
// accumulation: the library-speed variant of kernels/gemm_tc's op. Library fuselens_kernels_cutlass
// (built only when CUTLASS is found and CMAKE_CUDA_ARCHITECTURES lists 90; compiled for sm_90a
// alone). Consumers see FUSELENS_HAVE_CUTLASS=1 when they link it. This header includes no CUTLASS
// header, so it is cheap to include.
//
// Computes, with the layouts of kernels/gemm_tc (T = __half or __nv_bfloat16),
//   A    [M × K] row-major, leading dimension K
//   B    [K × N] row-major, leading dimension N
//   bias [N]     broadcast over the M rows
//   C    [M × N] row-major, leading dimension N
// fused:   C = relu(A·B + bias) in one kernel: CUTLASS's epilogue visitor tree
//          fusion::LinCombPerColBiasEltAct<ReLu> adds bias[col] and applies ReLU to the FP32
//          accumulators in registers (alpha = 1, beta = 0, no C source read), rounds to T once.
// plain:   C = A·B rounded to T (fusion::LinearCombination, alpha = 1, beta = 0, no source read).
// unfused: the plain CUTLASS GEMM, then the suite's add_bias_tc_kernel and relu_tc_kernel
//          (kernels/gemm_tc) in place on C: the same three-launch chain as gemm_tc's unfused
//          variant with the GEMM swapped for CUTLASS's, so C is rounded to T after each step.
// relu(x) is CUTLASS's ReLu (maximum with NaN propagation): NaN stays NaN, like the suite's.
//
// Two kernel configurations per dtype and epilogue (README.md; build time there), chosen per call
// by problem size (cutlass_gemm_sm90.h, choose_config): large, block tile 256×128×64 in clusters of
// 1×2×1, KernelTmaWarpSpecializedCooperative (two consumer warpgroups share a tile, one producer
// warp issues TMA) with the cooperative TMA epilogue, when those tiles fill every SM at least once;
// small, 64×128×64 without clusters, KernelTmaWarpSpecializedPingpong (two consumer warpgroups
// alternate between tiles), otherwise. Both: as many mainloop stages as fit beside the epilogue's
// shared memory, persistent tile scheduler (one CTA per SM, swizzle 8). The parameters (TMA
// descriptors) of a thread's last call are reused when its pointers, sizes and device repeat.
// Kernel names as a profiler shows them:
// cutlass::device_kernel<cutlass::gemm::kernel::GemmUniversal<
// ... cutlass::epilogue::fusion::LinCombPerColBiasEltAct<cutlass::epilogue::thread::ReLu, ...>
// ...>> (fused) and the same with fusion::LinearCombination (plain GEMM); both contain "cutlass".
//
// Constraints (checked; std::invalid_argument otherwise):
//   - M, N, K >= 0; K % 8 == 0 and N % 8 == 0: TMA needs every row of A, B and C to start on a
//     16-byte boundary (8 elements). M is arbitrary; tails of M, N, K are handled by TMA's
//     out-of-bounds fill and predicated stores.
//   - A, B, C and bias 16-byte aligned (cudaMalloc gives 256). A, B, bias must not alias C.
// M == 0 or N == 0 launches nothing. K == 0 (A·B = 0; TMA cannot describe an empty K extent)
// launches no CUTLASS kernel: C is zeroed with cudaMemsetAsync, then (fused, unfused) the bias and
// ReLU kernels of kernels/gemm_tc give relu(bias).
//
// Device: the kernels are sm_90a code (wgmma, TMA, clusters) and run on compute capability 9.0
// only (H100, H200, GH200). cutlass_gemm_available() says whether the current device is one; on
// another device every launcher throws CutlassUnavailable before touching the device.
//
// Every launcher is asynchronous on `stream` (default: the legacy default stream), allocates
// nothing (the kernels need no workspace; checked) and can be captured into a CUDA graph. Launch
// failures throw fuselens::kernels::CudaError (FUSELENS_CUDA_CHECK); a CUTLASS status other than
// success throws std::runtime_error naming it. Launch counts (K > 0): plain 1, fused 1, unfused 3.
// Exception, a build with -DFUSELENS_CUTLASS_SCHEDULER=streamk or streamk_128x256 (README.md,
// "Stream-K"; the default is persistent): the large configuration's stream-K kernel needs a
// workspace, allocated with cudaMalloc on the first call of a (device, stream) and when a later
// problem needs more, kept for the process (so such a first call cannot be captured into a graph),
// and, when the decomposition has stream-K units, a cudaMemsetAsync of its barrier flags before
// each launch (one node more in a graph).
// Argument checks come first, then the device check: invalid arguments throw std::invalid_argument
// on any machine.

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime_api.h>

#include <stdexcept>
#include <string>

namespace fuselens::kernels {

/// The current device cannot run the sm_90a kernels (compute capability other than 9.0, or no
/// device).
class CutlassUnavailable : public std::runtime_error {
 public:
  explicit CutlassUnavailable(const std::string& message) : std::runtime_error(message) {}
};

/// True when the current CUDA device has compute capability 9.0. Never throws (false when there is
/// no device or the query fails).
[[nodiscard]] bool cutlass_gemm_available() noexcept;

/// C = A·B rounded to T. One launch of CUTLASS's GEMM with the plain linear-combination epilogue.
template <typename T>
void launch_cutlass_gemm(const T* A, const T* B, T* C, int M, int N, int K,
                         cudaStream_t stream = nullptr);

/// C = relu(A·B + bias) in one launch (CUTLASS GEMM with the bias + ReLU epilogue visitor tree).
template <typename T>
void launch_cutlass_gemm_bias_relu_fused(const T* A, const T* B, const T* bias, T* C, int M, int N,
                                         int K, cudaStream_t stream = nullptr);

/// C = relu(A·B + bias) in three launches: launch_cutlass_gemm, launch_add_bias_tc and
/// launch_relu_tc (kernels/gemm_tc) in place on C.
template <typename T>
void launch_cutlass_gemm_bias_relu_unfused(const T* A, const T* B, const T* bias, T* C, int M,
                                           int N, int K, cudaStream_t stream = nullptr);

#define FUSELENS_CUTLASS_GEMM_EXTERN(T)                                                           \
  extern template void launch_cutlass_gemm<T>(const T*, const T*, T*, int, int, int,              \
                                              cudaStream_t);                                      \
  extern template void launch_cutlass_gemm_bias_relu_fused<T>(const T*, const T*, const T*, T*,   \
                                                              int, int, int, cudaStream_t);       \
  extern template void launch_cutlass_gemm_bias_relu_unfused<T>(const T*, const T*, const T*, T*, \
                                                                int, int, int, cudaStream_t);
FUSELENS_CUTLASS_GEMM_EXTERN(__half)
FUSELENS_CUTLASS_GEMM_EXTERN(__nv_bfloat16)
#undef FUSELENS_CUTLASS_GEMM_EXTERN

}  // namespace fuselens::kernels
