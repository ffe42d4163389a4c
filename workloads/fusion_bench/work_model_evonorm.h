#pragma once
// fusion_bench's declared work (work_model.h conventions) for the EvoNorm variants. The formulas
// live with the kernels (kernels/evonorm/evonorm.cuh: evonorm_unfused_work, evonorm_fused_work;
// README.md beside them derives them) so the Google Benchmark suite and fusion_bench declare the
// same numbers.
//   unfused: bytes 32·E + 16·N·G + 12·C, FLOPs 12·E + 2·N·G
//   fused:   bytes  8·E + 12·C (16·E + 12·C for groups too large to hold on chip), FLOPs 11·E +
//   2·N·G
// with E = N·C·H·W, G the group count.

#include "evonorm/evonorm.cuh"
#include "work_model.h"

namespace fuselens::workloads {

/// Work of ONE call of launch_evonorm_fused (fused) or launch_evonorm_unfused.
inline DeclaredWork evonorm_work(bool fused, const kernels::EvoNormShape& shape) {
  const kernels::EvoNormWork w =
      fused ? kernels::evonorm_fused_work(shape) : kernels::evonorm_unfused_work(shape);
  return {w.flops, w.bytes};
}

}  // namespace fuselens::workloads
