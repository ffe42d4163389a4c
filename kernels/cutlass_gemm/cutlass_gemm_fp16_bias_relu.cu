// cutlass_detail::run_sm90<__half, true>: the CUTLASS sm90 GEMM with the bias + ReLU epilogue
// visitor tree (cutlass_gemm.cuh). One instantiation per translation unit
// (cutlass_gemm_kernel.cuh).
#include "cutlass_gemm/cutlass_gemm_kernel.cuh"

template void fuselens::kernels::cutlass_detail::run_sm90<__half, true>(const __half*,
                                                                        const __half*,
                                                                        const __half*, __half*, int,
                                                                        int, int, cudaStream_t);
