#pragma once
// fusion_bench's declared work (work_model.h conventions) for the MLP variants. The formulas live
// with the kernels (kernels/mlp/mlp.cuh: mlp_work; README.md beside it derives them) so the Google
// Benchmark suite and fusion_bench declare the same numbers. Per layer (K in, N out, B rows):
//   FLOPs (every variant)  2·B·K·N + B·N
//   bytes  unfused         4·(K·N + N) + 4·B·K + 20·B·N
//          layer_fused     4·(K·N + N) + 4·B·K +  4·B·N   (also the cuBLASLt peer)
//          fully_fused     4·(K·N + N), plus 4·B·(w0 + w3) once for X and Y

#include <array>

#include "mlp/mlp.cuh"
#include "work_model.h"

namespace fuselens::workloads {

/// Work of ONE call of the given MLP variant.
inline DeclaredWork mlp_work(kernels::MlpVariant variant, const std::array<int, 4>& widths,
                             int batch) {
  const kernels::MlpWork w = kernels::mlp_work(variant, widths, batch);
  return {w.flops, w.bytes};
}

}  // namespace fuselens::workloads
