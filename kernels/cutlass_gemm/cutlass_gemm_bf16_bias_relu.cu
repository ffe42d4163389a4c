// cutlass_detail::run_sm90<__nv_bfloat16, true>: the CUTLASS sm90 GEMM with the bias + ReLU
// epilogue visitor tree (cutlass_gemm.cuh). One instantiation per translation unit
// (cutlass_gemm_kernel.cuh).
#include "cutlass_gemm/cutlass_gemm_kernel.cuh"

template void fuselens::kernels::cutlass_detail::run_sm90<__nv_bfloat16, true>(
    const __nv_bfloat16*, const __nv_bfloat16*, const __nv_bfloat16*, __nv_bfloat16*, int, int, int,
    cudaStream_t);
