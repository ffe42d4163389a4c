// cutlass_detail::run_sm90<__half, true, Config::kSmall>: the CUTLASS sm90 GEMM with the bias +
// ReLU epilogue visitor tree, small tile configuration (cutlass_gemm_sm90.h). One instantiation per
// translation unit (cutlass_gemm_kernel.cuh), so the heavy CUTLASS templates compile in parallel
// and once.
#include "cutlass_gemm/cutlass_gemm_kernel.cuh"

template void fuselens::kernels::cutlass_detail::run_sm90<
    __half, true, fuselens::kernels::cutlass_detail::Config::kSmall>(const __half*, const __half*,
                                                                     const __half*, __half*, int,
                                                                     int, int, int, int,
                                                                     cudaStream_t);
