#pragma once
// Analytic work of the GEMM + bias + ReLU variants for any element size (work_model.h's rules):
// FLOPs = 2·M·N·K (an FMA is 2) + M·N (bias add; ReLU is a comparison, 0), for every variant.
// Bytes = A, B and bias read once + the passes over C, each M·N·elem bytes:
//   fused, cublaslt_epilogue          1 pass  (C written once from registers)
//   unfused, cublas_unfused_epilogue  5 passes (GEMM writes C; bias kernel reads + writes it; ReLU
//   too)
// kernels/gemm_tc/README.md and kernels/peers/README.md tabulate these per shape.

#include "work_model.h"

namespace fuselens::workloads {

/// C = relu(A·B + bias), A [M×K], B [K×N], bias [N], C [M×N], every element `element_bytes` wide
/// (4 FP32, 2 FP16/BF16). `epilogue_in_registers`: fused or cuBLASLt's epilogue (1 pass over C);
/// otherwise the three-launch chains (5 passes).
inline DeclaredWork gemm_epilogue_work(bool epilogue_in_registers, double M, double N, double K,
                                       double element_bytes) {
  const double flops = 2 * M * N * K + M * N;
  const double inputs = element_bytes * (M * K + K * N + N);
  return {flops, inputs + element_bytes * M * N * (epilogue_in_registers ? 1 : 5)};
}

}  // namespace fuselens::workloads
