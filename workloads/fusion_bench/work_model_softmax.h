#pragma once
// Analytic work of one iteration of the row-wise softmax variants (kernels/softmax), FP32, for
// x [rows × cols]; the convention of work_model.h (each kernel reads each of its inputs once and
// writes each output once; an FMA is 2 FLOPs, a comparison 0). kernels/softmax/README.md has the
// table.
//
// Bytes:
//   unfused  row_max: x (4RC) -> m (4R); exp: x, m (4RC + 4R) -> e (4RC); row_sum: e (4RC) -> s
//   (4R);
//            divide: e, s (4RC + 4R) -> y (4RC)                            = 24·R·C + 16·R
//   fused    x once (4RC) -> y (4RC)                                        = 8·R·C
//   online   x twice (8RC; the second read usually hits L2) -> y (4RC)      = 12·R·C
// FLOPs per element: unfused and fused 4 (subtract, exp, add into the sum, divide or multiply by
// the reciprocal); online 6 (subtract, exp, add in pass 1; subtract, exp, multiply in pass 2). exp
// counts 1 although expf executes about 10 FP32 instructions (kernels/elementwise/README.md has the
// same caveat).

#include "work_model.h"

namespace fuselens::workloads {

inline DeclaredWork softmax_unfused_work(double rows, double cols) {
  return {4 * rows * cols, 24 * rows * cols + 16 * rows};
}

inline DeclaredWork softmax_fused_work(double rows, double cols) {
  return {4 * rows * cols, 8 * rows * cols};
}

inline DeclaredWork softmax_online_work(double rows, double cols) {
  return {6 * rows * cols, 12 * rows * cols};
}

}  // namespace fuselens::workloads
