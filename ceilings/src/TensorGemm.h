#pragma once
// TensorGemm: the tensor-core ceiling of the running GPU, measured with a large cuBLASLt matrix
// product (D = A^T B, FP32 accumulation, FP16 or BF16 operands and output, M = N = K = 8192 by
// default, random inputs in [-1, 1)), FLOP/s = 2 M N K / median time of 20 products after 3
// warm-ups. cuBLASLt is loaded at run time (dlopen of libcublasLt.so.13, or $FUSELENS_CUBLASLT),
// so prof-ceilings runs, without this ceiling, where it is missing.
// Errors: TensorGemmUnavailable (cuBLASLt not found or no algorithm), fuselens::kernels::CudaError.

#include <stdexcept>

#include "Microkernels.cuh"

namespace fuselens::ceilings {

class TensorGemmUnavailable : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

enum class TensorType { Fp16, Bf16 };

Measurement tensor_gemm_rate(TensorType type, int size, int repetitions);

}  // namespace fuselens::ceilings
