#include "gemm_tc/reference.h"

#include <numeric>
#include <stdexcept>
#include <string>

namespace fuselens::kernels {
namespace {

void require_length(const char* name, std::size_t actual, std::size_t expected) {
  if (actual != expected) {
    throw std::invalid_argument(std::string("gemm_tc_reference: ") + name + " has " +
                                std::to_string(actual) + " elements, expected " +
                                std::to_string(expected));
  }
}

}  // namespace

std::vector<float> gemm_tc_reference_rows(std::span<const float> A, std::span<const float> B,
                                          std::span<const float> bias, int M, int N, int K,
                                          std::span<const std::size_t> rows) {
  if (M < 0 || N < 0 || K < 0) {
    throw std::invalid_argument("gemm_tc_reference: negative size");
  }
  const auto m = static_cast<std::size_t>(M);
  const auto n = static_cast<std::size_t>(N);
  const auto k = static_cast<std::size_t>(K);
  require_length("A", A.size(), m * k);
  require_length("B", B.size(), k * n);
  require_length("bias", bias.size(), n);

  std::vector<float> out(rows.size() * n);
  std::vector<double> acc(n);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const std::size_t r = rows[i];
    if (r >= m) {
      throw std::invalid_argument("gemm_tc_reference: row " + std::to_string(r) + " >= M");
    }
    for (std::size_t c = 0; c < n; ++c) {
      acc[c] = static_cast<double>(bias[c]);
    }
    for (std::size_t kk = 0; kk < k; ++kk) {  // r-k-c order streams through rows of B
      const double a = A[r * k + kk];
      const float* b_row = B.data() + kk * n;
      for (std::size_t c = 0; c < n; ++c) {
        acc[c] += a * static_cast<double>(b_row[c]);
      }
    }
    for (std::size_t c = 0; c < n; ++c) {
      out[i * n + c] = static_cast<float>(acc[c] < 0.0 ? 0.0 : acc[c]);
    }
  }
  return out;
}

std::vector<float> gemm_tc_reference(std::span<const float> A, std::span<const float> B,
                                     std::span<const float> bias, int M, int N, int K) {
  std::vector<std::size_t> rows(M > 0 ? static_cast<std::size_t>(M) : 0);
  std::iota(rows.begin(), rows.end(), std::size_t{0});
  return gemm_tc_reference_rows(A, B, bias, M, N, K, rows);
}

}  // namespace fuselens::kernels
