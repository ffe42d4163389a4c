// cutlass_detail::run_sm90<__nv_bfloat16, true, Config::kSmall>: the CUTLASS sm90 GEMM with the
// bias + ReLU epilogue visitor tree, small tile configuration (cutlass_gemm_sm90.h). One
// instantiation per translation unit (cutlass_gemm_kernel.cuh), so the heavy CUTLASS templates
// compile in parallel and once.
#include "cutlass_gemm/cutlass_gemm_kernel.cuh"

template void fuselens::kernels::cutlass_detail::run_sm90<
    __nv_bfloat16, true, fuselens::kernels::cutlass_detail::Config::kSmall>(
    const __nv_bfloat16*, const __nv_bfloat16*, const __nv_bfloat16*, __nv_bfloat16*, int, int, int,
    int, int, cudaStream_t);
