#pragma once
// CPU reference for the tensor-core GEMM + bias + ReLU (pure C++, part of
// fuselens_kernels_reference).
//
// The FP16/BF16 kernels compute with the values their rounded inputs hold, so the reference takes
// those values as floats (host conversion: fuselens::test::to_float(to_half(x)) in tests, the same
// round trip in fusion_bench) and computes
//   out[i][c] = relu( sum_k A[rows[i]][k] * B[k][c] + bias[c] )
// in double, rounded to float once at the end, for the selected rows of A only (all rows: rows =
// 0..M-1), so the largest shapes can be checked on a sample of rows. Layouts as in gemm_tc.cuh: A
// [M×K], B [K×N] row-major, bias [N]; out [rows.size() × N] row-major. relu(x) = x < 0 ? 0 : x.
// Cost: rows.size()·N·K multiply-adds on one CPU thread.
// Throws std::invalid_argument for negative sizes, a span of the wrong length or a row index >= M.

#include <cstddef>
#include <span>
#include <vector>

namespace fuselens::kernels {

/// relu(A·B + bias) in double precision for the listed rows of A, as rows.size()·N floats
/// (row-major).
[[nodiscard]] std::vector<float> gemm_tc_reference_rows(std::span<const float> A,
                                                        std::span<const float> B,
                                                        std::span<const float> bias, int M, int N,
                                                        int K, std::span<const std::size_t> rows);

/// relu(A·B + bias) in double precision for all M rows.
[[nodiscard]] std::vector<float> gemm_tc_reference(std::span<const float> A,
                                                   std::span<const float> B,
                                                   std::span<const float> bias, int M, int N,
                                                   int K);

}  // namespace fuselens::kernels
