#include "gemm_bias_relu/reference.h"

#include <cstddef>
#include <stdexcept>
#include <string>

namespace fuselens::kernels {
namespace {

void require_length(const char* name, std::size_t actual, std::size_t expected) {
  if (actual != expected) {
    throw std::invalid_argument(std::string("gemm_bias_relu_reference: ") + name + " has " +
                                std::to_string(actual) + " elements, expected " +
                                std::to_string(expected));
  }
}

}  // namespace

std::vector<float> gemm_bias_relu_reference(std::span<const float> A, std::span<const float> B,
                                            std::span<const float> bias, int M, int N, int K) {
  if (M < 0 || N < 0 || K < 0) {
    throw std::invalid_argument("gemm_bias_relu_reference: negative size");
  }
  const auto m = static_cast<std::size_t>(M);
  const auto n = static_cast<std::size_t>(N);
  const auto k = static_cast<std::size_t>(K);
  require_length("A", A.size(), m * k);
  require_length("B", B.size(), k * n);
  require_length("bias", bias.size(), n);

  std::vector<float> out(m * n);
  std::vector<double> row(n);
  for (std::size_t r = 0; r < m; ++r) {
    for (std::size_t c = 0; c < n; ++c) {
      row[c] = static_cast<double>(bias[c]);
    }
    // r-k-c order: streams through rows of B, cache friendly.
    for (std::size_t kk = 0; kk < k; ++kk) {
      const double a = A[r * k + kk];
      const float* b_row = B.data() + kk * n;
      for (std::size_t c = 0; c < n; ++c) {
        row[c] += a * static_cast<double>(b_row[c]);
      }
    }
    for (std::size_t c = 0; c < n; ++c) {
      const double v = row[c];
      out[r * n + c] = static_cast<float>(v < 0.0 ? 0.0 : v);
    }
  }
  return out;
}

}  // namespace fuselens::kernels
