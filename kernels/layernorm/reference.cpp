#include "layernorm/reference.h"

#include <cmath>
#include <cstddef>
#include <stdexcept>
#include <string>

namespace fuselens::kernels {

std::vector<float> layernorm_reference(std::span<const float> x, std::span<const float> gamma,
                                       std::span<const float> beta, int rows, int cols,
                                       double eps) {
  if (rows < 0 || cols < 0 ||
      x.size() != static_cast<std::size_t>(rows) * static_cast<std::size_t>(cols) ||
      gamma.size() != static_cast<std::size_t>(cols) ||
      beta.size() != static_cast<std::size_t>(cols)) {
    throw std::invalid_argument("layernorm_reference: sizes do not match rows x cols = " +
                                std::to_string(rows) + " x " + std::to_string(cols));
  }
  const auto n = static_cast<std::size_t>(cols);
  std::vector<float> y(x.size());
  for (std::size_t r = 0; r < static_cast<std::size_t>(rows); ++r) {
    const float* row = x.data() + r * n;
    double sum = 0.0;
    for (std::size_t c = 0; c < n; ++c) sum += row[c];
    const double mean = sum / static_cast<double>(n);
    double squares = 0.0;
    for (std::size_t c = 0; c < n; ++c) {
      const double d = row[c] - mean;
      squares += d * d;
    }
    const double rstd = 1.0 / std::sqrt(squares / static_cast<double>(n) + eps);
    for (std::size_t c = 0; c < n; ++c) {
      y[r * n + c] = static_cast<float>((row[c] - mean) * rstd * gamma[c] + beta[c]);
    }
  }
  return y;
}

}  // namespace fuselens::kernels
