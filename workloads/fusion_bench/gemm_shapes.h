#pragma once
// The GEMM shapes every GEMM+bias+ReLU case of fusion_bench runs (FP32, FP16, BF16), and their
// range label. Seed 002's shapes first (the quick set), then seed 001's and the sizes that fill an
// H100 (issue #3).

#include <array>
#include <string>

namespace fuselens::workloads {

struct GemmShape {
  int M, K, N;  // in seed 002's (M, K, N) order
};

inline constexpr std::array<GemmShape, 3> kGemmQuickShapes{
    {{64, 256, 128}, {128, 256, 256}, {1024, 1024, 1024}}};
inline constexpr std::array<GemmShape, 8> kGemmFullOnlyShapes{{{128, 128, 128},
                                                               {256, 128, 128},
                                                               {256, 256, 256},
                                                               {512, 256, 256},
                                                               {512, 512, 256},
                                                               {1024, 256, 512},
                                                               {4096, 4096, 4096},
                                                               {8192, 8192, 8192}}};

/// "M<M>_N<N>_K<K>", the shape part of the NVTX range name.
inline std::string gemm_shape_label(const GemmShape& s) {
  return "M" + std::to_string(s.M) + "_N" + std::to_string(s.N) + "_K" + std::to_string(s.K);
}

}  // namespace fuselens::workloads
