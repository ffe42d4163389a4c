#pragma once
// Internal to kernels/cutlass_gemm: the entry points of the four CUTLASS instantiations, one per
// cutlass_gemm_{fp16,bf16}_{plain,bias_relu}.cu (defined in cutlass_gemm_kernel.cuh), called by the
// public launchers of cutlass_gemm.cpp after their checks. No CUTLASS include.

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime_api.h>

namespace fuselens::kernels::cutlass_detail {

/// One launch of the sm90 kernel: D = A·B (kBiasRelu false) or relu(A·B + bias) (true), rounded to
/// T. Preconditions (checked by the callers): M, N, K > 0, K % 8 == 0, N % 8 == 0, non-null 16-byte
/// aligned pointers, a compute capability 9.0 device. Throws std::runtime_error for a CUTLASS
/// status other than success and CudaError for a failed launch.
template <typename T, bool kBiasRelu>
void run_sm90(const T* A, const T* B, const T* bias, T* C, int M, int N, int K,
              cudaStream_t stream);

#define FUSELENS_CUTLASS_RUN_EXTERN(T, kBiasRelu)                                              \
  extern template void run_sm90<T, kBiasRelu>(const T*, const T*, const T*, T*, int, int, int, \
                                              cudaStream_t);
FUSELENS_CUTLASS_RUN_EXTERN(__half, false)
FUSELENS_CUTLASS_RUN_EXTERN(__half, true)
FUSELENS_CUTLASS_RUN_EXTERN(__nv_bfloat16, false)
FUSELENS_CUTLASS_RUN_EXTERN(__nv_bfloat16, true)
#undef FUSELENS_CUTLASS_RUN_EXTERN

}  // namespace fuselens::kernels::cutlass_detail
