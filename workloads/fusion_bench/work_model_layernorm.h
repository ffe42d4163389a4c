#pragma once
// Analytic work of one iteration of the LayerNorm variants (kernels/layernorm), FP32, for x [rows ×
// cols], gamma and beta [cols]; the convention of work_model.h (each kernel reads each of its
// inputs once and writes each output once; gamma and beta counted once, 8·C, although every row
// block re-reads them from L2; an FMA is 2 FLOPs). kernels/layernorm/README.md has the table.
//
// Bytes:
//   unfused  mean: x (4RC) -> mean (4R); variance: x, mean (4RC + 4R) -> var (4R);
//            normalize: x, mean, var (4RC + 8R) -> xhat (4RC); scale_shift: xhat, gamma, beta (4RC
//            + 8C)
//            -> y (4RC)                                                    = 24·R·C + 20·R + 8·C
//   fused    x once (4RC), gamma, beta (8C) -> y (4RC)                     = 8·R·C + 8·C
//   online   x twice (8RC; the second read usually hits L2), gamma, beta -> y = 12·R·C + 8·C
// FLOPs per element: unfused and fused 8 (sum 1; squared deviation: subtract + FMA 3; subtract,
// multiply by rstd, FMA with gamma and beta 4); online 10 (Welford update: subtract, divide, add,
// subtract, FMA 6; output 4).

#include "work_model.h"

namespace fuselens::workloads {

inline DeclaredWork layernorm_unfused_work(double rows, double cols) {
  return {8 * rows * cols, 24 * rows * cols + 20 * rows + 8 * cols};
}

inline DeclaredWork layernorm_fused_work(double rows, double cols) {
  return {8 * rows * cols, 8 * rows * cols + 8 * cols};
}

inline DeclaredWork layernorm_online_work(double rows, double cols) {
  return {10 * rows * cols, 12 * rows * cols + 8 * cols};
}

}  // namespace fuselens::workloads
